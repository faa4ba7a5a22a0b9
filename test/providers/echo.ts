// A provider written as a user would add one: `echo:<reply>` answers every request with <reply>. Nothing else in the
// tree names it; importing this module registers it (its test shows spec, layer, doctor and wording all work).
import { Effect, Layer } from "effect"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { registerProvider } from "../../src/llm/spec.ts"

/** Takes the provider out again. */
export const unregisterEcho = registerProvider({
  name: "echo",
  usage: "echo:<reply>",
  restName: "reply",
  refuse: (rest) => (rest === "" ? 'the reply after "echo:" is missing' : undefined),
  layer: (reply, spec) =>
    Layer.succeed(
      LanguageModel,
      LanguageModel.of({
        info: { spec, provider: "echo", model: "echo", contextTokens: 4096, supportsTools: false },
        generate: () =>
          Effect.succeed({ text: reply, usage: { promptTokens: 0, completionTokens: 1 }, model: "echo", durationMs: 0 })
      })
    ),
  doctor: (reply) =>
    Effect.succeed({
      checks: [{ name: "server", status: "skip", detail: `echoes ${JSON.stringify(reply)}; no server involved` }]
    }),
  portable: () => true,
  wording: {
    unreachable: (host) => `Nobody echoes at ${host}. Start the echo server with \`echo-serve\`.`,
    modelMissing: (model) => `The echo server has no "${model}".`,
    address: "ECHO_HOST"
  }
})
