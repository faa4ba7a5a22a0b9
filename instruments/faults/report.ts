// Prints the fault suite's figures: `node instruments/faults/report.ts [--seed n] [--tasks n] [--executor three-call|fused-native|fused-json]`.
import { parseArgs } from "node:util"
import * as Effect from "effect/Effect"
import { formatModelOutputReport, MODEL_OUTPUT_DEFAULTS, runModelOutputFaults } from "./model-output.ts"

/** The executors the suite runs: the paper's three requests per step, and the fused one in both tool-calling modes. */
const RUNS = {
  "three-call": { executor: "three-call" },
  "fused-native": { executor: "fused", toolCalling: "native" },
  "fused-json": { executor: "fused", toolCalling: "json" }
} as const

const { values } = parseArgs({
  options: { seed: { type: "string" }, tasks: { type: "string" }, executor: { type: "string", multiple: true } }
})
const names = (values.executor ?? Object.keys(RUNS)) as ReadonlyArray<keyof typeof RUNS>
const unknown = names.filter((n) => !(n in RUNS))
if (unknown.length > 0) {
  console.error(`unknown --executor ${unknown.join(", ")}: use ${Object.keys(RUNS).join(", ")}`)
  process.exit(2)
}
let failed = false
for (const name of names) {
  const report = await Effect.runPromise(
    runModelOutputFaults({
      seed: Number(values.seed ?? MODEL_OUTPUT_DEFAULTS.seed),
      tasks: Number(values.tasks ?? MODEL_OUTPUT_DEFAULTS.tasks),
      ...RUNS[name]
    })
  )
  console.log(formatModelOutputReport(report))
  for (const m of report.mismatches.slice(0, 10)) console.log(`  mismatch: ${m}`)
  console.log("")
  failed ||= report.crashes > 0 || report.lost > 0 || report.mismatches.length > 0
}
process.exitCode = failed ? 1 : 0
