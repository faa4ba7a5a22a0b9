// Every JSON Schema the agents, baselines, judges and the simulated environment send to a model, walked for
// the constructs llama.cpp's JSON-Schema-to-grammar converter reads differently from what zod validates.
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { IndexVerdict, StatusVerdict } from "../../bench/eval/judge-prompts.ts"
import { Answer } from "../agents/answerer.ts"
import { Thought } from "../agents/executor.ts"
import { finishSpec } from "../agents/finish.ts"
import { argsSchema, choiceSchema } from "../agents/guardrails.ts"
import { Plan } from "../agents/planner.ts"
import { JsonAction } from "../agents/react.ts"
import { Verdict } from "../agents/verifier.ts"
import { demoLibrary } from "../tools/demo/index.ts"
import { makeOfflineEnvironment } from "../tools/environments/offline.ts"
import { SimulatedResponse } from "../tools/environments/simulated.ts"
import { toolSpecs } from "../tools/library.ts"
import { toolbenchLibrary } from "../tools/toolbench/adapter.ts"
import type { Tool } from "../tools/tool.ts"
import { grammarSafe, isAnySchema } from "./grammar-safe.ts"
import { jsonSchemaOf } from "./structured.ts"

type Schema = Record<string, unknown>

/** Every subschema in a position that constrains a value, with its path. */
const subschemas = (schema: unknown, path = "$"): Array<{ path: string; schema: unknown }> => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return []
  const s = schema as Schema
  const out: Array<{ path: string; schema: unknown }> = []
  const visit = (sub: unknown, at: string) => {
    if (typeof sub === "boolean") return
    out.push({ path: at, schema: sub }, ...subschemas(sub, at))
  }
  for (const key of ["additionalProperties", "items", "not", "contains"]) if (key in s) visit(s[key], `${path}.${key}`)
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) if (Array.isArray(s[key])) (s[key] as unknown[]).forEach((x, i) => visit(x, `${path}.${key}[${i}]`))
  for (const key of ["properties", "$defs", "definitions"])
    if (typeof s[key] === "object" && s[key] !== null) for (const [k, v] of Object.entries(s[key] as Schema)) visit(v, `${path}.${key}.${k}`)
  return out
}

/** An empty schema `{}` means "any value" to zod and "a JSON object" to the grammar converter. */
const emptySchemas = (schema: Schema) => subschemas(schema).filter((x) => isAnySchema(x.schema)).map((x) => x.path)

const env = makeOfflineEnvironment("error")
const toolbenchTools = (): Array<Tool> => {
  const dir = new URL("../../../shared/toolbench/queries/", import.meta.url)
  const tools: Array<Tool> = []
  for (const group of ["G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction"]) {
    const queries = JSON.parse(readFileSync(new URL(`${group}.json`, dir), "utf8")) as Array<{ query_id: unknown; api_list: unknown[] }>
    for (const q of queries) tools.push(...toolbenchLibrary(`q${String(q.query_id)}`, q.api_list as never, env).tools)
  }
  return tools
}

describe("grammar-safe schemas", () => {
  const tools = [...demoLibrary().tools, ...toolbenchTools()]
  const sent: Array<{ name: string; schema: Schema }> = [
    ...Object.entries({ Plan, Thought, Answer, Verdict, JsonAction, SimulatedResponse, StatusVerdict, IndexVerdict }).map(([name, s]) => ({ name, schema: jsonSchemaOf(s) })),
    { name: "choose", schema: jsonSchemaOf(choiceSchema(tools.slice(0, 8).map((t) => t.name))) },
    { name: "Finish", schema: finishSpec().parameters },
    ...tools.map((t) => ({ name: `args of ${t.name}`, schema: jsonSchemaOf(argsSchema(t)) })),
    ...toolSpecs({ name: "all", tools }).map((s) => ({ name: `tool ${s.name}`, schema: s.parameters }))
  ]

  it("no schema sent to a model holds an empty schema `{}` (read as 'an object' by the grammar converter)", () => {
    expect(tools.length).toBeGreaterThan(1000)
    const offenders = sent.flatMap(({ name, schema }) => emptySchemas(schema).map((p) => `${name}: ${p}`))
    expect(offenders).toEqual([])
  })

  it("ToolBench NUMBER parameters are `number` (decimals valid), never `integer`", () => {
    const integers = sent.filter((x) => x.name.startsWith("tool ")).flatMap(({ name, schema }) => subschemas(schema).filter((x) => (x.schema as Schema)["type"] === "integer").map((x) => `${name}: ${x.path}`))
    expect(integers).toEqual([])
    const numbers = sent.filter((x) => x.name.startsWith("tool ")).flatMap(({ schema }) => subschemas(schema).filter((x) => (x.schema as Schema)["type"] === "number"))
    expect(numbers.length).toBeGreaterThan(100)
  })

  it("the walk catches what it must: raw zod output of a record of unknowns has `{}`, the safe one has none", async () => {
    const { z } = await import("zod")
    const raw = z.toJSONSchema(z.object({ action_input: z.record(z.string(), z.unknown()), list: z.array(z.unknown()) }), { io: "input" }) as Schema
    expect(emptySchemas(raw)).toEqual(["$.properties.action_input.additionalProperties", "$.properties.list.items"])
    expect(emptySchemas(grammarSafe(raw))).toEqual([])
  })

  it("every schema stays small: the largest is far below Ollama's 32 KB grammar cut-off", () => {
    const largest = Math.max(...sent.map((x) => JSON.stringify(x.schema).length))
    expect(largest).toBeLessThan(8_000)
  })
})
