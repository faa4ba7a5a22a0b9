import { readFileSync } from "node:fs"
import { pathToFileURL } from "node:url"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { ANY_DATA, DATA_EXAMPLE, FULL_DATA, lacks, skipNote } from "../../../test/data.ts"
import { jsonSchemaOf } from "../../llm/structured.ts"
import type { ToolCall, ToolEnvironment } from "../environments/environment.ts"
import { toolSpecs } from "../library.ts"
import { apiDescription, apiDocToTool, apiJsonSchema, apiParameters, toolbenchLibrary } from "./adapter.ts"
import { ApiDoc, readApiDoc } from "./api-doc.ts"

const TOOLBENCH = pathToFileURL(`${ANY_DATA.path}/`)
const readJson = (path: string): unknown => JSON.parse(readFileSync(new URL(path, TOOLBENCH), "utf8"))

/** An environment that records calls and answers with a fixed result. */
const recordingEnv = (content = "ok") => {
  const calls: ToolCall[] = []
  const env: ToolEnvironment = {
    name: "test",
    serve: (call) => Effect.sync(() => (calls.push(call), { ok: true, content }))
  }
  return { env, calls }
}
const missEnv: ToolEnvironment = { name: "miss", serve: () => Effect.succeed(undefined) }

type Query = { query_id: number; api_list: unknown[] }
type Available = {
  name: string
  description: string
  parameters: { properties: Record<string, { type: string; description?: string }>; required: string[] }
}

describe("ToolBench adapter", () => {
  it.skipIf(lacks(FULL_DATA, DATA_EXAMPLE))(
    `gives the same functions as StableToolBench's available_tools in the data example${skipNote(FULL_DATA, DATA_EXAMPLE)}`,
    () => {
      const queries = readJson("queries/G1_instruction.json") as Query[]
      for (const method of ["virtual_chatgpt_cot", "virtual_chatgpt_dfs"]) {
        const converted = readJson(
          `example/data_example/model_predictions_converted/${method}/G1_instruction.json`
        ) as Record<string, { available_tools: Available[] }>
        for (const [id, prediction] of Object.entries(converted)) {
          const query = queries.find((q) => String(q.query_id) === id)!
          const specs = toolSpecs(toolbenchLibrary("q", query.api_list as never, missEnv))
          const expected = prediction.available_tools.filter((t) => t.name !== "Finish")
          expect(specs.map((s) => s.name)).toEqual(expected.map((t) => t.name))
          for (const [i, spec] of specs.entries()) {
            const theirs = expected[i]!
            const ours = spec.parameters as Available["parameters"]
            expect(spec.description).toBe(theirs.description)
            expect(Object.keys(ours.properties)).toEqual(Object.keys(theirs.parameters.properties))
            expect(ours.required ?? []).toEqual(theirs.parameters.required.filter((r) => r !== ""))
            for (const [name, p] of Object.entries(theirs.parameters.properties)) {
              expect(ours.properties[name]).toEqual(p)
            }
          }
        }
      }
    }
  )

  const doc = ApiDoc.parse({
    category_name: "Data",
    tool_name: "Number Tools",
    api_name: "Get Digits",
    api_description: "Get Digits returns the digits of a number.",
    required_parameters: [{ name: "id", type: "NUMBER", description: "x".repeat(300), default: 5 }],
    optional_parameters: [
      { name: "verbose", type: "BOOLEAN", description: "more", default: "" },
      { name: "label", type: "STRING", description: "", default: "" }
    ]
  })

  it("reads docs leniently: missing fields get defaults", () => {
    const minimal = ApiDoc.parse({ tool_name: "T", api_name: "A" })
    expect(minimal).toMatchObject({
      category_name: "",
      api_description: "",
      required_parameters: [],
      optional_parameters: [],
      method: "GET"
    })
    expect(ApiDoc.parse({ tool_name: "T", api_name: "A", template_response: "text" }).template_response).toBe("text")
  })

  it("maps types, cuts descriptions to 256 and renames reserved parameters", () => {
    const tool = apiDocToTool(doc, missEnv)
    const [spec] = toolSpecs({ name: "x", tools: [tool] })
    const params = spec!.parameters as Available["parameters"]
    expect(params.properties.is_id).toMatchObject({ type: "number", example_value: 5 })
    expect(params.properties.is_id!.description).toHaveLength(256)
    expect(params.properties.verbose).toEqual({ type: "boolean", description: "more" })
    expect(params.properties.label).toMatchObject({ type: "string" })
    expect(params.required).toEqual(["is_id"])
    expect(tool.name).toBe("get_digits_for_number_tools")
    expect(apiDescription(doc)).toBe(
      'This is the subfunction for tool "number_tools", you can use this tool.The description of this function is: "get_digits_for_number_tools returns the digits of a number."'
    )
    expect(tool.meta).toMatchObject({
      category: "Data",
      tool: "Number Tools",
      api: "Get Digits",
      stdTool: "number_tools",
      stdApi: "get_digits"
    })
  })

  it("coerces NUMBER and BOOLEAN values, and keeps unknown keys", () => {
    const tool = apiDocToTool(doc, missEnv)
    expect(tool.parameters.parse({ is_id: "5", verbose: "true", label: 7, extra: "kept" })).toEqual({
      is_id: 5,
      verbose: true,
      label: "7",
      extra: "kept"
    })
    expect(tool.parameters.parse({ is_id: 5, verbose: "False" })).toEqual({ is_id: 5, verbose: false })
    expect(tool.parameters.safeParse({ is_id: "five" }).success).toBe(false)
    expect(tool.parameters.safeParse({}).success).toBe(false)
  })

  it("hides optional parameters of an API without required ones only where StableToolBench's functions are shown", () => {
    const noRequired = {
      tool_name: "T",
      api_name: "A",
      optional_parameters: [{ name: "q", type: "STRING", description: "", default: "" }]
    }
    const tool = apiDocToTool(noRequired, missEnv)
    // the tool itself (what the Smurfs executor reads and validation uses) keeps every declared parameter
    expect(Object.keys(tool.parameters.shape)).toEqual(["q"])
    expect(tool.parameters.parse({ q: "x" })).toEqual({ q: "x" })
    // the baselines' function list and the converted available_tools show StableToolBench's function
    expect(toolSpecs({ name: "x", tools: [tool] })[0]!.parameters["properties"]).toEqual({})
    const shown = toolSpecs({
      name: "x",
      tools: [apiDocToTool(noRequired, missEnv, { stableToolBenchQuirks: false })]
    })[0]!
    expect(Object.keys(shown.parameters["properties"] as object)).toEqual(["q"])
  })

  it("keeps a parameter required when an optional one has the same name (Riddlie's `id`)", () => {
    const riddle = {
      tool_name: "Riddlie ",
      api_name: "Riddle by ID",
      required_parameters: [{ name: "id", type: "string", description: "", default: "a" }],
      optional_parameters: [{ name: "id", type: "STRING", description: "", default: "b" }]
    }
    const [spec] = toolSpecs({ name: "x", tools: [apiDocToTool(riddle, missEnv)] })
    expect(spec!.parameters).toMatchObject({
      properties: { is_id: { type: "string", example_value: "b" } },
      required: ["is_id"]
    })
  })

  it("sends calls to its environment and cuts the observation to 1,024 characters", async () => {
    const { env, calls } = recordingEnv("y".repeat(2000))
    const tool = apiDocToTool(doc, env)
    const result = await Effect.runPromise(tool.call({ is_id: 5 }))
    expect(calls[0]).toMatchObject({ stdTool: "number_tools", stdApi: "get_digits", args: { is_id: 5 } })
    expect(result.content).toBe(`${"y".repeat(1024)}...`)
    expect(result.truncated).toBe(true)
    const wide = await Effect.runPromise(apiDocToTool(doc, env, { maxObservationChars: 5000 }).call({ is_id: 5 }))
    expect(wide.content).toHaveLength(2000)
  })

  it("answers a miss of every environment with ok:false", async () => {
    const result = await Effect.runPromise(apiDocToTool(doc, missEnv).call({ is_id: 1 }))
    expect(result).toMatchObject({ ok: false, error: "no environment answered the call to number_tools.get_digits" })
  })

  it.skipIf(lacks(FULL_DATA))(
    `gives every StableToolBench doc's JSON Schema, without zod, exactly as its zod schema converts${skipNote(FULL_DATA)}`,
    () => {
      const groups = ["G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction"]
      const docs = groups.flatMap((g) =>
        (readJson(`queries/${g}.json`) as Query[]).flatMap((q) => q.api_list.map((d) => ApiDoc.parse(d)))
      )
      expect(docs.length).toBeGreaterThan(3000)
      let hidden = 0
      for (const doc of docs)
        for (const quirks of [true, false]) {
          const direct = apiJsonSchema(doc, quirks)
          // the same text: key order included, as it is sent to the model
          expect(JSON.stringify(direct)).toBe(JSON.stringify(jsonSchemaOf(apiParameters(doc, quirks))))
          if (quirks && doc.required_parameters.length === 0 && doc.optional_parameters.length > 0) hidden++
        }
      expect(hidden).toBeGreaterThan(0)
    }
  )

  it("reads a doc already in shape as it is, and any other doc as zod parses it", () => {
    const groups = ["G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction"]
    const docs = groups.flatMap((g) => (readJson(`queries/${g}.json`) as Query[]).flatMap((q) => q.api_list))
    for (const doc of docs) {
      expect(readApiDoc(doc as never)).toBe(doc) // StableToolBench's files are in shape: no copy
      expect(ApiDoc.parse(doc)).toEqual(doc)
    }
    const loose = {
      tool_name: "T",
      api_name: "A",
      api_description: null,
      required_parameters: [{ name: "q", type: null, description: null }]
    }
    expect(readApiDoc(loose as never)).toEqual(ApiDoc.parse(loose))
    expect(readApiDoc(loose as never)).toMatchObject({
      category_name: "",
      api_description: "",
      method: "GET",
      optional_parameters: [],
      required_parameters: [{ type: "STRING", description: "" }]
    })
    expect(() => readApiDoc({ tool_name: "T", api_name: "A", template_response: 5 } as never)).toThrow()
  })

  it("shows a tool's functions with the JSON Schemas its zod parameters convert to", () => {
    const noRequired = {
      tool_name: "T",
      api_name: "A",
      optional_parameters: [{ name: "q", type: "NUMBER", description: "d", default: 3 }]
    }
    for (const quirks of [true, false]) {
      const tool = apiDocToTool(noRequired, missEnv, { stableToolBenchQuirks: quirks })
      expect(tool.parametersJsonSchema).toEqual(jsonSchemaOf(tool.parameters))
      const [spec] = toolSpecs({ name: "x", tools: [tool] })
      expect(spec!.parameters).toEqual(
        jsonSchemaOf(quirks ? (tool.meta!["stableToolBenchParameters"] as typeof tool.parameters) : tool.parameters)
      )
    }
  })

  it("shares one parameters schema between APIs that declare the same parameters, and only between those", () => {
    const twin = { ...doc, api_name: "other api", api_description: "Another API with the same parameters." }
    const a = apiDocToTool(doc, missEnv)
    const b = apiDocToTool(twin, missEnv)
    expect(b.parameters).toBe(a.parameters)
    expect(toolSpecs({ name: "x", tools: [b] })[0]!.parameters).toBe(
      toolSpecs({ name: "x", tools: [a] })[0]!.parameters
    )
    const described = apiDocToTool(
      { ...doc, required_parameters: [{ ...doc.required_parameters[0]!, description: "something else" }] },
      missEnv
    )
    expect(described.parameters).not.toBe(a.parameters)
    const [spec] = toolSpecs({ name: "x", tools: [described] })
    expect(spec!.parameters).toMatchObject({ properties: { is_id: { description: "something else" } } })
  })
})
