// The tool recommender: lexical (BM25+) or hybrid (BM25+ and embeddings, fused by RRF) retrieval, then an optional LLM re-ranker.
import * as Effect from "effect/Effect"
import type { GenerateError, ProviderError } from "../../llm/errors.ts"
import { LanguageModel, type LanguageModelShape } from "../../llm/language-model.ts"
import { checkPeers, RETRIEVAL_PEERS } from "../../peer-packages.ts"
import { plural } from "../../plural.ts"
import { emit } from "../../trace/events.ts"
import { makeToolLibrary } from "../library.ts"
import type { Tool, ToolLibrary } from "../tool.ts"
import { documentText, toolDocument } from "./document.ts"
import type { Embedder } from "./embedder.ts"
import { cachedDocumentVectors } from "./embedding-cache.ts"
import { denseRanking, reciprocalRankFusion } from "./fusion.ts"
import { type LexicalOptions, makeLexicalIndex, type Ranked } from "./lexical.ts"
import { rerank } from "./rerank.ts"
import { type RetrievalScope, retrievalEventData } from "./retrieval-event.ts"

export interface RetrieverOptions {
  readonly lexical?: LexicalOptions | undefined
  /** With an embedder the retriever is hybrid: BM25+ and cosine rankings fused by reciprocal rank fusion. */
  readonly embedder?: Embedder | undefined
  /** Where document embeddings are cached by content hash; none = embed on every start. */
  readonly embeddingCache?: string | undefined
  /** With a model, the top candidates are re-ranked by it (`--rerank`). */
  readonly reranker?: LanguageModelShape | undefined
  /** Candidates each first-stage ranking contributes to fusion. */
  readonly fusionDepth?: number | undefined
  /** Candidates the re-ranker orders (at least k). */
  readonly rerankDepth?: number | undefined
  /**
   * When a retrieval finds no tool, the whole library is given instead if its documents take at most this many
   * tokens (estimated at 4 characters a token): a small library fits any prompt.
   */
  readonly wholeLibraryTokens?: number | undefined
}

/** `wholeLibraryTokens`: a quarter of the default context window (8,192), so the tools leave room for the rest. */
export const RETRIEVER_DEFAULTS = { fusionDepth: 100, rerankDepth: 20, wholeLibraryTokens: 2048 } as const

/** What a retrieval that found no tool gives instead, and how to say so. */
export interface RetrievalFallback {
  readonly ranked: Array<Ranked>
  /** What was given instead, for the warning: "the whole library (5 tools) is offered instead". */
  readonly instead: string
}

export type RetrieverMode = "lexical" | "hybrid" | "lexical+rerank" | "hybrid+rerank"

export interface Retriever {
  readonly library: ToolLibrary
  readonly mode: RetrieverMode
  /** The best k tools for the query. Fails only when the embedding model or the re-ranker does. */
  readonly search: (query: string, k: number) => Effect.Effect<Array<Ranked>, ProviderError | GenerateError>
  /** The lexical ranking alone; never fails (the fallback when a model does). */
  readonly lexical: (query: string, k: number) => Array<Ranked>
  /**
   * What a query that retrieved no tool gets instead: the whole library when it fits (`wholeLibraryTokens`), else the
   * embedding ranking alone when there is an embedder, else nothing (and the warning says what to do). Never fails.
   */
  readonly nothingFound: (query: string, k: number) => Effect.Effect<RetrievalFallback>
}

/** Build a retriever over a library; with an embedder, the library's documents are embedded (or read from the cache) now. */
export const makeRetriever = Effect.fn("Retriever.make")(function* (
  library: ToolLibrary,
  options: RetrieverOptions = {}
) {
  yield* checkPeers(RETRIEVAL_PEERS)
  const documents = library.tools.map(toolDocument)
  const lexical = makeLexicalIndex(documents, options.lexical)
  const names = documents.map((d) => d.id)
  const vectors = options.embedder
    ? yield* cachedDocumentVectors(options.embedder, documents.map(documentText), options.embeddingCache)
    : undefined
  const fusionDepth = options.fusionDepth ?? RETRIEVER_DEFAULTS.fusionDepth
  const byName = new Map(library.tools.map((t) => [t.name, t]))

  const firstStage = (query: string, depth: number): Effect.Effect<Array<Ranked>, ProviderError> =>
    options.embedder && vectors
      ? Effect.map(options.embedder.embedQuery(query), (q) =>
          reciprocalRankFusion([
            lexical.search(query, Math.max(depth, fusionDepth)),
            denseRanking(q, names, vectors, Math.max(depth, fusionDepth))
          ]).slice(0, depth)
        )
      : Effect.succeed(lexical.search(query, depth))

  const reranker = options.reranker
  const search = (query: string, k: number): Effect.Effect<Array<Ranked>, ProviderError | GenerateError> =>
    reranker
      ? Effect.gen(function* () {
          const candidates = yield* firstStage(
            query,
            Math.max(k, options.rerankDepth ?? RETRIEVER_DEFAULTS.rerankDepth)
          )
          if (candidates.length <= 1) return candidates.slice(0, k)
          const ordered = yield* rerank(query, candidates, byName).pipe(Effect.provideService(LanguageModel, reranker))
          return ordered.slice(0, k)
        })
      : firstStage(query, k)

  const wholeTokens = Math.ceil(documents.reduce((n, d) => n + documentText(d).length, 0) / 4)
  const embedder = options.embedder
  const nothingFound = (query: string, k: number): Effect.Effect<RetrievalFallback> => {
    if (wholeTokens <= (options.wholeLibraryTokens ?? RETRIEVER_DEFAULTS.wholeLibraryTokens))
      return Effect.succeed({
        ranked: names.map((name) => ({ name, score: 0 })),
        instead: `the whole library (${plural(names.length, "tool")}, about ${wholeTokens} tokens) is offered instead`
      })
    const none = (why: string): RetrievalFallback => ({
      ranked: [],
      instead: `${why}, so no tool is offered: rephrase the query with the tools' words${embedder ? "" : ", or retrieve by meaning too with --embed <spec> (e.g. ollama:nomic-embed-text)"}`
    })
    if (!embedder || !vectors)
      return Effect.succeed(none(`the library (${plural(names.length, "tool")}) is too large to offer whole`))
    return embedder.embedQuery(query).pipe(
      Effect.map(
        (q): RetrievalFallback => ({
          ranked: denseRanking(q, names, vectors, k),
          instead: "the embedding ranking alone is used instead"
        })
      ),
      Effect.catch((e) =>
        Effect.succeed(none(`the library is too large to offer whole and the embedding model failed (${e.message})`))
      )
    )
  }

  const mode: RetrieverMode = `${options.embedder ? "hybrid" : "lexical"}${reranker ? "+rerank" : ""}` as RetrieverMode
  return { library, mode, search, lexical: lexical.search, nothingFound } satisfies Retriever
})

/**
 * The top-k ranking for a query. It never fails: when the embedding model or the re-ranker fails, the
 * lexical ranking alone is used and the failure is recorded as an `error` event. A retrieval that finds no
 * tool never leaves the task silently without tools: it falls back (`Retriever.nothingFound`) and says so,
 * as an `error` event of role `retrieval` (the live view prints it) and on `warn` when given.
 */
export const rankTools = (
  retriever: Retriever,
  query: string,
  k: number,
  warn?: (text: string) => void
): Effect.Effect<Array<Ranked>> =>
  retriever.search(query, k).pipe(
    Effect.catch((e) =>
      Effect.as(
        emit("error", {
          role: "retrieval",
          tag: e._tag,
          error: `${e.message} (the lexical ranking was used instead)`
        }),
        retriever.lexical(query, k)
      )
    ),
    Effect.flatMap((ranked) =>
      ranked.length > 0 || retriever.library.tools.length === 0
        ? Effect.succeed(ranked)
        : Effect.gen(function* () {
            const fallback = yield* retriever.nothingFound(query, k)
            const text = `${retriever.mode} retrieval found no tool for "${query}"; ${fallback.instead}`
            warn?.(text)
            yield* emit("error", { role: "retrieval", tag: "NoToolRetrieved", error: text })
            return fallback.ranked
          })
    )
  )

/**
 * The library narrowed to the top-k tools for a query, for a pipeline: the set is recorded as a
 * `retrieval` event. It never fails: when the embedding model or the re-ranker fails, the lexical
 * ranking alone is used and the failure is recorded as an `error` event.
 */
export const narrowLibrary = (
  retriever: Retriever,
  query: string,
  k: number,
  scope: RetrievalScope
): Effect.Effect<ToolLibrary> =>
  Effect.gen(function* () {
    const ranked = yield* rankTools(retriever, query, k)
    yield* emit("retrieval", retrievalEventData(scope, query, k, retriever.mode, ranked))
    const byName = new Map(retriever.library.tools.map((t) => [t.name, t]))
    return makeToolLibrary(
      retriever.library.name,
      ranked.map((r) => byName.get(r.name)).filter((t): t is Tool => t !== undefined)
    )
  })
