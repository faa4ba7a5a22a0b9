// The fused executor's JSON reply schema (issue 33): one branch per tool with that tool's own parameters, so that a
// server decoding under the schema writes the chosen tool's arguments as its schema says; too large a library gets
// the loose reply (its arguments checked after the reply), so that no grammar outgrows a server's buffer.
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { jsonSchemaOf } from "../llm/structured.ts"
import { defineTool } from "../tools/define-tool.ts"
import { fusedJson, fusedJsonAgain } from "./executor-fused.ts"
import { argsSchema } from "./guardrails.ts"

const tool = <S extends z.ZodRawShape>(name: string, parameters: z.ZodObject<S>) =>
  defineTool({ name, description: `the ${name} tool`, parameters, execute: () => "ok" })

const weather = tool("weather", z.object({ city: z.string(), days: z.number().int().min(1).max(7).optional() }))
const convert = tool("convert", z.object({ value: z.number(), unit: z.enum(["m", "ft"]) }))

describe("the fused executor's JSON reply schema", () => {
  it("has one branch per tool: its name, then its own arguments schema, thought first", () => {
    const schema = jsonSchemaOf(fusedJson(["weather", "convert"], [weather, convert]))
    const branches = schema["anyOf"] as Array<Record<string, any>>
    expect(branches.map((b) => b["properties"].tool.enum)).toEqual([["weather"], ["convert"]])
    expect(branches[0]!["properties"].arguments).toEqual(jsonSchemaOf(argsSchema(weather)))
    expect(branches[1]!["properties"].arguments).toEqual(jsonSchemaOf(argsSchema(convert)))
    expect(Object.keys(branches[0]!["properties"])).toEqual(["thought", "tool", "arguments"])
    expect(branches[0]!["required"]).toEqual(["thought", "tool", "arguments"])
    // after a failed call the thought stands: no thought in any branch
    const again = jsonSchemaOf(fusedJsonAgain(["convert"], [convert]))
    expect((again["anyOf"] as Array<Record<string, any>>).map((b) => Object.keys(b["properties"]))).toEqual([
      ["tool", "arguments"]
    ])
  })

  it("reads any arguments object, so that the guardrails reflect a wrong one precisely", () => {
    const reply = fusedJson(["convert"], [convert]).parse({ thought: "t", tool: "convert", arguments: { value: "x" } })
    expect(reply.arguments).toEqual({ value: "x" })
  })

  it("falls back to the loose reply for a library whose branches would make too large a grammar", () => {
    const many = Array.from({ length: 60 }, (_, i) =>
      tool(`tool_${i}`, z.object({ query: z.string().describe("what to look up, in the words of the question") }))
    )
    const schema = jsonSchemaOf(
      fusedJson(
        many.map((t) => t.name),
        many
      )
    )
    expect(schema["anyOf"]).toBeUndefined()
    expect((schema["properties"] as Record<string, any>)["tool"].enum).toHaveLength(60)
  })
})
