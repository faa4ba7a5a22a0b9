// How models are built and called: the options every provider reads, their defaults, and the settings shared by
// server providers (resilience, endpoints of a pool).
import * as Effect from "effect/Effect"
import { InvalidModelSpec } from "./errors.ts"
import type { ModelTaskKey } from "./model-task.ts"
import { registeredProvider } from "./providers.ts"
import type { ResilienceOptions } from "./resilience.ts"

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
  /** The embedded engine's (`llama:`) CPU threads; default SMURFS_LLAMA_THREADS, else one per CPU. */
  readonly threads?: number | undefined
  /**
   * OpenAI-compatible llama.cpp server: pin each task's requests to one of its slots (`id_slot`, with
   * `cache_prompt`), so that a task's next request finds its prefix in its slot rather than a neighbour's. A number
   * of slots (the server's `--parallel`), or `auto` to read them from its /props (no pinning when the server has
   * none, as any other server). Default: none.
   */
  readonly slotAffinity?: number | "auto" | undefined
  /**
   * Model lanes (`makeModelLanes`): at most this many tasks (`withModelTask`) send requests at once, each keeping its
   * lane from one request to the next, so that a server with that many slots keeps every task's prefix in a slot of
   * its own when more tasks are in flight; with `slotAffinity`, lane i is slot i. `auto`: the server's slots when the
   * provider knows them (llama.cpp's /props, the embedded engine's sequences, Ollama's OLLAMA_NUM_PARALLEL or
   * `concurrency` when given), else none; never over a pool of `endpoints` unless a number is given. Default: none.
   */
  readonly lanes?: number | "auto" | undefined
  /**
   * How long a task may hold its lane with no request in flight (calling a slow tool) while another task waits for
   * one; it then queues for a new lane. Default MODEL_LANE_GRACE_MS (2 s).
   */
  readonly laneGraceMs?: number | undefined
  /** Told when a task starts (true) and stops (false) waiting for one of the `lanes` model lanes (progress). */
  readonly onLaneWait?: ((task: ModelTaskKey, waiting: boolean, lanes: number) => void) | undefined
}

/** Thinking of a reasoning model: on, off, or an effort level. */
export type Think = boolean | "low" | "medium" | "high"

const THINK_WORDS: Readonly<Record<string, Think>> = {
  on: true,
  true: true,
  off: false,
  false: false,
  low: "low",
  medium: "medium",
  high: "high"
}

/** The `--think` value: on|off|low|medium|high; undefined for anything else. */
export const parseThink = (value: string): Think | undefined => THINK_WORDS[value.trim().toLowerCase()]

/** The help text of `--think`, shared by the commands that take it. */
export const THINK_HELP =
  "reasoning models: thinking on, off or an effort level (Ollama think; OpenAI-compatible reasoning_effort / enable_thinking); default: the server's"

/** The defaults of `ModelOptions`, in one place. */
export const MODEL_DEFAULTS = {
  numCtx: 8192,
  keepAlive: "30m",
  timeoutMs: 120_000,
  seed: 42,
  temperature: 0,
  concurrency: { ollama: 1, openai: 4, llama: 1 },
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

/** A setting from the environment; blank counts as unset. */
export const envSetting = (name: string): string | undefined => {
  const value = process.env[name]
  return value !== undefined && value.trim() !== "" ? value.trim() : undefined
}

/**
 * Resilience settings of a server model, defaults and environment applied. The concurrency a provider
 * serves by default (Ollama's OLLAMA_NUM_PARALLEL) is the provider's own.
 */
export const resilienceSettings = (provider: string, host: string, options: ModelOptions = {}): ResilienceOptions => ({
  concurrency: options.concurrency ?? registeredProvider(provider)?.concurrency?.() ?? 1,
  maxRetries: options.maxRetries ?? MODEL_DEFAULTS.maxRetries,
  retryBaseMs: options.retryBaseMs ?? MODEL_DEFAULTS.retryBaseMs,
  maxRetryDelayMs: options.maxRetryDelayMs ?? MODEL_DEFAULTS.maxRetryDelayMs,
  timeoutMs: options.timeoutMs ?? MODEL_DEFAULTS.timeoutMs,
  endpoint: `${provider}:${host}`
})

/** `url` or `url*N` of --endpoints: the address and the requests it serves at once. */
export const parseEndpoint = (
  text: string
): Effect.Effect<{ readonly url: string; readonly concurrency: number | undefined }, InvalidModelSpec> =>
  Effect.suspend(() => {
    const match = /^(.*?)(?:\*(\d+))?$/.exec(text.trim())
    const url = match?.[1]?.trim() ?? ""
    const concurrency = match?.[2] === undefined ? undefined : Number(match[2])
    if (!/^https?:\/\/[^\s/]+/.test(url) || concurrency === 0)
      return Effect.fail(
        new InvalidModelSpec({
          spec: text,
          reason:
            "an endpoint is http(s)://host:port, optionally followed by *N for the requests it serves at once (e.g. http://gpu1:11434*2)"
        })
      )
    return Effect.succeed({ url, concurrency })
  })
