// The pooled ToolBench corpus: every API of every loaded query, deduplicated, as one tool library.
import type { ToolEnvironment } from "../src/tools/environments/environment.ts"
import { makeToolLibrary } from "../src/tools/library.ts"
import { uniqueName } from "../src/tools/sources/tool-names.ts"
import type { Tool, ToolLibrary } from "../src/tools/tool.ts"
import { apiDocToTool } from "../src/tools/toolbench/adapter.ts"
import type { ApiDocInput } from "../src/tools/toolbench/api-doc.ts"
import type { ApiListItem, BenchQuery } from "./datasets.ts"

/** The identity of an API across query files: its tool and API names as in the data. */
export const apiKey = (tool: string, api: string) => `${tool}\u0000${api}`

/** Every API doc of the queries, first occurrence of each (tool_name, api_name) kept, in file order. */
export const pooledApis = (queries: ReadonlyArray<Pick<BenchQuery, "apiList">>): Array<ApiListItem> => {
  const seen = new Map<string, ApiListItem>()
  for (const query of queries)
    for (const doc of query.apiList)
      if (!seen.has(apiKey(doc.tool_name, doc.api_name))) seen.set(apiKey(doc.tool_name, doc.api_name), doc)
  return [...seen.values()]
}

/** The corpus: one tool per distinct API; the rare APIs whose function names collide get a `_2` suffix so none is lost. */
export interface Corpus {
  readonly library: ToolLibrary
  /** The corpus tool name of an API, by `apiKey(tool_name, api_name)`. */
  readonly nameOf: ReadonlyMap<string, string>
}

export const toolbenchCorpus = (queries: ReadonlyArray<Pick<BenchQuery, "apiList">>, env: ToolEnvironment): Corpus => {
  const taken = new Set<string>()
  const nameOf = new Map<string, string>()
  const tools: Array<Tool> = pooledApis(queries).map((doc) => {
    const tool = apiDocToTool(doc as ApiDocInput, env)
    const name = uniqueName(tool.name, taken)
    taken.add(name)
    nameOf.set(apiKey(doc.tool_name, doc.api_name), name)
    return name === tool.name ? tool : { ...tool, name }
  })
  return { library: makeToolLibrary("toolbench-corpus", tools), nameOf }
}

/** The corpus names of a query's relevant APIs (those present in the corpus). */
export const relevantNames = (corpus: Corpus, query: Pick<BenchQuery, "relevant">): Array<string> => [
  ...new Set(query.relevant.flatMap(([tool, api]) => corpus.nameOf.get(apiKey(tool, api)) ?? []))
]
