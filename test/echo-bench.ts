// Test helper: the in-memory bench the runner tests drive: queries of one group, each task with an echo tool, the run
// configuration of a scripted react run, and the script that echoes once, then answers.
import { Effect } from "effect"
import { z } from "zod"
import type { BenchQuery } from "../bench/datasets.ts"
import { RUN_FORMAT_VERSION, type RunConfig } from "../bench/run-format.ts"
import type { Task } from "../src/agents/task.ts"
import type { Tool } from "../src/tools/tool.ts"

export const GROUP = "G1_instruction"

/** One query per id, in group GROUP, naming the echo tool. */
export const echoQueries = (ids: ReadonlyArray<string>): Array<BenchQuery> =>
  ids.map((id) => ({
    group: GROUP,
    id,
    query: `question ${id}`,
    apiList: [{ tool_name: "Echo", api_name: "echo" }],
    relevant: []
  }))

export const echoTool: Tool = {
  name: "echo_for_echo",
  description: "Echo a text",
  parameters: z.object({ text: z.string() }),
  call: (args) => Effect.succeed({ ok: true, content: String(args["text"]) })
}

/** A query's task: its id and text, with the echo tool alone. */
export const echoTaskOf = (q: BenchQuery): Task => ({
  id: q.id,
  query: q.query,
  tools: { name: q.id, tools: [echoTool] }
})

/** run.json of a react run of the scripted model over GROUP. */
export const echoRunConfig = (concurrency: number): RunConfig => ({
  formatVersion: RUN_FORMAT_VERSION,
  packageVersion: "test",
  createdAt: "2026-01-01T00:00:00.000Z",
  data: "memory",
  groups: [GROUP],
  methods: ["react"],
  model: "scripted:test",
  envs: ["offline"],
  toolset: "all",
  concurrency,
  options: {}
})

/** A react run whose model echoes the query, then answers with it. */
export const echoScript = {
  $cycle: true,
  "*": [
    { toolCalls: [{ name: "echo_for_echo", arguments: { text: "hi" } }] },
    { toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }] }
  ]
}
