// A task whose tools a recommender picks (`--toolset retrieve[:k]`): one set for the query, then one per subtask.
import type * as Effect from "effect/Effect"
import { makeToolLibrary } from "../tools/library.ts"
import type { Ranked } from "../tools/retrieval/lexical.ts"
import { narrowLibrary, type Retriever, rankTools } from "../tools/retrieval/retriever.ts"
import type { Tool } from "../tools/tool.ts"
import type { Task } from "./task.ts"

/** A tool of a task's set: its name, and its score when it was ranked now (a recorded set has names only). */
export type SetEntry = { readonly name: string; readonly score?: number | undefined }

/** The top-k tools for the whole query, best first; `warn` hears of a retrieval that found none and fell back. */
export const retrieveTaskSet = (
  retriever: Retriever,
  query: string,
  k: number,
  warn?: (text: string) => void
): Effect.Effect<Array<Ranked>> => rankTools(retriever, query, k, warn)

/**
 * The task on a retrieved set: `tools` is the query's set (what ReAct and DFSDT see, recorded in the
 * trajectory as a `task` retrieval), `retrieve` the per-subtask retrieval from the whole library that
 * the Smurfs executor asks for each subtask. One function for `smurfs run`, `smurfs bench` and the
 * queue workers, so that all three retrieve alike.
 */
export const retrievalTask = (
  retriever: Retriever,
  task: { readonly id: string; readonly query: string; readonly name: string },
  set: ReadonlyArray<SetEntry | string>,
  k: number,
  warning?: string
): Task => {
  const byName = new Map(retriever.library.tools.map((t) => [t.name, t]))
  const entries = set.map((e): SetEntry => (typeof e === "string" ? { name: e } : e))
  return {
    id: task.id,
    query: task.query,
    tools: makeToolLibrary(
      task.name,
      entries.map((e) => byName.get(e.name)).filter((t): t is Tool => t !== undefined)
    ),
    retrieve: (subtask) => narrowLibrary(retriever, subtask, k, "subtask"),
    retrieved: { query: task.query, k, mode: retriever.mode, tools: entries, ...(warning ? { warning } : {}) }
  }
}
