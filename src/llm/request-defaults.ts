// Sampling settings a run gives every request that sets none, so that the call cache (which keys a
// reply by the request's own temperature and seed) never serves a reply sampled under other settings.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type GenerateOptions, LanguageModel, type LanguageModelShape } from "./language-model.ts"

/** `inner` with `defaults` filled into each request's options where the request sets none. */
export const withRequestDefaults = (
  inner: LanguageModelShape,
  defaults: Pick<GenerateOptions, "temperature" | "seed">
): LanguageModelShape =>
  LanguageModel.of({
    info: inner.info,
    generate: (request) =>
      inner.generate({
        ...request,
        options: {
          ...(defaults.temperature !== undefined ? { temperature: defaults.temperature } : {}),
          ...(defaults.seed !== undefined ? { seed: defaults.seed } : {}),
          ...request.options
        }
      })
  })

/** A LanguageModel that fills `defaults` into each request's options where the request sets none. */
export const requestDefaultsLayer = (
  defaults: Pick<GenerateOptions, "temperature" | "seed">
): Layer.Layer<LanguageModel, never, LanguageModel> =>
  Layer.effect(
    LanguageModel,
    Effect.gen(function* () {
      return withRequestDefaults(yield* LanguageModel, defaults)
    })
  )
