// ReAct (CoT@n): one chain of thought -> action -> observation until Finish, retried up to n times.
import * as Effect from "effect/Effect"
import { MalformedOutput } from "../llm/errors.ts"
import { LanguageModel } from "../llm/language-model.ts"
import { calibrating } from "../memory/calibrated-model.ts"
import { emit } from "../trace/events.ts"
import {
  asTrajectory,
  CHAIN_DEFAULTS,
  type ChainOptions,
  type ChainStep,
  makeChain,
  modelFailure,
  runChain
} from "./chain.ts"
import type { Method } from "./task.ts"

export interface ReactOptions extends ChainOptions {
  /** Chains tried at most (CoT@n); a give-up or a step limit starts the next one. */
  readonly tries?: number | undefined
}

export const REACT_DEFAULTS = { ...CHAIN_DEFAULTS, tries: 1 } as const

/** ReAct with up to `tries` chains (CoT@n). */
export const react =
  (options: ReactOptions = {}): Method =>
  (task) =>
    Effect.gen(function* () {
      const model = yield* LanguageModel
      const tries = options.tries ?? REACT_DEFAULTS.tries
      const chain = makeChain(task, options, model.info, "react.step")
      const calibrated = calibrating(model, chain.budget)
      const body = Effect.gen(function* () {
        let last: ReadonlyArray<ChainStep> = []
        for (let attempt = 1; attempt <= tries; attempt++) {
          const end = yield* Effect.result(runChain(chain))
          if (end._tag === "Failure") {
            const error = yield* modelFailure(end.failure)
            // A bad reply ends this try; an unavailable server ends the run.
            if (end.failure instanceof MalformedOutput && attempt < tries) continue
            return { chain: last, error }
          }
          last = end.success.steps
          if (end.success.kind === "answer") return { answer: end.success.answer, chain: last }
          yield* emit("backtrack", { reason: end.success.kind, attempt })
        }
        return { chain: last, error: `no answer after ${tries} ${tries === 1 ? "try" : "tries"}` }
      }).pipe(Effect.provideService(LanguageModel, calibrated))
      return yield* asTrajectory(task, `CoT@${tries}`, body)
    })
