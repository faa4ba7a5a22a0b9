// The tool recommender: lexical (BM25+) or hybrid (BM25+ and embeddings, fused by RRF) retrieval, then an optional LLM re-ranker.
import * as Effect from "effect/Effect"
import type { GenerateError, ProviderError } from "../../llm/errors.ts"
import { LanguageModel, type LanguageModelShape } from "../../llm/language-model.ts"
import { checkPeers, RETRIEVAL_PEERS } from "../../peer-packages.ts"
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
}

export const RETRIEVER_DEFAULTS = { fusionDepth: 100, rerankDepth: 20 } as const

export type RetrieverMode = "lexical" | "hybrid" | "lexical+rerank" | "hybrid+rerank"

export interface Retriever {
  readonly library: ToolLibrary
  readonly mode: RetrieverMode
  /** The best k tools for the query. Fails only when the embedding model or the re-ranker does. */
  readonly search: (query: string, k: number) => Effect.Effect<Array<Ranked>, ProviderError | GenerateError>
  /** The lexical ranking alone; never fails (the fallback when a model does). */
  readonly lexical: (query: string, k: number) => Array<Ranked>
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

  const mode: RetrieverMode = `${options.embedder ? "hybrid" : "lexical"}${reranker ? "+rerank" : ""}` as RetrieverMode
  return { library, mode, search, lexical: lexical.search } satisfies Retriever
})

/**
 * The top-k ranking for a query. It never fails: when the embedding model or the re-ranker fails, the
 * lexical ranking alone is used and the failure is recorded as an `error` event.
 */
export const rankTools = (retriever: Retriever, query: string, k: number): Effect.Effect<Array<Ranked>> =>
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
