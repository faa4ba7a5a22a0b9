// The task a simulated model is answering for, provided per task by the runner or the perf harness.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { SimQuery } from "./knowledge.ts"

/**
 * The ToolBench query being solved (the runner's `BenchQuery` fits). Read by the simulated model
 * from the calling fiber's context; without it the model still answers every role validly, only
 * without knowing which APIs and arguments the task needs.
 */
export const CurrentTask = Context.Reference<SimQuery | undefined>("smurfs/bench/sim/CurrentTask", {
  defaultValue: () => undefined
})

/** Run `effect` with `query` as the current task. */
export const withCurrentTask =
  (query: SimQuery | undefined) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.provideService(effect, CurrentTask, query)
