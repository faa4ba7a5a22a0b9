import * as Effect from "effect/Effect"
import { perfDataDir } from "./args.ts"
import { measureConcurrency } from "./concurrency.ts"
import { loadSetup } from "./harness.ts"

const variants = [
  { label: "smurfs", method: "smurfs" },
  { label: "smurfs rethink", method: "smurfs", rules: { rethink: true } },
  { label: "smurfs short", method: "smurfs", rules: { answerShortResponses: 300 } },
  { label: "fused json", method: "smurfs", executor: "fused", json: true },
  { label: "fused json short", method: "smurfs", executor: "fused", json: true, rules: { answerShortResponses: 300 } },
  { label: "react", method: "react" }
] as const
const program = Effect.gen(function* () {
  const setup = yield* loadSetup(perfDataDir(undefined))
  const rows = yield* measureConcurrency(
    setup,
    setup.queries.slice(0, 64),
    () => {},
    variants as any,
    [{ kind: "slots", slots: 4, similarity: 0.1 }],
    [1]
  )
  for (const r of rows)
    console.log(
      r.method.padEnd(20),
      r.answered.toFixed(3),
      r.callsPerTask.toFixed(1),
      Math.round(r.uncachedPerTask),
      r.outputPerTask.toFixed(0),
      r.gpuSecondsPerTask.toFixed(2)
    )
})
await Effect.runPromise(program as any)
