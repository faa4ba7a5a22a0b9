// Score a retriever on ToolBench queries: recall@k and nDCG@k of each query's relevant APIs, pooled and per group.
import * as Effect from "effect/Effect"
import { type Corpus, relevantNames } from "../../bench/corpus.ts"
import type { BenchQuery } from "../../bench/datasets.ts"
import type { Retriever } from "../../src/tools/retrieval/retriever.ts"
import { ndcgAt, recallAt } from "./metrics.ts"

export const CUTOFFS = [1, 5, 10] as const

export interface Scores {
  readonly queries: number
  readonly recall: Readonly<Record<number, number>>
  readonly ndcg: Readonly<Record<number, number>>
}

export interface Evaluation {
  readonly pooled: Scores
  readonly groups: Readonly<Record<string, Scores>>
  /** Mean milliseconds per query, the first stage and any re-ranking included. */
  readonly msPerQuery: number
  /** Queries whose search failed (a model error); they score 0. */
  readonly failed: number
}

const mean = (xs: ReadonlyArray<number>) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length)

const scoresOf = (rows: ReadonlyArray<{ recall: Record<number, number>; ndcg: Record<number, number> }>): Scores => ({
  queries: rows.length,
  recall: Object.fromEntries(CUTOFFS.map((k) => [k, mean(rows.map((r) => r.recall[k]!))])),
  ndcg: Object.fromEntries(CUTOFFS.map((k) => [k, mean(rows.map((r) => r.ndcg[k]!))]))
})

/** Rank the corpus for every query (queries without relevant APIs in the corpus are skipped). */
export const evaluateRetriever = (
  retriever: Retriever,
  corpus: Corpus,
  queries: ReadonlyArray<BenchQuery>,
  concurrency = 1
) =>
  Effect.gen(function* () {
    const judged = queries.flatMap((query) => {
      const relevant = new Set(relevantNames(corpus, query))
      return relevant.size > 0 ? [{ query, relevant }] : []
    })
    let failed = 0
    const started = performance.now()
    const rows = yield* Effect.forEach(
      judged,
      ({ query, relevant }) =>
        Effect.map(
          retriever
            .search(query.query, Math.max(...CUTOFFS))
            .pipe(Effect.catch(() => Effect.sync(() => (failed++, [])))),
          (ranked) => {
            const ranking = ranked.map((r) => r.name)
            return {
              group: query.group,
              recall: Object.fromEntries(CUTOFFS.map((k) => [k, recallAt(ranking, relevant, k)])),
              ndcg: Object.fromEntries(CUTOFFS.map((k) => [k, ndcgAt(ranking, relevant, k)]))
            }
          }
        ),
      { concurrency }
    )
    const msPerQuery = (performance.now() - started) / Math.max(1, rows.length)
    const groups = [...new Set(rows.map((r) => r.group))]
    return {
      pooled: scoresOf(rows),
      groups: Object.fromEntries(groups.map((g) => [g, scoresOf(rows.filter((r) => r.group === g))])),
      msPerQuery,
      failed
    } satisfies Evaluation
  })
