// `npm run bench:retrieval`: recall@k and nDCG@k of the relevant APIs over the pooled ToolBench corpus.
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import * as Effect from "effect/Effect"
import "../../bench/sim/provider.ts"
import { toolbenchCorpus } from "../../bench/corpus.ts"
import { DEFAULT_DATA_DIR, loadQueries } from "../../bench/datasets.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { modelLayer as resolveModelLayer } from "../../src/llm/spec.ts"
import { makeOfflineEnvironment } from "../../src/tools/environments/offline.ts"
import { makeEmbedder } from "../../src/tools/retrieval/embedder.ts"
import { defaultEmbeddingCache } from "../../src/tools/retrieval/embedding-cache.ts"
import { makeRetriever, type Retriever } from "../../src/tools/retrieval/retriever.ts"
import { VARIANTS, variantRetriever } from "./ablation.ts"
import { CUTOFFS, type Evaluation, evaluateRetriever } from "./evaluate.ts"

const HELP = `usage: npm run bench:retrieval -- [options]

Recall@k and nDCG@k (k = 1, 5, 10) of each query's relevant APIs when the tools are retrieved from
the pooled corpus (every API of every query file under --data, deduplicated).

options:
  --data <dir>          StableToolBench queries (default ${DEFAULT_DATA_DIR})
  --embed <spec>        also score the hybrid retriever: ollama:<model> or openai:<model>
  --embed-cache <dir>   where document embeddings are cached (default ~/.cache/smurfs/embeddings)
  --rerank <spec>       also score re-ranking of the top 20 by this model (ollama:<model>, openai:<model>)
  --limit <n>           only the first n queries of each group (re-ranking costs a model call per query)
  --ablation            also score lexical variants that each drop one choice (what moves recall)
  --json                print the figures as JSON
  -h, --help            show this help`

const { values } = parseArgs({
  options: {
    data: { type: "string" },
    embed: { type: "string" },
    "embed-cache": { type: "string" },
    rerank: { type: "string" },
    limit: { type: "string" },
    ablation: { type: "boolean" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" }
  }
})
if (values.help) {
  console.log(HELP)
  process.exit(0)
}

const pct = (x: number) => x.toFixed(3)

const row = (label: string, e: Evaluation) =>
  `${label.padEnd(58)} ${CUTOFFS.map((k) => pct(e.pooled.recall[k]!)).join("  ")}   ${CUTOFFS.map((k) => pct(e.pooled.ndcg[k]!)).join("  ")}  ${e.msPerQuery.toFixed(2).padStart(8)}${e.failed ? `  (${e.failed} failed)` : ""}`

const program = Effect.gen(function* () {
  const data = resolve(values.data ?? DEFAULT_DATA_DIR)
  const limit = values.limit === undefined ? undefined : Number(values.limit)
  const queries = yield* loadQueries({ dir: data, limit })
  const corpus = toolbenchCorpus(queries, makeOfflineEnvironment("error"))
  const built = performance.now()
  const lexical = yield* makeRetriever(corpus.library)
  const indexMs = performance.now() - built
  const results: Array<{ label: string; evaluation: Evaluation }> = []
  const score = (label: string, retriever: Retriever, concurrency = 1) =>
    Effect.map(
      evaluateRetriever(retriever, corpus, queries, concurrency),
      (evaluation) => void results.push({ label, evaluation })
    )

  if (values.ablation)
    for (const variant of VARIANTS.slice(0, -1)) yield* score(variant.label, variantRetriever(corpus.library, variant))
  yield* score("lexical (BM25+, weighted fields)", lexical)
  let firstStage = lexical
  if (values.embed) {
    const embedder = yield* makeEmbedder(values.embed)
    firstStage = yield* makeRetriever(corpus.library, {
      embedder,
      embeddingCache: values["embed-cache"] ?? defaultEmbeddingCache()
    })
    yield* score(`hybrid (BM25+ and ${values.embed}, RRF)`, firstStage, 4)
  }
  if (values.rerank) {
    const model = yield* Effect.provide(Effect.service(LanguageModel), resolveModelLayer(values.rerank))
    const reranked = yield* makeRetriever(corpus.library, {
      ...(values.embed
        ? {
            embedder: yield* makeEmbedder(values.embed),
            embeddingCache: values["embed-cache"] ?? defaultEmbeddingCache()
          }
        : {}),
      reranker: model
    })
    yield* score(`${firstStage.mode} + re-ranked by ${values.rerank}`, reranked, 4)
  }
  if (values.json) {
    console.log(
      JSON.stringify({ data, queries: queries.length, apis: corpus.library.tools.length, indexMs, results }, null, 2)
    )
    return
  }
  console.log(
    `${queries.length} queries, pooled corpus of ${corpus.library.tools.length} APIs (${data}); lexical index built in ${indexMs.toFixed(0)} ms\n`
  )
  console.log(`${"retriever".padEnd(58)} recall@1/5/10         nDCG@1/5/10            ms/query`)
  for (const { label, evaluation } of results) console.log(row(label, evaluation))
  const main = results.find((r) => r.label.startsWith("lexical"))!.evaluation
  console.log(`\nlexical, per group (recall@5 / nDCG@5):`)
  for (const [group, s] of Object.entries(main.groups))
    console.log(`  ${group.padEnd(16)} ${pct(s.recall[5]!)} / ${pct(s.ndcg[5]!)}  (${s.queries} queries)`)
})

Effect.runPromise(program).catch((e: unknown) => {
  console.error(`bench:retrieval: ${(e as Error)?.message ?? String(e)}`)
  process.exit(1)
})
