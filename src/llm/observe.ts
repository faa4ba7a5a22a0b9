// Watch every model call as it starts and ends (progress displays, counters), in front of any LanguageModel.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type GenerateResponse, LanguageModel, type LanguageModelShape } from "./language-model.ts"

export interface ModelCallObserver {
  /** A call starts (retries and backoff of the provider happen before it ends). */
  readonly onStart?: ((role: string) => void) | undefined
  /** A call ended with a reply (`response`) or a failure (undefined). */
  readonly onEnd?: ((role: string, response: GenerateResponse | undefined) => void) | undefined
}

/** The model with the observer told of each call; the calls themselves are unchanged. */
export const observeModel = (inner: LanguageModelShape, observer: ModelCallObserver): LanguageModelShape => ({
  info: inner.info,
  generate: (request) =>
    Effect.suspend(() => {
      observer.onStart?.(request.role)
      return inner.generate(request).pipe(
        Effect.tap((response) => Effect.sync(() => observer.onEnd?.(request.role, response))),
        Effect.onError(() => Effect.sync(() => observer.onEnd?.(request.role, undefined)))
      )
    })
})

/** A Layer putting the observer in front of the LanguageModel below it: `Layer.provide(observedModelLayer(o), providerLayer)`. */
export const observedModelLayer = (observer: ModelCallObserver): Layer.Layer<LanguageModel, never, LanguageModel> =>
  Layer.effect(
    LanguageModel,
    Effect.map(LanguageModel, (inner: LanguageModelShape) => observeModel(inner, observer))
  )
