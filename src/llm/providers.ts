// Model providers beyond the library's own (ollama, openai, scripted): a module registers its spec prefix, how
// to build its layer, its doctor check and whether a spec of it is portable. The bench registers `sim` this way.
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type { InvalidModelSpec } from "./errors.ts"
import type { LanguageModel } from "./language-model.ts"

/** What a provider's doctor reports about a spec before the one structured call (e.g. "no server involved"). */
export interface ProviderCheck {
  readonly name: string
  readonly status: "pass" | "warn" | "fail" | "skip"
  readonly detail: string
  readonly advice?: string | undefined
}

export interface Provider<Options = unknown> {
  /** The spec's prefix, before the first colon (`sim` in `sim:latency=10ms`). */
  readonly name: string
  /** Whether the bare name is a whole spec (`sim`). */
  readonly bare?: boolean | undefined
  /** The LanguageModel of `name:rest`; the options are the library's ModelOptions (a provider may ignore them). */
  readonly layer: (rest: string, spec: string, options: Options) => Layer.Layer<LanguageModel, InvalidModelSpec>
  /** What `smurfs doctor` checks before the structured call. */
  readonly doctor: (rest: string) => Effect.Effect<ReadonlyArray<ProviderCheck>>
  /** Whether `rest` names nothing of the machine that builds it (no file, no address), so another machine may be given the spec (a queue job). */
  readonly portable: (rest: string) => boolean
  /** A model for tests and measurements: never suggested as a judge. */
  readonly testModel?: boolean | undefined
}

const registered = new Map<string, Provider<never>>()

/** Add a provider (registering the same name again replaces it). */
export const registerProvider = <O>(provider: Provider<O>): void => {
  registered.set(provider.name.toLowerCase(), provider as Provider<never>)
}

/** The registered provider of that prefix, if any. */
export const registeredProvider = (name: string): Provider<unknown> | undefined => registered.get(name.toLowerCase()) as Provider<unknown> | undefined

/** The names of the registered providers. */
export const registeredProviders = (): Array<string> => [...registered.keys()]

/** The registered provider a spec names and the rest after its prefix; undefined for the library's own. */
export const registeredSpec = (spec: string): { readonly provider: Provider<unknown>; readonly rest: string } | undefined => {
  const trimmed = spec.trim()
  const colon = trimmed.indexOf(":")
  const name = colon < 0 ? trimmed : trimmed.slice(0, colon)
  const provider = registeredProvider(name)
  if (!provider || (colon < 0 && !provider.bare)) return undefined
  return { provider, rest: colon < 0 ? "" : trimmed.slice(colon + 1).trim() }
}
