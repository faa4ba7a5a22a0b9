import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { relevantNames, toolbenchCorpus } from "../../bench/corpus.ts"
import { loadQueries } from "../../bench/datasets.ts"
import { makeOfflineEnvironment } from "../../src/tools/environments/offline.ts"
import { makeRetriever } from "../../src/tools/retrieval/retriever.ts"
import { FULL_DATA, lacks, skipNote } from "../../test/data.ts"
import { evaluateRetriever } from "./evaluate.ts"
import { ndcgAt, recallAt } from "./metrics.ts"

describe("retrieval metrics", () => {
  it("recall@k and nDCG@k with binary relevance", () => {
    const relevant = new Set(["a", "b"])
    expect(recallAt(["x", "a", "y", "b"], relevant, 1)).toBe(0)
    expect(recallAt(["x", "a", "y", "b"], relevant, 2)).toBe(0.5)
    expect(recallAt(["x", "a", "y", "b"], relevant, 4)).toBe(1)
    expect(ndcgAt(["a", "b"], relevant, 5)).toBe(1)
    expect(ndcgAt(["x", "a"], relevant, 2)).toBeCloseTo(1 / Math.log2(3) / (1 + 1 / Math.log2(3)))
    expect(recallAt(["a"], new Set(), 1)).toBe(0)
  })
})

describe.skipIf(lacks(FULL_DATA))(`the pooled ToolBench corpus${skipNote(FULL_DATA)}`, () => {
  it("holds every distinct API of the 765 queries, and the lexical retriever finds the relevant ones (recall@5 >= 0.60)", async () => {
    const queries = await Effect.runPromise(loadQueries({ dir: FULL_DATA.path }))
    const corpus = toolbenchCorpus(queries, makeOfflineEnvironment("error"))
    expect(queries).toHaveLength(765)
    expect(corpus.library.tools).toHaveLength(2479)
    expect(new Set(corpus.library.tools.map((t) => t.name)).size).toBe(2479)
    expect(relevantNames(corpus, queries[0]!).length).toBe(queries[0]!.relevant.length)
    const retriever = await Effect.runPromise(makeRetriever(corpus.library))
    const evaluation = await Effect.runPromise(evaluateRetriever(retriever, corpus, queries))
    expect(evaluation.pooled.queries).toBe(765)
    expect(evaluation.pooled.recall[5]).toBeGreaterThanOrEqual(0.6)
    expect(evaluation.pooled.recall[10]).toBeGreaterThanOrEqual(evaluation.pooled.recall[5]!)
    expect(Object.keys(evaluation.groups)).toHaveLength(6)
  }, 300_000)
})
