// A model whose replies teach a context budget the model's characters a token (Smurfs and the baselines share it).
import * as Effect from "effect/Effect"
import { LanguageModel, type LanguageModelShape } from "../llm/language-model.ts"
import { type ContextBudget, requestChars } from "./context-budget.ts"

/**
 * `model`, with every reply's reported prompt tokens calibrating `budget` (see `ContextBudget.calibrate`).
 * A cached reply carries the usage of another run's request, so it teaches nothing.
 */
export const calibrating = (model: LanguageModelShape, budget: ContextBudget): LanguageModelShape =>
  LanguageModel.of({
    info: model.info,
    // one step on the reply, not a tap running an effect: this runs on every model call
    generate: (request) =>
      Effect.map(model.generate(request), (r) => {
        if (!r.cached) budget.calibrate(requestChars(request), r.usage.promptTokens)
        return r
      })
  })
