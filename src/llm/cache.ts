// Reply cache for the LanguageModel: an LRU in memory keyed by a hash of model + canonical request, optionally kept on disk.
import { createHash } from "node:crypto"
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { LRUCache } from "lru-cache"
import type { FailureKind } from "../failure.ts"
import { readFileBounded } from "../trace/guarded-fs.ts"
import { appendJsonLine, parseAppendedLines } from "../trace/jsonl.ts"
import { redactValue } from "../trace/redact.ts"
import {
  type GenerateOptions,
  type GenerateRequest,
  type GenerateResponse,
  LanguageModel,
  type LanguageModelShape
} from "./language-model.ts"

export interface CacheOptions {
  /** Directory that keeps the cache across processes (one JSON-lines file per cache); none keeps it in memory only. */
  readonly dir?: string | undefined
  /** Most entries held in memory; the least recently used go first. */
  readonly maxEntries?: number | undefined
}

export const CACHE_DEFAULTS = {
  maxEntries: 50_000,
  /** File of the model cache inside the cache directory. */
  modelFile: "model-cache.jsonl",
  /** File of the tool cache inside the cache directory. */
  toolFile: "tool-cache.jsonl"
} as const

/** The cache directory cannot be created or read. */
export class CacheUnavailable extends Data.TaggedError("CacheUnavailable")<{
  readonly path: string
  readonly reason: string
}> {
  get kind(): FailureKind {
    return "bad-input"
  }
  override get message() {
    return `Cannot use the cache at ${this.path} (${this.reason}). Pass a writable --cache-dir, or leave it out to run without a disk cache.`
  }
}

/** JSON with object keys sorted at every level and `undefined` fields dropped, so equal values give equal text. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v
    const sorted: Record<string, unknown> = {}
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k]
    return sorted
  }) ?? "null"

/** sha256 (hex) of a value's canonical JSON. */
export const hashOf = (value: unknown): string => createHash("sha256").update(canonicalJson(value)).digest("hex")

export interface StoreStats {
  hits: number
  misses: number
  /** Entries added by this process. */
  writes: number
  /** Entries read from disk when the store opened. */
  loaded: number
  /** Appends to disk that failed (the entry stays in memory). */
  writeErrors: number
}

/** A keyed store: an LRU in memory, each new entry appended as one JSON line to `file` so that it survives a restart. */
export interface KeyedStore<V> {
  readonly get: (key: string) => V | undefined
  readonly set: (key: string, value: V) => void
  readonly stats: StoreStats
  /** Where the store persists, if anywhere. */
  readonly file?: string | undefined
}

/**
 * Open a store. Lines that do not parse (a write cut by a crash) are skipped; a later line for the
 * same key wins. Appends are single small writes to an O_APPEND file, so that concurrent processes
 * sharing a directory interleave whole lines.
 */
export const openStore = <V extends {}>(
  file: string | undefined,
  maxEntries: number = CACHE_DEFAULTS.maxEntries
): Effect.Effect<KeyedStore<V>, CacheUnavailable> =>
  Effect.try({
    try: () => {
      const lru = new LRUCache<string, V>({ max: Math.max(1, maxEntries) })
      const stats: StoreStats = { hits: 0, misses: 0, writes: 0, loaded: 0, writeErrors: 0 }
      if (file !== undefined) {
        mkdirSync(join(file, ".."), { recursive: true })
        if (existsSync(file)) {
          // a torn line from an interrupted run is skipped: that entry is simply missing
          for (const entry of parseAppendedLines(readFileBounded(file)).entries as ReadonlyArray<{
            key?: unknown
            value?: V
          } | null>) {
            if (typeof entry?.key === "string" && entry.value !== undefined) {
              lru.set(entry.key, entry.value)
              stats.loaded++
            }
          }
        }
      }
      const store: KeyedStore<V> = {
        file,
        stats,
        get: (key) => {
          const value = lru.get(key)
          if (value === undefined) stats.misses++
          else stats.hits++
          return value
        },
        set: (key, value) => {
          lru.set(key, value)
          stats.writes++
          if (file === undefined) return
          try {
            // the file outlives the run: a reply that echoed a key is stored redacted
            appendJsonLine(file, { key, value: redactValue(value) })
          } catch {
            stats.writeErrors++
          }
        }
      }
      return store
    },
    catch: (e) => new CacheUnavailable({ path: file ?? "(memory)", reason: (e as Error).message })
  })

/**
 * Whether a request's replies are repeatable, hence cacheable: temperature 0 (the default) with a
 * seed (providers fill a fixed one when none is given). Sampling at a higher temperature must reach
 * the model every time, or DFSDT's diverse retries would all get the same reply.
 */
export const isDeterministic = (options: GenerateOptions | undefined): boolean => (options?.temperature ?? 0) === 0

/** The cache key of a request to a model: everything that can change the reply, nothing that cannot (the timeout). */
export const requestKey = (model: string, request: GenerateRequest): string => hashOf(requestIdentity(model, request))

/**
 * A request's hash without the model (the record's `model_call.request`): the same request of the same agent
 * gives the same hash, which a verified replay answers by.
 */
export const requestHash = (request: GenerateRequest): string => hashOf(requestIdentity(undefined, request))

const requestIdentity = (model: string | undefined, request: GenerateRequest) => ({
  model,
  role: request.role,
  // a message's values say what its text was rendered from: the text is what the model sees
  messages: request.messages.map(({ values: _values, ...message }) => message),
  format: request.format,
  // a request that asks the server for a JSON object only is another request than one that sends the schema
  ...(request.formatAs === undefined || request.formatAs === "schema" ? {} : { formatAs: request.formatAs }),
  tools: request.tools,
  options: {
    temperature: request.options?.temperature ?? 0,
    seed: request.options?.seed,
    maxTokens: request.options?.maxTokens
  }
})

export interface ModelCache {
  readonly store: KeyedStore<GenerateResponse>
  /** A model that answers repeated deterministic requests from the store; its cached replies say `cached: true`. */
  readonly wrap: (inner: LanguageModelShape) => LanguageModelShape
}

/** A model cache over a store opened from `options` (`<dir>/model-cache.jsonl` when a dir is given). */
export const makeModelCache = (options: CacheOptions = {}): Effect.Effect<ModelCache, CacheUnavailable> =>
  Effect.map(
    openStore<GenerateResponse>(
      options.dir === undefined ? undefined : join(options.dir, CACHE_DEFAULTS.modelFile),
      options.maxEntries
    ),
    (store) => ({ store, wrap: (inner) => wrapModel(inner, store) })
  )

const wrapModel = (inner: LanguageModelShape, store: KeyedStore<GenerateResponse>): LanguageModelShape =>
  LanguageModel.of({
    info: inner.info,
    generate: (request) => {
      if (!isDeterministic(request.options)) return inner.generate(request)
      return Effect.suspend(() => {
        const started = performance.now()
        const key = requestKey(inner.info.spec, request)
        const hit = store.get(key)
        if (hit !== undefined)
          return Effect.succeed<GenerateResponse>({ ...hit, cached: true, durationMs: performance.now() - started })
        return Effect.tap(inner.generate(request), (response) =>
          Effect.sync(() => {
            const { cached: _cached, ...stored } = response
            store.set(key, stored)
          })
        )
      })
    }
  })

/** A Layer that puts the cache in front of the LanguageModel below it: `Layer.provide(modelCacheLayer(opts), providerLayer)`. */
export const modelCacheLayer = (
  options: CacheOptions = {}
): Layer.Layer<LanguageModel, CacheUnavailable, LanguageModel> =>
  Layer.effect(
    LanguageModel,
    Effect.gen(function* () {
      const inner = yield* LanguageModel
      const cache = yield* makeModelCache(options)
      return cache.wrap(inner)
    })
  )
