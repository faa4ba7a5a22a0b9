// Prints the fault suite's figures: `node bench/faults/report.ts [--seed n] [--tasks n]`.
import { parseArgs } from "node:util"
import * as Effect from "effect/Effect"
import { formatModelOutputReport, MODEL_OUTPUT_DEFAULTS, runModelOutputFaults } from "./model-output.ts"

const { values } = parseArgs({ options: { seed: { type: "string" }, tasks: { type: "string" } } })
const report = await Effect.runPromise(
  runModelOutputFaults({
    seed: Number(values.seed ?? MODEL_OUTPUT_DEFAULTS.seed),
    tasks: Number(values.tasks ?? MODEL_OUTPUT_DEFAULTS.tasks)
  })
)
console.log(formatModelOutputReport(report))
for (const m of report.mismatches.slice(0, 10)) console.log(`  mismatch: ${m}`)
process.exitCode = report.crashes === 0 && report.lost === 0 && report.mismatches.length === 0 ? 0 : 1
