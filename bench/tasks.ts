// A benchmark query as a Task: its id, its text and a tool library built from its tool docs.
import type { Task } from "../src/agents/task.ts"
import type { ToolLibrary } from "../src/tools/tool.ts"
import { type ApiListItem, type BenchQuery, toolDocsOf } from "./datasets.ts"

/** Builds a query's tool library from its docs (the CLI passes the ToolBench adapter on an environment). */
export type LibraryBuilder = (name: string, docs: ReadonlyArray<ApiListItem>) => ToolLibrary

/** The Task of a query; `toolset` picks all of its `api_list` or only its relevant APIs. */
export const taskOf = (query: BenchQuery, toolset: "all" | "relevant", build: LibraryBuilder): Task => ({
  id: query.id,
  query: query.query,
  tools: build(`${query.group}/${query.id}`, toolDocsOf(query, toolset))
})
