// `smurfs tools search "<query>"`: the tools a retriever recommends for a query, from a library or a ToolBench corpus.
import { resolve } from "node:path"
import type { ParseArgsOptionsConfig } from "node:util"
import * as Effect from "effect/Effect"
import { toolbenchCorpus } from "../../../bench/corpus.ts"
import { groupsIn, loadQueries } from "../../../bench/datasets.ts"
import { LanguageModel } from "../../llm/language-model.ts"
import { plural } from "../../plural.ts"
import { makeOfflineEnvironment } from "../../tools/environments/offline.ts"
import { loadTools } from "../../tools/load.ts"
import { makeEmbedder } from "../../tools/retrieval/embedder.ts"
import { defaultEmbeddingCache } from "../../tools/retrieval/embedding-cache.ts"
import type { Ranked } from "../../tools/retrieval/lexical.ts"
import { makeRetriever } from "../../tools/retrieval/retriever.ts"
import type { Tool } from "../../tools/tool.ts"
import { redactText } from "../../trace/redact.ts"
import { ExitCode } from "../exit-codes.ts"
import { defaultModelSpec, resolveModelLayer } from "../model-option.ts"
import { intOption, type ParsedCommand, runCommand, UsageError } from "../options.ts"
import { runProgram } from "../run-program.ts"

export const SEARCH_HELP = `usage: smurfs tools search "<query>" [--tools <source>... | --data <dir>] [--top K] [--json]

The tools a retriever recommends for a query, best first: lexical (BM25+ over names, descriptions
and parameter docs), hybrid with --embed, re-ranked by a model with --rerank.

options:
  -t, --tools <source>  the library to search (demo by default; modules, api_list .json, "mcp:<command>",
                        mcp+http(s)://<url>); repeat to combine
  --data <dir>          search the ToolBench corpus instead: every API of every query file under <dir>
  --top <k>             how many tools to show (default 10)
  --embed <spec>        hybrid retrieval with this embedding model: ollama:<model> or openai:<model>
  --embed-cache <dir>   where document embeddings are cached (default ~/.cache/smurfs/embeddings)
  --rerank              re-rank the top 20 candidates with --model (when the model fails, the
                        lexical ranking is shown, with a warning)
  -m, --model <spec>    the re-ranking model (default SMURFS_MODEL, else a local Ollama model)
  --json                print [{"tool_name", "api_name", "score"}] for ToolBench tools, [{"name", "score"}] otherwise
  -h, --help            show this help

exit codes: 0 done, 2 bad usage, 3 bad input (tools, data, embedding spec), 4 model unavailable`

/** The options of `smurfs tools search`, in node:util parseArgs' shape. */
const OPTIONS = {
  tools: { type: "string", short: "t", multiple: true },
  data: { type: "string" },
  top: { type: "string" },
  embed: { type: "string" },
  "embed-cache": { type: "string" },
  rerank: { type: "boolean" },
  model: { type: "string", short: "m" },
  json: { type: "boolean" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "tools search", help: SEARCH_HELP, options: OPTIONS, positionals: true } as const

const parse = ({ values, positionals, given }: ParsedCommand<typeof OPTIONS>) => {
  const query = positionals.join(" ").trim()
  if (query.length === 0)
    throw new UsageError('give the query, e.g. smurfs tools search "weather in Paris" --tools demo')
  if (values.tools !== undefined && values.data !== undefined)
    throw new UsageError("search either --tools or --data, not both")
  const top = intOption("top", values.top) ?? 10
  // a model from the environment or a config file is fine; one given here without --rerank is a mistake
  if (given.has("model") && !values.rerank) throw new UsageError("--model is the re-ranking model: add --rerank")
  return { values, query, top }
}

/** A ToolBench API carries its data names in meta; other tools are known by their name. */
const row = (tool: Tool | undefined, ranked: Ranked) => {
  const score = Number(ranked.score.toFixed(4))
  const meta = tool?.meta
  return typeof meta?.tool === "string" && typeof meta.api === "string" && meta.doc !== undefined
    ? { tool_name: meta.tool, api_name: meta.api, score }
    : { name: ranked.name, score }
}

export const runSearch = (argv: string[]): Promise<number> =>
  runCommand(COMMAND, argv, (parsed) => search(parse(parsed)))

const search = ({ values, query, top }: ReturnType<typeof parse>): Promise<number> => {
  const program = Effect.gen(function* () {
    const library =
      values.data !== undefined
        ? toolbenchCorpus(
            yield* loadQueries({ dir: resolve(values.data), groups: groupsIn(values.data) }),
            makeOfflineEnvironment("error")
          ).library
        : yield* loadTools(values.tools ?? ["demo"])
    const embedder = values.embed === undefined ? undefined : yield* makeEmbedder(values.embed)
    const reranker = values.rerank
      ? yield* Effect.provide(Effect.service(LanguageModel), resolveModelLayer(values.model ?? defaultModelSpec()))
      : undefined
    const retriever = yield* makeRetriever(library, {
      embedder,
      embeddingCache: values["embed-cache"] ?? defaultEmbeddingCache(),
      reranker
    })
    // as `run` does: a re-ranker or embedding model that fails leaves the lexical ranking, with a warning
    let fellBack = false
    const ranked = yield* retriever.search(query, top).pipe(
      Effect.catch((e) =>
        Effect.sync(() => {
          fellBack = true
          console.error(redactText(`smurfs tools search: warning: ${e.message}; the lexical ranking is shown instead`))
          return retriever.lexical(query, top)
        })
      )
    )
    const byName = new Map(library.tools.map((t) => [t.name, t]))
    if (values.json) {
      console.log(
        JSON.stringify(
          ranked.map((r) => row(byName.get(r.name), r)),
          null,
          2
        )
      )
      return
    }
    console.log(
      `${library.name}: ${ranked.length} of ${plural(library.tools.length, "tool")} for "${query}" (${fellBack ? "lexical" : retriever.mode})\n`
    )
    ranked.forEach((r, i) => {
      const tool = byName.get(r.name)
      console.log(`${String(i + 1).padStart(3)}. ${r.name}  ${r.score.toFixed(3)}`)
      if (tool) console.log(`     ${tool.description.split("\n", 1)[0]!.slice(0, 160)}`)
    })
  }).pipe(Effect.scoped)
  return runProgram(Effect.as(program, ExitCode.Ok), { command: "tools search" })
}
