// The model providers: each one module that registers its spec prefix, how to build its layer, its doctor check
// and its error wording. The library registers ollama, openai and scripted (src/llm/providers/); the bench, `sim`.
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type { OverflowServer } from "./context-overflow.ts"
import type { InvalidModelSpec, ModelNotFound } from "./errors.ts"
import type { LanguageModel } from "./language-model.ts"
import type { ModelOptions } from "./model-options.ts"

/** What a provider's doctor reports about a spec before the one structured call (e.g. "no server involved"). */
export interface ProviderCheck {
  readonly name: string
  readonly status: "pass" | "warn" | "fail" | "skip"
  readonly detail: string
  readonly advice?: string | undefined
}

/** A provider's doctor checks. */
export interface ProviderChecks {
  readonly checks: ReadonlyArray<ProviderCheck>
  /** Set when the setup cannot be used (a bad spec, a server that cannot serve the model): the structured call is not tried. */
  readonly problem?: "bad-spec" | "unavailable" | "failed" | undefined
  /** Said instead of the structured call when the model cannot answer it although nothing is wrong (a script without a reply for it). */
  readonly instead?: ProviderCheck | undefined
}

/** What the model layer's errors say of a provider's server, so that advice names the provider's own commands and settings. */
export interface ProviderWording {
  /** Nobody answers at `host`: what to start or set. */
  readonly unreachable: (host: string) => string
  /** The server lacks `model`: how to get it. */
  readonly modelMissing: (model: string) => string
  /** The setting that says where the server listens, for "check the address" advice (`OLLAMA_HOST`). */
  readonly address: string
  /** The same for a path that answers 404 (`OPENAI_BASE_URL (usually ending in /v1)`); default `address`. */
  readonly addressPath?: string | undefined
  /**
   * What fixes a prompt over the context window: `server` is the server that refused it (undefined: smurfs' own
   * estimate found it), `contextTokens` the server's window when it said. Default: raise --num-ctx.
   */
  readonly contextAdvice?:
    | ((server: OverflowServer | undefined, contextTokens: number | undefined) => string)
    | undefined
}

export interface Provider {
  /** The spec's prefix, before the first colon (`sim` in `sim:latency=10ms`). */
  readonly name: string
  /** How a spec of it is written, for messages (`ollama:<model>`). */
  readonly usage: string
  /** Whether the bare name is a whole spec (`sim`). */
  readonly bare?: boolean | undefined
  /** What the rest after the prefix is called in a parsed spec (`model`, `file`); default `options`. */
  readonly restName?: string | undefined
  /** Why the rest after the prefix cannot be used (e.g. the model name is missing); undefined when it can. */
  readonly refuse?: ((rest: string) => string | undefined) | undefined
  /** Whether a spec written without any prefix looks like one of its (a `.json` file is a script), for "did you mean". */
  readonly claims?: ((bare: string) => boolean) | undefined
  /** The LanguageModel of `name:rest`. */
  readonly layer: (rest: string, spec: string, options: ModelOptions) => Layer.Layer<LanguageModel, InvalidModelSpec>
  /**
   * The settings a model of `rest` is built from, the environment applied (the address OLLAMA_HOST names, the
   * concurrency OLLAMA_NUM_PARALLEL gives), as text: calls of `solve` at the same time whose spec, options and
   * settings agree share one built model, so one limit of requests in flight per server. Absent for a model that
   * holds a run's own state (a script's position): each call then builds its own.
   */
  readonly settingsKey?: ((rest: string, options: ModelOptions) => string) | undefined
  /** What `smurfs doctor` checks before the structured call. */
  readonly doctor: (rest: string, options: ModelOptions) => Effect.Effect<ProviderChecks>
  /**
   * Whether the server has the model, asked before a run: fails with ModelNotFound only when the server says it lacks
   * it and would refuse it; else warnings to show (a server that serves any name, a window smaller than --num-ctx).
   */
  readonly present?:
    | ((rest: string, options: ModelOptions) => Effect.Effect<ReadonlyArray<string>, ModelNotFound>)
    | undefined
  /** Whether `rest` names nothing of the machine that builds it (no file, no address), so another machine may be given the spec (a queue job). */
  readonly portable: (rest: string) => boolean
  /** A model for tests and measurements: never suggested as a judge. */
  readonly testModel?: boolean | undefined
  /**
   * The requests the server a spec names serves side by side with a cache each (llama.cpp's slots, the embedded
   * engine's sequences), when known: what `lanes: "auto"` takes. Undefined: unknown, no lanes.
   */
  readonly slots?: ((rest: string, options: ModelOptions) => Effect.Effect<number | undefined>) | undefined
  /** Requests in flight at once against one of its servers when nothing says otherwise. */
  readonly concurrency?: (() => number) | undefined
  /** What errors of its servers say; without it, generic wording. */
  readonly wording?: ProviderWording | undefined
}

const registered = new Map<string, Provider>()

/**
 * Add a provider (registering the same name again replaces it); returns how to take it out again (a test's own
 * provider). Import it from spec.ts, so that the library's own come first in lists.
 */
export const registerProvider = (provider: Provider): (() => void) => {
  const key = provider.name.toLowerCase()
  registered.set(key, provider)
  return () => {
    if (registered.get(key) === provider) registered.delete(key)
  }
}

/** The registered provider of that prefix, if any. */
export const registeredProvider = (name: string): Provider | undefined => registered.get(name.toLowerCase())

/** The registered providers, in the order they were registered. */
export const registeredProviders = (): Array<Provider> => [...registered.values()]

/** The registered provider a spec names and the rest after its prefix; undefined when none does. */
export const registeredSpec = (spec: string): { readonly provider: Provider; readonly rest: string } | undefined => {
  const trimmed = spec.trim()
  const colon = trimmed.indexOf(":")
  const name = colon < 0 ? trimmed : trimmed.slice(0, colon)
  const provider = registeredProvider(name)
  if (!provider || (colon < 0 && !provider.bare)) return undefined
  return { provider, rest: colon < 0 ? "" : trimmed.slice(colon + 1).trim() }
}

const GENERIC_WORDING: ProviderWording = {
  unreachable: (host) =>
    `Cannot reach the model server at ${host}. Start the server, or check the address it was given.`,
  modelMissing: (model) =>
    `The server does not serve the model "${model}". Check the model's name, or load it on the server.`,
  address: "the server's address"
}

/** What errors say of a provider's server: its own wording, else generic. */
export const providerWording = (name: string): ProviderWording => registeredProvider(name)?.wording ?? GENERIC_WORDING
