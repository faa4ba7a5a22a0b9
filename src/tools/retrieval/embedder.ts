// Embedding models for the hybrid retriever: Ollama's /api/embed or an OpenAI-compatible /v1/embeddings.
import * as Effect from "effect/Effect"
import type OpenAI from "openai"
import type { ProviderError } from "../../llm/errors.ts"
import type { ModelOptions } from "../../llm/model-options.ts"
import { loadOllamaSdk } from "../../llm/ollama.ts"
import { type CallSite, displayHost, fromStatus, fromTransport, tryPromiseWithin } from "../../llm/provider-errors.ts"
import { ollamaSettings } from "../../llm/providers/ollama.ts"
import { openaiSettings } from "../../llm/providers/openai.ts"
import { InvalidEmbedSpec } from "./errors.ts"

/** Turns texts into vectors; one request per batch. */
export interface Embedder {
  /** The spec it was built from, e.g. `ollama:nomic-embed-text` (part of the cache key). */
  readonly spec: string
  /** Vectors of documents (tool descriptions). */
  readonly embedDocuments: (texts: ReadonlyArray<string>) => Effect.Effect<Array<Float32Array>, ProviderError>
  /** The vector of a query. */
  readonly embedQuery: (text: string) => Effect.Effect<Float32Array, ProviderError>
}

/** Texts per request: big enough to be fast, small enough for any server's body limit. */
const BATCH = 64

/**
 * nomic-embed-text was trained with task prefixes and retrieves markedly worse without them;
 * other models get the text as is.
 */
const prefixes = (model: string) =>
  /nomic-embed/i.test(model) ? { document: "search_document: ", query: "search_query: " } : { document: "", query: "" }

const batches = <A>(items: ReadonlyArray<A>): Array<Array<A>> =>
  Array.from({ length: Math.ceil(items.length / BATCH) }, (_, i) => items.slice(i * BATCH, (i + 1) * BATCH))

const build = (
  spec: string,
  model: string,
  embed: (texts: Array<string>) => Effect.Effect<Array<Float32Array>, ProviderError>
): Embedder => {
  const prefix = prefixes(model)
  return {
    spec,
    embedDocuments: (texts) =>
      Effect.map(
        Effect.forEach(batches(texts), (batch) => embed(batch.map((t) => prefix.document + t))),
        (parts) => parts.flat()
      ),
    embedQuery: (text) => Effect.map(embed([prefix.query + text]), (vectors) => vectors[0]!)
  }
}

const site = (
  provider: string,
  host: string,
  model: string,
  timeoutMs: number,
  secrets: ReadonlyArray<string> = []
): CallSite => ({
  provider,
  host: displayHost(host),
  model,
  role: "embed",
  timeoutMs,
  secrets
})

const ollamaEmbedder = (spec: string, model: string, options: ModelOptions): Embedder => {
  const settings = ollamaSettings(model, options)
  const where = site("ollama", settings.host, model, settings.timeoutMs)
  return build(spec, model, (input) =>
    tryPromiseWithin(
      settings.timeoutMs,
      async (signal) => {
        const { Ollama } = await loadOllamaSdk()
        const client = new Ollama({ host: settings.host, fetch: (url, init) => fetch(url, { ...init, signal }) })
        const response = await client.embed({ model, input, truncate: true, keep_alive: settings.keepAlive })
        return response.embeddings.map((v) => Float32Array.from(v))
      },
      (e, timedOut) => {
        const status = (e as { status_code?: unknown }).status_code
        return typeof status === "number"
          ? fromStatus(where, status, (e as Error).message, undefined)
          : fromTransport(where, e, timedOut)
      }
    )
  )
}

/**
 * The openai client loads with the first embedding, as the chat providers load theirs: a command that
 * only may embed (`smurfs run`, `bench`) does not read its few hundred modules at start.
 */
let openaiSdk: typeof import("openai") | undefined
const loadOpenAISdk = async () => (openaiSdk ??= await import("openai"))

const openaiEmbedder = (spec: string, model: string, options: ModelOptions): Embedder => {
  const settings = openaiSettings(model, options)
  const where = site("openai", settings.baseURL, model, settings.timeoutMs, [settings.apiKey])
  let client: OpenAI | undefined
  return build(spec, model, (input) =>
    Effect.tryPromise({
      try: async (signal) => {
        client ??= new (await loadOpenAISdk()).default({
          baseURL: settings.baseURL,
          apiKey: settings.apiKey,
          maxRetries: 0,
          timeout: settings.timeoutMs
        })
        const response = await client.embeddings.create({ model, input, encoding_format: "float" }, { signal })
        return [...response.data].sort((a, b) => a.index - b.index).map((d) => Float32Array.from(d.embedding))
      },
      catch: (e) =>
        openaiSdk !== undefined && e instanceof openaiSdk.APIError && typeof e.status === "number"
          ? fromStatus(where, e.status, e.message, e.headers)
          : fromTransport(where, e, false)
    })
  )
}

/** An embedder from `ollama:<model>` or `openai:<model>` (addresses from OLLAMA_HOST / OPENAI_BASE_URL, as for chat models). */
export const makeEmbedder = (spec: string, options: ModelOptions = {}): Effect.Effect<Embedder, InvalidEmbedSpec> => {
  const match = /^(ollama|openai):(.+)$/.exec(spec.trim())
  if (!match) return Effect.fail(new InvalidEmbedSpec({ spec }))
  const [, provider, model] = match as unknown as [string, string, string]
  return Effect.succeed(
    provider === "ollama" ? ollamaEmbedder(spec.trim(), model, options) : openaiEmbedder(spec.trim(), model, options)
  )
}
