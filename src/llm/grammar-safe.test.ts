// Every JSON Schema the agents, baselines, judges and the simulated environment send to a model, walked for
// the constructs llama.cpp's JSON-Schema-to-grammar converter reads differently from what zod validates.
import { describe, expect, it } from "vitest"
import { allLibraries, type Schema, sentSchemas } from "../../instruments/grammar/sent-schemas.ts"
import { FULL_DATA, lacks, MINI_DATA, skipNote } from "../../test/data.ts"
import { grammarSafe, isAnySchema } from "./grammar-safe.ts"

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
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"])
    if (Array.isArray(s[key])) for (const [i, x] of (s[key] as unknown[]).entries()) visit(x, `${path}.${key}[${i}]`)
  for (const key of ["properties", "$defs", "definitions"])
    if (typeof s[key] === "object" && s[key] !== null)
      for (const [k, v] of Object.entries(s[key] as Schema)) visit(v, `${path}.${key}.${k}`)
  return out
}

/** An empty schema `{}` means "any value" to zod and "a JSON object" to the grammar converter. */
const emptySchemas = (schema: Schema) =>
  subschemas(schema)
    .filter((x) => isAnySchema(x.schema))
    .map((x) => x.path)

describe("grammar-safe schemas", () => {
  const libraries = lacks(FULL_DATA) ? [] : allLibraries(`${FULL_DATA.path}/`)
  const tools = libraries.flatMap((l) => l.tools)
  const sent = sentSchemas(libraries)

  it("the fixture's ToolBench tools and every agent's format: no empty schema `{}`; the tools' numbers are never `integer`", () => {
    const sent = sentSchemas(allLibraries(`${MINI_DATA.path}/`))
    expect(sent.flatMap(({ name, schema }) => emptySchemas(schema).map((p) => `${name}: ${p}`))).toEqual([])
    const tools = sent.filter((x) => x.name.startsWith("tool "))
    expect(tools.length).toBeGreaterThan(20)
    expect(
      tools.flatMap(({ name, schema }) =>
        subschemas(schema)
          .filter((x) => (x.schema as Schema)["type"] === "integer")
          .map((x) => `${name}: ${x.path}`)
      )
    ).toEqual([])
  })

  it.skipIf(lacks(FULL_DATA))(
    `no schema sent to a model holds an empty schema \`{}\` (read as 'an object' by the grammar converter)${skipNote(FULL_DATA)}`,
    () => {
      expect(tools.length).toBeGreaterThan(1000)
      const offenders = sent.flatMap(({ name, schema }) => emptySchemas(schema).map((p) => `${name}: ${p}`))
      expect(offenders).toEqual([])
    }
  )

  it.skipIf(lacks(FULL_DATA))(
    `ToolBench NUMBER parameters are \`number\` (decimals valid), never \`integer\`${skipNote(FULL_DATA)}`,
    () => {
      const integers = sent
        .filter((x) => x.name.startsWith("tool "))
        .flatMap(({ name, schema }) =>
          subschemas(schema)
            .filter((x) => (x.schema as Schema)["type"] === "integer")
            .map((x) => `${name}: ${x.path}`)
        )
      expect(integers).toEqual([])
      const numbers = sent
        .filter((x) => x.name.startsWith("tool "))
        .flatMap(({ schema }) => subschemas(schema).filter((x) => (x.schema as Schema)["type"] === "number"))
      expect(numbers.length).toBeGreaterThan(100)
    }
  )

  it("the walk catches what it must: raw zod output of a record of unknowns has `{}`, the safe one has none", async () => {
    const { z } = await import("zod")
    const raw = z.toJSONSchema(
      z.object({ action_input: z.record(z.string(), z.unknown()), list: z.array(z.unknown()) }),
      { io: "input" }
    ) as Schema
    expect(emptySchemas(raw)).toEqual(["$.properties.action_input.additionalProperties", "$.properties.list.items"])
    expect(emptySchemas(grammarSafe(raw))).toEqual([])
  })

  it("no schema sent carries zod's safe-integer bounds, which llama-server cannot build a sampler for", async () => {
    const { z } = await import("zod")
    const raw = z.toJSONSchema(z.object({ dependsOn: z.array(z.number().int()), n: z.number().int().min(1) }), {
      io: "input"
    }) as Schema
    expect(JSON.stringify(raw)).toContain(String(Number.MAX_SAFE_INTEGER))
    const safe = grammarSafe(raw)
    expect(JSON.stringify(safe)).not.toContain(String(Number.MAX_SAFE_INTEGER))
    // a bound of the schema's own stays
    expect((safe["properties"] as Record<string, Schema>)["n"]).toMatchObject({ type: "integer", minimum: 1 })
    const bounded = sent.filter(({ schema }) => JSON.stringify(schema).includes(String(Number.MAX_SAFE_INTEGER)))
    expect(bounded.map((x) => x.name)).toEqual([])
  })

  it("every schema stays small: the largest is far below Ollama's 32 KB grammar cut-off", () => {
    const largest = Math.max(...sent.map((x) => JSON.stringify(x.schema).length))
    expect(largest).toBeLessThan(8_000)
  })
})
