// Registers the simulated model as the `sim` provider: `--model sim[:options]` wherever a model spec is read.
// The model itself is loaded on first use, so a command that never builds it does not pay for loading it.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { InvalidModelSpec } from "../../src/llm/errors.ts"
import type { LanguageModel } from "../../src/llm/language-model.ts"
// through spec.ts, so that the library's own providers are registered (and listed) before it
import { registerProvider } from "../../src/llm/spec.ts"

const simLayer = (spec: string): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  Layer.unwrap(
    Effect.tryPromise({
      try: async () => (await import("./model.ts")).simModelLayer(spec),
      catch: (e) =>
        new InvalidModelSpec({
          spec,
          reason: `the simulated model is unavailable in this build (${(e as Error).message})`
        })
    })
  )

registerProvider({
  name: "sim",
  usage: "sim[:options]",
  bare: true,
  layer: (_rest, spec) => simLayer(spec),
  doctor: () =>
    Effect.succeed({ checks: [{ name: "server", status: "skip", detail: "simulated model; no server involved" }] }),
  // data=<dir> names a folder of the machine that builds it
  portable: (rest) => !rest.split(",").some((part) => part.trim().startsWith("data=")),
  testModel: true
})
