// The demo tool library: deterministic, offline tools written for examples, tests and the demo benchmark.
import { makeToolLibrary } from "../library.ts"
import type { ToolLibrary } from "../tool.ts"
import { calculator } from "./calculator.ts"
import { convertCurrencyTool } from "./convert-currency.ts"
import { convertUnitsTool } from "./convert-units.ts"
import { dateDiffTool } from "./date-diff.ts"
import { lookupFactTool } from "./lookup-fact.ts"

/** The library named "demo": calculator, convert_units, convert_currency, lookup_fact, date_diff. */
export const demoLibrary = (): ToolLibrary =>
  makeToolLibrary("demo", [calculator, convertUnitsTool, convertCurrencyTool, lookupFactTool, dateDiffTool])
