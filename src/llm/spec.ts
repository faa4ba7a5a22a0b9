// Model specs ("ollama:qwen2.5:7b", "openai:gpt-4o-mini", "scripted:replies.json", "sim") to LanguageModel layers,
// through the providers' registry: this module knows no provider by name.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { InvalidModelSpec, type ModelNotFound } from "./errors.ts"
import { LanguageModel } from "./language-model.ts"
import { modelLanesLayer } from "./model-lanes.ts"
import type { ModelOptions } from "./model-options.ts"
import { type Provider, registeredProviders, registeredSpec } from "./providers.ts"
// the library's own providers, registered (and listed) first
import "./providers/ollama.ts"
import "./providers/openai.ts"
import "./providers/scripted.ts"
import "./providers/llama.ts"

export {
  DEFAULT_MODEL_SPEC,
  defaultModelSpec,
  MODEL_DEFAULTS,
  type ModelOptions,
  parseEndpoint,
  parseThink,
  resilienceSettings,
  THINK_HELP,
  type Think
} from "./model-options.ts"
export { type Provider, registerProvider } from "./providers.ts"

/** A parsed spec: the provider, the rest after its prefix, and the rest again under the provider's name for it (`model`, `file`). */
export type ModelSpec = { readonly provider: string; readonly rest: string; readonly registered: Provider } & {
  readonly [restName: string]: unknown
}

/** The providers a spec may name before its first colon: the library's own and the registered ones (the bench's `sim`). */
export const providerNames = (): Array<string> => registeredProviders().map((p) => p.name)

/** Read `provider:rest`; model names keep their own colons (`ollama:qwen2.5:7b`). */
export const parseModelSpec = (spec: string): Effect.Effect<ModelSpec, InvalidModelSpec> =>
  Effect.suspend((): Effect.Effect<ModelSpec, InvalidModelSpec> => {
    const trimmed = spec.trim()
    const found = registeredSpec(trimmed)
    if (found) {
      const { provider, rest } = found
      const refused = provider.refuse?.(rest)
      if (refused !== undefined) return Effect.fail(new InvalidModelSpec({ spec, reason: refused }))
      return Effect.succeed({
        provider: provider.name,
        rest,
        [provider.restName ?? "options"]: rest,
        registered: provider
      })
    }
    const colon = trimmed.indexOf(":")
    if (colon < 0) {
      const guess = registeredProviders().find((p) => p.claims?.(trimmed) === true)
      return Effect.fail(
        new InvalidModelSpec({
          spec,
          reason: guess ? `no provider given (did you mean "${guess.name}:${trimmed}"?)` : "no provider given"
        })
      )
    }
    const prefix = trimmed.slice(0, colon).toLowerCase()
    return Effect.fail(
      new InvalidModelSpec({ spec, reason: `unknown provider "${prefix}" (known: ${providerNames().join(", ")})` })
    )
  })

/**
 * A LanguageModel layer for a spec, built by the provider it names (servers wrapped in resilience, or a pool of
 * `endpoints`), with model lanes over it when `options.lanes` asks for them.
 */
export const modelLayer = (spec: string, options: ModelOptions = {}): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  Layer.unwrap(
    Effect.map(parseModelSpec(spec), (parsed) => {
      const served = parsed.registered.layer(parsed.rest, spec.trim(), options)
      return options.lanes === undefined
        ? served
        : Layer.provide(
            modelLanesLayer(lanesOf(parsed, options), { graceMs: options.laneGraceMs, onWait: options.onLaneWait }),
            served
          )
    })
  )

/** How many lanes `options.lanes` means for a parsed spec: a number as given; `auto`, the server's slots when known. */
const lanesOf = (parsed: ModelSpec, options: ModelOptions): Effect.Effect<number | undefined> =>
  typeof options.lanes === "number"
    ? Effect.succeed(options.lanes)
    : options.lanes === undefined || (options.endpoints !== undefined && options.endpoints.length > 0)
      ? Effect.succeed(undefined)
      : (parsed.registered.slots?.(parsed.rest, options) ?? Effect.succeed(undefined))

/** A model of its own (its own server), apart from the LanguageModel in context: e.g. the tool simulator of a run. */
export const standaloneModel = (spec: string, options: ModelOptions = {}) =>
  Effect.provide(Effect.service(LanguageModel), modelLayer(spec, options))

/**
 * Whether a spec names nothing of the machine that builds it (no script file, no data folder): the
 * model a queue job may name. Servers' addresses and keys never come from a spec, only from where it is built.
 */
export const isPortableSpec = (spec: string): boolean => {
  const found = registeredSpec(spec)
  return found?.provider.portable(found.rest) === true
}

/** Whether a spec is a model for tests and measurements (a script, the simulator): never the judge to suggest. */
export const isTestModelSpec = (spec: string): boolean => registeredSpec(spec)?.provider.testModel === true

/**
 * Whether the model a spec names is on its server, asked before a run writes anything: fails with ModelNotFound
 * (naming the models the server has) when the server says it lacks the model and would refuse it; else the warnings
 * to show (a server that serves any name, llama.cpp's; a server window smaller than --num-ctx). Anything else (the
 * server down, a provider that does not list models, a pool) passes here and meets the run's own handling.
 */
export const checkModelPresent = (
  spec: string,
  options: ModelOptions = {}
): Effect.Effect<ReadonlyArray<string>, ModelNotFound> =>
  modelPresence(spec, options).pipe(
    // a server that does not answer at once is the run's to meet (its timeouts, --stop-after), not a missing model
    Effect.timeoutOption(PRESENCE_CHECK_MS),
    Effect.map((warnings) => (warnings._tag === "Some" ? warnings.value : []))
  )

/** How long the model check before a run waits for the server. */
const PRESENCE_CHECK_MS = 3000

const modelPresence = (spec: string, options: ModelOptions): Effect.Effect<ReadonlyArray<string>, ModelNotFound> =>
  Effect.gen(function* () {
    if (options.endpoints !== undefined && options.endpoints.length > 0) return []
    const parsed = yield* Effect.orElseSucceed(parseModelSpec(spec), () => undefined)
    return parsed?.registered.present === undefined ? [] : yield* parsed.registered.present(parsed.rest, options)
  })
