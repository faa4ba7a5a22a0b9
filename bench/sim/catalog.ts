// The ToolBench queries the simulated model knows, so that it can recognize a task from the prompt when no CurrentTask is given.
import * as Effect from "effect/Effect"
import type { GenerateRequest } from "../../src/llm/language-model.ts"
import { loadQueries } from "../datasets.ts"
import { type KnownApi, type Recordings, type SimQuery, type SimTask, simTaskOf } from "./knowledge.ts"

export interface Catalog {
  /** The task whose query an opening message of the prompt was rendered from (planner, final answer, ReAct, DFSDT prompts). */
  readonly recognize: (request: GenerateRequest) => SimTask | undefined
  /** What the model knows about any API of any query, by function name (for prompts that name a tool but not the query). */
  readonly anyApi: ReadonlyMap<string, KnownApi>
  readonly taskOf: (query: SimQuery) => SimTask
}

const firstLine = (text: string): string => text.trim().split("\n", 1)[0]!.trim()

/** A catalog over the queries in `dataDir` (none when they cannot be read: the model then answers generically). */
export const makeCatalog = (dataDir: string, recordings: Recordings): Catalog => {
  const tasks = new WeakMap<SimQuery, SimTask>()
  const taskOf = (query: SimQuery): SimTask => {
    let task = tasks.get(query)
    if (!task) tasks.set(query, (task = simTaskOf(query, recordings)))
    return task
  }
  // Read on first need: a run that always provides CurrentTask never pays for it.
  let all: ReadonlyArray<SimQuery> | undefined
  let byLine: Map<string, SimQuery> | undefined
  let anyApi: Map<string, KnownApi> | undefined
  const queries = () =>
    (all ??= Effect.runSync(
      loadQueries({ dir: dataDir }).pipe(Effect.orElseSucceed((): ReadonlyArray<SimQuery> => []))
    ))
  const lines = () => {
    if (!byLine) {
      byLine = new Map()
      for (const q of queries()) if (!byLine.has(firstLine(q.query))) byLine.set(firstLine(q.query), q)
    }
    return byLine
  }
  return {
    taskOf,
    recognize: (request) => {
      const index = lines()
      for (const m of request.messages) {
        if (m.role === "assistant" || m.role === "tool") break
        const query = m.values?.["query"]
        const hit = typeof query === "string" ? index.get(firstLine(query)) : undefined
        if (hit) return taskOf(hit)
      }
      return undefined
    },
    get anyApi() {
      if (!anyApi) {
        anyApi = new Map()
        for (const q of queries())
          for (const [name, api] of taskOf(q).byName) if (!anyApi.has(name)) anyApi.set(name, api)
      }
      return anyApi
    }
  }
}
