// Every JSON Schema the agents, baselines, judges and the simulated environment send to a model server, by
// name: what the grammar-safety walk (src/llm/grammar-safe.test.ts) and the grammar-size benchmark read.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { GROUPS } from "../../bench/datasets.ts"
import { IndexVerdict, StatusOnly, StatusVerdict } from "../../bench/eval/judge-prompts.ts"
import { AnswerVerdict } from "../../src/agents/answer-verify.ts"
import { Answer } from "../../src/agents/answerer.ts"
import { JsonAction } from "../../src/agents/chain.ts"
import { Thought } from "../../src/agents/executor.ts"
import { fusedJson } from "../../src/agents/executor-fused.ts"
import { finishSpec } from "../../src/agents/finish.ts"
import { argsSchema, choiceSchema } from "../../src/agents/guardrails.ts"
import { Plan } from "../../src/agents/planner.ts"
import { Verdict } from "../../src/agents/verifier.ts"
import { jsonSchemaOf } from "../../src/llm/structured.ts"
import { demoLibrary } from "../../src/tools/demo/index.ts"
import { makeOfflineEnvironment } from "../../src/tools/environments/offline.ts"
import { SimulatedResponse } from "../../src/tools/environments/simulated.ts"
import { toolSpecs } from "../../src/tools/library.ts"
import type { ToolLibrary } from "../../src/tools/tool.ts"
import { toolbenchLibrary } from "../../src/tools/toolbench/adapter.ts"

export type Schema = Record<string, unknown>

/**
 * One schema as a server gets it. `format`: Ollama's `format` / an OpenAI-compatible `response_format`
 * (Ollama turns it into a grammar); `tool`: a tool's `parameters` (llama-server turns those into its
 * tool-call grammar; Ollama does not constrain tool calls).
 */
export interface SentSchema {
  readonly name: string
  readonly sentAs: "format" | "tool"
  readonly schema: Schema
}

/** The ToolBench tool libraries of every query of the six test groups in `dataDir` (its `queries/` files), one per query. */
export const toolbenchLibraries = (dataDir: string): Array<ToolLibrary> => {
  const env = makeOfflineEnvironment("error")
  return GROUPS.flatMap((group) => {
    const queries = JSON.parse(readFileSync(join(dataDir, "queries", `${group}.json`), "utf8")) as Array<{
      query_id: unknown
      api_list: unknown[]
    }>
    return queries.map((q) => toolbenchLibrary(`q${String(q.query_id)}`, q.api_list as never, env))
  })
}

/**
 * Every schema sent for these libraries: each agent's and judge's reply format, the Smurfs executor's
 * tool choice (an enum of one library's tool names), fused reply (its JSON fallback) and argument formats, and the tools' parameters
 * with the Finish function as ReAct/DFSDT send them.
 */
export const sentSchemas = (libraries: ReadonlyArray<ToolLibrary>): Array<SentSchema> => {
  const formats = {
    Plan,
    Thought,
    Answer,
    Verdict,
    AnswerVerdict,
    JsonAction,
    SimulatedResponse,
    StatusVerdict,
    StatusOnly,
    IndexVerdict
  }
  const tools = libraries.flatMap((l) => l.tools)
  return [
    ...Object.entries(formats).map(([name, s]) => ({ name, sentAs: "format" as const, schema: jsonSchemaOf(s) })),
    ...libraries.map((l) => ({
      name: `choose in ${l.name}`,
      sentAs: "format" as const,
      schema: jsonSchemaOf(choiceSchema(l.tools.map((t) => t.name)))
    })),
    // the fused executor's JSON reply: one branch per tool with its parameters (its native tools' are the argument formats below)
    ...libraries.map((l) => ({
      name: `fused in ${l.name}`,
      sentAs: "format" as const,
      schema: jsonSchemaOf(
        fusedJson(
          l.tools.map((t) => t.name),
          l.tools
        )
      )
    })),
    ...tools.map((t) => ({
      name: `args of ${t.name}`,
      sentAs: "format" as const,
      schema: jsonSchemaOf(argsSchema(t))
    })),
    { name: "Finish", sentAs: "tool" as const, schema: finishSpec().parameters },
    ...libraries.flatMap((l) =>
      toolSpecs(l).map((s) => ({ name: `tool ${s.name}`, sentAs: "tool" as const, schema: s.parameters }))
    )
  ]
}

/** The demo library and every ToolBench query's library (from `dataDir`, the shared data next to the repo by default). */
export const allLibraries = (dataDir: string): Array<ToolLibrary> => [demoLibrary(), ...toolbenchLibraries(dataDir)]
