// A task whose tools a recommender picks (`--toolset retrieve[:k]`): one set for the query, then one per subtask.
import { Effect } from "effect"
import { makeToolLibrary } from "../tools/library.ts"
import { narrowLibrary, type Retriever } from "../tools/retrieval/retriever.ts"
import type { Tool } from "../tools/tool.ts"
import type { Task } from "./task.ts"

/** The names of the top-k tools for the whole query, best first (recorded as a `task` retrieval event). */
export const retrieveTaskSet = (retriever: Retriever, query: string, k: number): Effect.Effect<Array<string>> =>
  Effect.map(narrowLibrary(retriever, query, k, "task"), (library) => library.tools.map((t) => t.name))

/** The names of a set that the retriever's library does not hold (a set recorded against another corpus). */
export const unknownNames = (retriever: Retriever, set: ReadonlyArray<string>): Array<string> => {
  const names = new Set(retriever.library.tools.map((t) => t.name))
  return set.filter((name) => !names.has(name))
}

/**
 * The task on a retrieved set: `tools` is the query's set (what ReAct and DFSDT see), `retrieve` the
 * per-subtask retrieval from the whole library that the Smurfs executor asks for each subtask. One
 * function for `smurfs run`, `smurfs bench` and the queue workers, so that all three retrieve alike.
 */
export const retrievalTask = (retriever: Retriever, task: { readonly id: string; readonly query: string; readonly name: string }, set: ReadonlyArray<string>, k: number): Task => {
  const byName = new Map(retriever.library.tools.map((t) => [t.name, t]))
  return {
    id: task.id,
    query: task.query,
    tools: makeToolLibrary(task.name, set.map((name) => byName.get(name)).filter((t): t is Tool => t !== undefined)),
    retrieve: (subtask) => narrowLibrary(retriever, subtask, k, "subtask")
  }
}
