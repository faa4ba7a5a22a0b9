// Model specs ("ollama:qwen2.5:7b", "openai:gpt-4o-mini", "scripted:replies.json") to LanguageModel layers.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { InvalidModelSpec, ModelNotFound } from "./errors.ts"
import { LanguageModel } from "./language-model.ts"
import { normalizeOllamaHost, ollamaCapabilities, ollamaModel, ollamaModels, type OllamaSettings, ollamaVersion } from "./ollama.ts"
import { listOpenAIModels, makeOpenAIModel, type OpenAISettings } from "./openai.ts"
import { makePool, type PoolEndpoint } from "./pool.ts"
import { type Provider, registeredProviders, registeredSpec } from "./providers.ts"
import { resilient, type ResilienceOptions } from "./resilience.ts"
import { scriptedFileLayer } from "./scripted.ts"

/** How models are built and called. Every field is optional; `MODEL_DEFAULTS` holds the defaults. */
export interface ModelOptions {
  /** Context window in tokens, sent as Ollama's `num_ctx` on every request (a constant, so the server never reloads the model) and used as the prompt budget. */
  readonly numCtx?: number | undefined
  /** How long Ollama keeps the model loaded after a request (`keep_alive`), e.g. "30m" or seconds. */
  readonly keepAlive?: string | number | undefined
  /** Per-request timeout in milliseconds; a request may set its own. */
  readonly timeoutMs?: number | undefined
  /** Sampling seed, fixed so that runs are repeatable. */
  readonly seed?: number | undefined
  /** Sampling temperature; 0 so that runs are repeatable. */
  readonly temperature?: number | undefined
  /** Requests in flight at once against one server; set it to the server's OLLAMA_NUM_PARALLEL. Default: OLLAMA_NUM_PARALLEL from the environment, else 1 for Ollama; 4 for OpenAI-compatible servers. */
  readonly concurrency?: number | undefined
  /** Retries of an overloaded server (429/503) before the error reaches the caller. */
  readonly maxRetries?: number | undefined
  /** First retry delay in milliseconds; later ones double, with jitter. */
  readonly retryBaseMs?: number | undefined
  /** The longest single wait between retries in milliseconds, also the cap on a server's Retry-After. */
  readonly maxRetryDelayMs?: number | undefined
  /** Ollama's address; default OLLAMA_HOST, else http://127.0.0.1:11434. */
  readonly host?: string | undefined
  /** The OpenAI-compatible server's /v1 URL; default OPENAI_BASE_URL, else Ollama's http://127.0.0.1:11434/v1. */
  readonly baseURL?: string | undefined
  /** API key for the OpenAI-compatible server; default OPENAI_API_KEY, else a placeholder local servers accept. */
  readonly apiKey?: string | undefined
  /** Whether the model takes native tool calls; default: asked from Ollama's /api/show, true elsewhere. */
  readonly supportsTools?: boolean | undefined
  /**
   * Reasoning models (qwen3, deepseek-r1, gpt-oss): thinking on (true), off (false) or a level. Ollama
   * gets `think`; an OpenAI-compatible server gets `reasoning_effort` for a level and the chat template's
   * `enable_thinking` for on/off (vLLM, llama.cpp). Default: the server's own default. Thinking is
   * recorded in the trace and never read as the answer, whatever this says.
   */
  readonly think?: Think | undefined
  /**
   * Several servers of the same model, as `url` or `url*N` (N: the requests it serves at once, its
   * OLLAMA_NUM_PARALLEL; default `concurrency`). Requests go to the least-loaded healthy one; see `makePool`.
   * Replaces `host` / `baseURL`.
   */
  readonly endpoints?: ReadonlyArray<string> | undefined
}

/** Thinking of a reasoning model: on, off, or an effort level. */
export type Think = boolean | "low" | "medium" | "high"

const THINK_WORDS: Readonly<Record<string, Think>> = { on: true, true: true, off: false, false: false, low: "low", medium: "medium", high: "high" }

/** The `--think` value: on|off|low|medium|high; undefined for anything else. */
export const parseThink = (value: string): Think | undefined => THINK_WORDS[value.trim().toLowerCase()]

/** The help text of `--think`, shared by the commands that take it. */
export const THINK_HELP = "reasoning models: thinking on, off or an effort level (Ollama think; OpenAI-compatible reasoning_effort / enable_thinking); default: the server's"

/** The defaults of `ModelOptions`, in one place. */
export const MODEL_DEFAULTS = {
  numCtx: 8192,
  keepAlive: "30m",
  timeoutMs: 120_000,
  seed: 42,
  temperature: 0,
  concurrency: { ollama: 1, openai: 4 },
  maxRetries: 4,
  retryBaseMs: 500,
  maxRetryDelayMs: 30_000,
  openaiBaseURL: "http://127.0.0.1:11434/v1",
  /** Local OpenAI-compatible servers (Ollama, llama.cpp) want some key and ignore its value. */
  openaiApiKey: "ollama"
} as const

/** The default spec of the CLI when neither --model nor SMURFS_MODEL is given. */
export const DEFAULT_MODEL_SPEC = "ollama:qwen2.5:7b"

/** The spec used when none is given: SMURFS_MODEL, else the default local model. */
export const defaultModelSpec = (environment: NodeJS.ProcessEnv = process.env): string => {
  const fromEnv = environment["SMURFS_MODEL"]?.trim()
  return fromEnv && fromEnv.length > 0 ? fromEnv : DEFAULT_MODEL_SPEC
}

/** A parsed spec. */
export type ModelSpec =
  | { readonly provider: "ollama"; readonly model: string }
  | { readonly provider: "openai"; readonly model: string }
  | { readonly provider: "scripted"; readonly file: string }
  | { readonly provider: string; readonly options: string; readonly registered: Provider<unknown> }

/** The library's own providers. */
export const PROVIDERS = ["ollama", "openai", "scripted"] as const

/** The providers a spec may name before its first colon: the library's own and the registered ones (the bench's `sim`). */
export const providerNames = (): Array<string> => [...PROVIDERS, ...registeredProviders()]

/** Read `provider:rest`; model names keep their own colons (`ollama:qwen2.5:7b`). */
export const parseModelSpec = (spec: string): Effect.Effect<ModelSpec, InvalidModelSpec> =>
  Effect.suspend((): Effect.Effect<ModelSpec, InvalidModelSpec> => {
    const trimmed = spec.trim()
    const extra = registeredSpec(trimmed)
    if (extra) return Effect.succeed({ provider: extra.provider.name, options: extra.rest, registered: extra.provider })
    const colon = trimmed.indexOf(":")
    if (colon < 0)
      return Effect.fail(
        new InvalidModelSpec({ spec, reason: `no provider given (did you mean "${/\.json$/i.test(trimmed) ? "scripted" : "ollama"}:${trimmed}"?)` })
      )
    const provider = trimmed.slice(0, colon).toLowerCase()
    const rest = trimmed.slice(colon + 1).trim()
    switch (provider) {
      case "ollama":
      case "openai":
        return rest.length > 0
          ? Effect.succeed<ModelSpec>(provider === "ollama" ? { provider, model: rest } : { provider, model: rest })
          : Effect.fail(new InvalidModelSpec({ spec, reason: `the model name after "${provider}:" is missing` }))
      case "scripted":
        return rest.length > 0
          ? Effect.succeed({ provider, file: rest } as const)
          : Effect.fail(new InvalidModelSpec({ spec, reason: 'the script file after "scripted:" is missing' }))
      default:
        return Effect.fail(new InvalidModelSpec({ spec, reason: `unknown provider "${provider}" (known: ${providerNames().join(", ")})` }))
    }
  })

const env = (name: string): string | undefined => {
  const value = process.env[name]
  return value !== undefined && value.trim() !== "" ? value.trim() : undefined
}

/** Ollama settings for a model, defaults and environment applied. */
export const ollamaSettings = (model: string, options: ModelOptions = {}): OllamaSettings => ({
  model,
  host: normalizeOllamaHost(options.host ?? env("OLLAMA_HOST")),
  numCtx: options.numCtx ?? MODEL_DEFAULTS.numCtx,
  keepAlive: options.keepAlive ?? MODEL_DEFAULTS.keepAlive,
  timeoutMs: options.timeoutMs ?? MODEL_DEFAULTS.timeoutMs,
  seed: options.seed ?? MODEL_DEFAULTS.seed,
  temperature: options.temperature ?? MODEL_DEFAULTS.temperature,
  supportsTools: options.supportsTools,
  think: options.think
})

/** OpenAI-compatible settings for a model, defaults and environment applied. */
export const openaiSettings = (model: string, options: ModelOptions = {}): OpenAISettings => ({
  model,
  baseURL: (options.baseURL ?? env("OPENAI_BASE_URL") ?? MODEL_DEFAULTS.openaiBaseURL).replace(/\/+$/, ""),
  apiKey: options.apiKey ?? env("OPENAI_API_KEY") ?? MODEL_DEFAULTS.openaiApiKey,
  numCtx: options.numCtx ?? MODEL_DEFAULTS.numCtx,
  timeoutMs: options.timeoutMs ?? MODEL_DEFAULTS.timeoutMs,
  seed: options.seed ?? MODEL_DEFAULTS.seed,
  temperature: options.temperature ?? MODEL_DEFAULTS.temperature,
  supportsTools: options.supportsTools,
  think: options.think
})

/** OLLAMA_NUM_PARALLEL when this machine runs the server too: the number of requests Ollama serves at once. */
const ollamaParallel = (): number | undefined => {
  const value = Number(env("OLLAMA_NUM_PARALLEL"))
  return Number.isInteger(value) && value > 0 ? value : undefined
}

/** Resilience settings of a server model, defaults and environment applied. */
export const resilienceSettings = (provider: "ollama" | "openai", host: string, options: ModelOptions = {}): ResilienceOptions => ({
  concurrency: options.concurrency ?? (provider === "ollama" ? ollamaParallel() : undefined) ?? MODEL_DEFAULTS.concurrency[provider],
  maxRetries: options.maxRetries ?? MODEL_DEFAULTS.maxRetries,
  retryBaseMs: options.retryBaseMs ?? MODEL_DEFAULTS.retryBaseMs,
  maxRetryDelayMs: options.maxRetryDelayMs ?? MODEL_DEFAULTS.maxRetryDelayMs,
  timeoutMs: options.timeoutMs ?? MODEL_DEFAULTS.timeoutMs,
  endpoint: `${provider}:${host}`
})

/** `url` or `url*N` of --endpoints: the address and the requests it serves at once. */
export const parseEndpoint = (text: string): Effect.Effect<{ readonly url: string; readonly concurrency: number | undefined }, InvalidModelSpec> =>
  Effect.suspend(() => {
    const match = /^(.*?)(?:\*(\d+))?$/.exec(text.trim())
    const url = match?.[1]?.trim() ?? ""
    const concurrency = match?.[2] === undefined ? undefined : Number(match[2])
    if (!/^https?:\/\/[^\s/]+/.test(url) || concurrency === 0)
      return Effect.fail(new InvalidModelSpec({ spec: text, reason: "an endpoint is http(s)://host:port, optionally followed by *N for the requests it serves at once (e.g. http://gpu1:11434*2)" }))
    return Effect.succeed({ url, concurrency })
  })

/** One endpoint of a pool: the provider's model at `url`, with its own resilience (semaphore, timeout, retries) and probe. */
const poolEndpoint = (provider: "ollama" | "openai", model: string, endpoint: string, options: ModelOptions): Effect.Effect<PoolEndpoint, InvalidModelSpec> =>
  Effect.gen(function* () {
    const { url, concurrency } = yield* parseEndpoint(endpoint)
    const own = { ...options, concurrency: concurrency ?? options.concurrency }
    if (provider === "ollama") {
      const settings = ollamaSettings(model, { ...own, host: url })
      const served = yield* Effect.flatMap(ollamaModel(settings), (m) => resilient(m, resilienceSettings("ollama", settings.host, own)))
      return { name: url, concurrency: resilienceSettings("ollama", settings.host, own).concurrency, model: served, probe: ollamaVersion(settings) }
    }
    const settings = openaiSettings(model, { ...own, baseURL: url })
    const served = yield* resilient(makeOpenAIModel(settings), resilienceSettings("openai", settings.baseURL, own))
    return { name: url, concurrency: resilienceSettings("openai", settings.baseURL, own).concurrency, model: served, probe: listOpenAIModels(settings) }
  })

/** The LanguageModel for a parsed ollama/openai/scripted spec. */
const layerFor = (parsed: ModelSpec, spec: string, options: ModelOptions): Layer.Layer<LanguageModel, InvalidModelSpec> => {
  if ("registered" in parsed) return parsed.registered.layer(parsed.options, spec.trim(), options)
  if ((parsed.provider === "ollama" || parsed.provider === "openai") && options.endpoints !== undefined && options.endpoints.length > 0) {
    const { provider, model } = parsed
    const endpoints = options.endpoints
    return Layer.effect(
      LanguageModel,
      Effect.gen(function* () {
        const members = yield* Effect.forEach(endpoints, (e) => poolEndpoint(provider, model, e, options))
        return (yield* makePool(members)).model
      })
    )
  }
  switch (parsed.provider) {
    case "ollama": {
      const settings = ollamaSettings(parsed.model, options)
      return Layer.effect(
        LanguageModel,
        Effect.flatMap(ollamaModel(settings), (model) => resilient(model, resilienceSettings("ollama", settings.host, options)))
      )
    }
    case "openai": {
      const settings = openaiSettings(parsed.model, options)
      return Layer.effect(LanguageModel, resilient(makeOpenAIModel(settings), resilienceSettings("openai", settings.baseURL, options)))
    }
    case "scripted":
      return scriptedFileLayer(parsed.file)
  }
}

/**
 * A LanguageModel layer for `ollama:<model>`, `openai:<model>` or `scripted:<file.json>`, wrapped in
 * resilience for servers, or for a registered provider's spec (the bench's `sim`).
 */
export const modelLayer = (spec: string, options: ModelOptions = {}): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  Layer.unwrap(Effect.map(parseModelSpec(spec), (parsed) => layerFor(parsed, spec, options)))

/** A model of its own (its own server), apart from the LanguageModel in context: e.g. the tool simulator of a run. */
export const standaloneModel = (spec: string, options: ModelOptions = {}) => Effect.provide(Effect.service(LanguageModel), modelLayer(spec, options))

/**
 * Whether a spec names nothing of the machine that builds it (no script file, no data folder): the
 * model a queue job may name. Servers' addresses and keys never come from a spec, only from where it is built.
 */
export const isPortableSpec = (spec: string): boolean => {
  const extra = registeredSpec(spec)
  if (extra) return extra.provider.portable(extra.rest)
  const prefix = spec.trim().slice(0, Math.max(0, spec.trim().indexOf(":"))).toLowerCase()
  return prefix === "ollama" || prefix === "openai"
}

/** Whether a spec is a model for tests and measurements (a script, the simulator): never the judge to suggest. */
export const isTestModelSpec = (spec: string): boolean =>
  spec.trim().toLowerCase().startsWith("scripted:") || registeredSpec(spec)?.provider.testModel === true

/**
 * Whether the model a spec names is on its server, asked before a long run writes anything: fails with
 * ModelNotFound (naming the models the server has) when the server says it lacks the model. Anything
 * else (the server down, a provider that does not list models, a pool) passes here and meets the run's own handling.
 */
export const checkModelPresent = (spec: string, options: ModelOptions = {}): Effect.Effect<void, ModelNotFound> =>
  modelPresence(spec, options).pipe(
    // a server that does not answer at once is the run's to meet (its timeouts, --stop-after), not a missing model
    Effect.timeoutOption(PRESENCE_CHECK_MS),
    Effect.asVoid
  )

/** How long the model check before a run waits for the server. */
const PRESENCE_CHECK_MS = 3000

const modelPresence = (spec: string, options: ModelOptions): Effect.Effect<void, ModelNotFound> =>
  Effect.gen(function* () {
    if (options.endpoints !== undefined && options.endpoints.length > 0) return
    const parsed = yield* Effect.orElseSucceed(parseModelSpec(spec), () => undefined)
    if (parsed === undefined || "registered" in parsed) return
    if (parsed.provider === "ollama") {
      const settings = ollamaSettings(parsed.model, options)
      const shown = yield* Effect.result(ollamaCapabilities(settings))
      if (shown._tag === "Success" || shown.failure._tag !== "ModelNotFound") return
      const available = yield* Effect.orElseSucceed(ollamaModels(settings), () => undefined)
      return yield* Effect.fail(new ModelNotFound({ provider: "ollama", model: parsed.model, available }))
    }
    if (parsed.provider === "openai") {
      const listed = yield* Effect.orElseSucceed(listOpenAIModels(openaiSettings(parsed.model, options)), () => undefined)
      if (listed !== undefined && listed.length > 0 && !listed.includes(parsed.model)) return yield* Effect.fail(new ModelNotFound({ provider: "openai", model: parsed.model, available: listed }))
    }
  })
