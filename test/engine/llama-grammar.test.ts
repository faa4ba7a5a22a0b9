// The grammars of the embedded engine: every schema smurfs sends, bounded, accepted by node-llama-cpp's converter.
import { describe, expect, it } from "vitest"
import { allLibraries, sentSchemas } from "../../instruments/grammar/sent-schemas.ts"
import { GRAMMAR_BOUNDS, grammarSchema, schemaTokens, toolCallSchema } from "../../src/llm/llama-grammar.ts"
import { MINI_DATA } from "../data.ts"

/** Every node of a schema, walked. */
const nodes = (schema: unknown): Array<Record<string, unknown>> => {
  if (typeof schema !== "object" || schema === null) return []
  if (Array.isArray(schema)) return schema.flatMap(nodes)
  return [schema as Record<string, unknown>, ...Object.values(schema).flatMap(nodes)]
}

describe("the embedded engine's grammars", () => {
  it("bound every string by maxLength, every array by maxItems and every free object by maxProperties", () => {
    const schema = grammarSchema({
      type: "object",
      properties: {
        text: { type: "string" },
        short: { type: "string", maxLength: 10 },
        list: { type: "array", items: { type: "string" } },
        any: {},
        either: { anyOf: [{ type: "string" }, { type: "null" }] },
        n: { type: "integer", minimum: 0, maximum: 9007199254740991 }
      },
      required: ["text"]
    })
    for (const node of nodes(schema)) {
      if (node["type"] === "string" && node["format"] === undefined) expect(node["maxLength"]).toBeTypeOf("number")
      if (node["type"] === "array") expect(node["maxItems"]).toBeTypeOf("number")
      if (typeof node["additionalProperties"] === "object") expect(node["maxProperties"]).toBeTypeOf("number")
      // keywords the grammar cannot say are gone (the parser checks them)
      expect(node["minimum"]).toBeUndefined()
    }
    const properties = (schema as { properties: Record<string, Record<string, unknown>> }).properties
    expect(properties["text"]!["maxLength"]).toBe(GRAMMAR_BOUNDS.stringChars)
    expect(properties["short"]!["maxLength"]).toBe(10)
    expect(properties["either"]!["oneOf"]).toHaveLength(2)
  })

  it("derive a token limit from the schema: more room for a longer string, never more than the cap", () => {
    const short = schemaTokens(grammarSchema({ type: "object", properties: { a: { type: "string", maxLength: 10 } } }))
    const long = schemaTokens(grammarSchema({ type: "object", properties: { a: { type: "string", maxLength: 500 } } }))
    expect(short).toBeGreaterThan(10)
    expect(long).toBeGreaterThan(500)
    expect(short).toBeLessThan(long)
    const huge = grammarSchema({ type: "array", items: { type: "array", items: { type: "string" } } })
    expect(schemaTokens(huge)).toBe(GRAMMAR_BOUNDS.maxTokens)
  })

  it("a tool call names one of the offered tools, with that tool's arguments", () => {
    const schema = toolCallSchema([
      { name: "a", parameters: { type: "object", properties: { x: { type: "number" } } } },
      { name: "b", parameters: {} }
    ]) as { oneOf: Array<{ properties: Record<string, Record<string, unknown>> }> }
    expect(schema.oneOf.map((o) => o.properties["name"])).toEqual([{ const: "a" }, { const: "b" }])
    expect(schema.oneOf[0]!.properties["arguments"]!["properties"]).toEqual({ x: { type: "number" } })
  })

  it("node-llama-cpp makes a grammar of every schema smurfs sends (formats and each tool's call)", async () => {
    const { getLlama } = await import("node-llama-cpp")
    const llama = await getLlama({ build: "never", gpu: false })
    const sent = sentSchemas(allLibraries(MINI_DATA.path))
    expect(sent.length).toBeGreaterThan(20)
    const failures: Array<string> = []
    for (const { name, sentAs, schema } of sent) {
      const bounded =
        sentAs === "format" ? grammarSchema(schema) : toolCallSchema([{ name: "tool", parameters: schema }])
      try {
        await llama.createGrammarForJsonSchema(bounded as never)
      } catch (e) {
        failures.push(`${name}: ${(e as Error).message}`)
      }
    }
    expect(failures).toEqual([])
  })
})
