// The ToolBench adapter: StableToolBench API docs become Tools whose calls an environment serves.
import * as Effect from "effect/Effect"
import { LRUCache } from "lru-cache"
import { z } from "zod"
import { ANY_JSON_VALUE } from "../../llm/grammar-safe.ts"
import { cutContent, guardToolCall, OBSERVATION_MAX_CHARS, truncateObservation } from "../call.ts"
import type { ToolEnvironment } from "../environments/environment.ts"
import { makeToolLibrary } from "../library.ts"
import type { Tool, ToolLibrary, ToolResult } from "../tool.ts"
import { STB_FUNCTION_PARAMETERS, STB_JSON_SCHEMA, STB_PARAMETERS } from "../tool.ts"
import { type ApiDoc, type ApiDocInput, type ApiParameter, readApiDoc } from "./api-doc.ts"
import { functionName, standardizeParameterName, stdApiName, stdToolName } from "./names.ts"
import { type ToolsFolder, withToolDescription } from "./tools-folder.ts"

/** StableToolBench cuts API and parameter descriptions to this many characters. */
export const MAX_DESCRIPTION = 256

export interface ToolbenchToolOptions {
  /** Characters of an observation the model sees before "..." (ToolBench: 1,024). */
  readonly maxObservationChars?: number | undefined
  /** Milliseconds before a call is reported as a timeout. */
  readonly timeoutMs?: number | undefined
  /**
   * StableToolBench drops the optional parameters of an API that has no required ones (its loop over
   * optional parameters sits inside the `if required_parameters` block). True (the default) reproduces
   * that where StableToolBench's functions are shown (the baselines' function list and the converted
   * `available_tools`, through `meta.stableToolBenchParameters`); false shows them there too. The
   * tool's own `parameters`, which the Smurfs executor reads and validation uses, always hold every
   * parameter the doc declares.
   */
  readonly stableToolBenchQuirks?: boolean | undefined
  /**
   * StableToolBench's tools folder (`--stb-tools`): a doc without a `tool_description` takes its tool's own from there,
   * for the task description's tool line and the simulator's api_doc.
   */
  readonly toolsFolder?: ToolsFolder | undefined
}

const NUMERIC = /^\s*-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?\s*$/i

/** "5" -> 5 for NUMBER parameters; anything else is left for validation to reject. */
const toNumber = (v: unknown): unknown => (typeof v === "string" && NUMERIC.test(v) ? Number(v) : v)

/** "true"/"True"/"1" -> true for BOOLEAN parameters. */
const toBoolean = (v: unknown): unknown => {
  if (typeof v === "string") {
    const s = v.trim().toLowerCase()
    if (s === "true" || s === "1" || s === "yes") return true
    if (s === "false" || s === "0" || s === "no") return false
  }
  if (v === 1 || v === 0) return v === 1
  return v
}

/** Numbers and booleans sent for a STRING parameter become text, as a web API would receive them. */
const toText = (v: unknown): unknown => (typeof v === "number" || typeof v === "boolean" ? String(v) : v)

/** One parameter's JSON Schema: the type StableToolBench maps, its description cut to 256 and its example. */
const parameterJsonSchema = (p: ApiParameter): Record<string, unknown> => {
  // Validated as any number, so sent as `number`: ToolBench's own "integer" would make a decoding grammar refuse 49.34.
  const type = p.type === "NUMBER" ? "number" : p.type === "BOOLEAN" ? "boolean" : "string"
  const description = p.description.slice(0, MAX_DESCRIPTION)
  // StableToolBench shows the default when `len(str(default)) != 0`: only an empty string is hidden
  return p.default !== undefined && p.default !== ""
    ? { type, description, example_value: p.default }
    : { type, description }
}

/** The zod schema of one parameter: its JSON Schema as metadata, with lenient coercion of the value. */
const parameterSchema = (p: ApiParameter): z.ZodType => {
  const meta = parameterJsonSchema(p)
  if (p.type === "NUMBER") return z.preprocess(toNumber, z.number()).meta(meta)
  if (p.type === "BOOLEAN") return z.preprocess(toBoolean, z.boolean()).meta(meta)
  return z.preprocess(toText, z.string()).meta(meta)
}

/**
 * The parameters an API's arguments take, by standardized name in order: required ones, then optional
 * ones (dropped when `quirks` and the API has no required one, as StableToolBench drops them). An
 * optional parameter named like a required one replaces its description but stays required, as in
 * StableToolBench.
 */
const argumentsOf = (
  doc: ApiDoc,
  quirks: boolean
): Map<string, { readonly parameter: ApiParameter; readonly required: boolean }> => {
  const out = new Map<string, { readonly parameter: ApiParameter; readonly required: boolean }>()
  for (const parameter of doc.required_parameters)
    out.set(standardizeParameterName(parameter.name), { parameter, required: true })
  if (!quirks || doc.required_parameters.length > 0)
    for (const parameter of doc.optional_parameters) {
      const name = standardizeParameterName(parameter.name)
      out.set(name, { parameter, required: out.get(name)?.required === true })
    }
  return out
}

/**
 * One API's arguments schema as JSON Schema, built from the doc as `jsonSchemaOf(apiParameters(doc))`
 * converts it (the adapter's tests compare the two on every StableToolBench doc), so a task's tools can
 * be shown to a model without building or converting their zod schemas.
 */
const buildApiJsonSchema = (doc: ApiDoc, quirks: boolean): Record<string, unknown> => {
  const args = argumentsOf(doc, quirks)
  const properties: Record<string, Record<string, unknown>> = {}
  for (const [name, { parameter }] of args) properties[name] = parameterJsonSchema(parameter)
  const required = Object.keys(properties).filter((name) => args.get(name)?.required)
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: { ...ANY_JSON_VALUE }
  }
}

/** Python's `str()` of a decoded JSON value is empty only for the empty string: that default is not shown. */
const shownDefault = (value: unknown): boolean => value !== ""

/**
 * An API's parameters exactly as StableToolBench's `api_json_to_openai_json` (rapidapi.py) writes them, for the
 * reference profile: NUMBER as `integer`, `required` and `optional` lists that start with `""`, no
 * `additionalProperties`, and no parameter at all for an API without required ones (both loops sit under that test).
 */
export const stableToolBenchFunctionParameters = (doc: ApiDoc): Record<string, unknown> => {
  const properties: Record<string, Record<string, unknown>> = {}
  const required = [""]
  const optional = [""]
  const typeOf = (p: ApiParameter) => (p.type === "NUMBER" ? "integer" : p.type === "BOOLEAN" ? "boolean" : "string")
  const describe = (p: ApiParameter) => {
    const description = p.description.slice(0, MAX_DESCRIPTION)
    return p.default !== undefined && shownDefault(p.default)
      ? { type: typeOf(p), description, example_value: p.default }
      : { type: typeOf(p), description }
  }
  if (doc.required_parameters.length > 0) {
    for (const p of doc.required_parameters) {
      const name = standardizeParameterName(p.name)
      properties[name] = describe(p)
      required.push(name)
    }
    for (const p of doc.optional_parameters) {
      const name = standardizeParameterName(p.name)
      properties[name] = describe(p)
      optional.push(name)
    }
  }
  return { type: "object", properties, required, optional }
}

/** An API's arguments schema as JSON Schema, and as zod once something validates with it. */
interface ApiSchemas {
  readonly json: Record<string, unknown>
  zod: z.ZodObject<z.ZodRawShape> | undefined
}

/**
 * Arguments schemas by the parameter lists they come from. A bench builds each task's library anew, and
 * many APIs declare the same parameters: sharing the (immutable) schemas saves building them again.
 * Bounded, so a long run's memory stays flat: a tool keeps its own schemas, so the cache only spares the
 * next tasks building them again (0.06 ms an API as JSON Schema, 0.2 ms as zod). StableToolBench's 765
 * queries have 1,583 distinct lists, which a bound of 4,096 kept all of by the end of a run, zod schemas
 * and all (about 8 KB a list).
 */
const parameterSchemas = new LRUCache<string, ApiSchemas>({ max: 256 })

const apiSchemas = (doc: ApiDoc, quirks: boolean): ApiSchemas => {
  const key = JSON.stringify([quirks, doc.required_parameters, doc.optional_parameters])
  const known = parameterSchemas.get(key)
  if (known) return known
  const schemas: ApiSchemas = { json: buildApiJsonSchema(doc, quirks), zod: undefined }
  parameterSchemas.set(key, schemas)
  return schemas
}

/** The zod schema of `schemas`, built on first use from `doc` (any doc with the same parameters gives the same schema). */
const zodOf = (schemas: ApiSchemas, doc: ApiDoc, quirks: boolean): z.ZodObject<z.ZodRawShape> =>
  (schemas.zod ??= buildApiParameters(doc, quirks))

/** The arguments schema of an API: required parameters, then optional ones; unknown keys are kept. */
export const apiParameters = (doc: ApiDoc, quirks = true): z.ZodObject<z.ZodRawShape> =>
  zodOf(apiSchemas(doc, quirks), doc, quirks)

/** `apiParameters(doc, quirks)` as JSON Schema, without building the zod schema. */
export const apiJsonSchema = (doc: ApiDoc, quirks = true): Record<string, unknown> => apiSchemas(doc, quirks).json

/** The arguments schema of an API as zod: unknown keys are kept. */
const buildApiParameters = (doc: ApiDoc, quirks: boolean): z.ZodObject<z.ZodRawShape> => {
  const shape: Record<string, z.ZodType> = {}
  for (const [name, { parameter, required }] of argumentsOf(doc, quirks))
    shape[name] = required ? parameterSchema(parameter) : parameterSchema(parameter).optional()
  return z.looseObject(shape) as unknown as z.ZodObject<z.ZodRawShape>
}

/** StableToolBench's function description: the tool line, then the API description with its name replaced by the function name. */
export const apiDescription = (doc: ApiDoc): string => {
  const head = `This is the subfunction for tool "${stdToolName(doc)}", you can use this tool.`
  const description = doc.api_description.trim()
  if (description === "") return head
  const named = doc.api_name === "" ? description : description.replaceAll(doc.api_name, functionName(doc))
  const cut = named.slice(0, MAX_DESCRIPTION)
  return `${head}The description of this function is: "${cut}"`
}

const missResult = (tool: string, api: string): ToolResult => ({
  ok: false,
  missed: true,
  content: "",
  error: `no environment answered the call to ${tool}.${api}`
})

/** A Tool for one API doc; its calls go to `env`, and the content is cut like a ToolBench observation. */
export const apiDocToTool = (
  input: ApiDoc | ApiDocInput,
  env: ToolEnvironment,
  options: ToolbenchToolOptions = {}
): Tool => {
  const read = readApiDoc(input)
  const doc = withToolDescription(read, options.toolsFolder)
  const stdTool = stdToolName(doc)
  const stdApi = stdApiName(doc)
  const name = functionName(doc)
  const maxObservation = options.maxObservationChars ?? OBSERVATION_MAX_CHARS
  const hidesOptional =
    (options.stableToolBenchQuirks ?? true) &&
    doc.required_parameters.length === 0 &&
    doc.optional_parameters.length > 0
  const schemas = apiSchemas(doc, false)
  const shown = hidesOptional ? apiSchemas(doc, true) : undefined
  const meta: Record<string, unknown> = {
    category: doc.category_name,
    tool: doc.tool_name,
    api: doc.api_name,
    stdTool,
    stdApi,
    doc
  }
  // the function as StableToolBench's own code shows it (the reference profile's baselines), built when first read
  let stbFunction: Record<string, unknown> | undefined
  Object.defineProperty(meta, STB_FUNCTION_PARAMETERS, {
    enumerable: false,
    get: () => (stbFunction ??= stableToolBenchFunctionParameters(doc))
  })
  // the tool's own description (StableToolBench's task description lists it), when the doc carries one
  if (typeof doc["tool_description"] === "string") meta["toolDescription"] = doc["tool_description"]
  // read from the tools folder: what StableToolBench shows, even when empty ("None")
  if (doc !== read) meta["toolDescriptionFromFolder"] = true
  // zod schemas are built when first used (validating a call); showing the tools to a model needs only their JSON Schemas
  if (shown) {
    Object.defineProperty(meta, STB_PARAMETERS, { enumerable: true, get: () => zodOf(shown, doc, true) })
    meta[STB_JSON_SCHEMA] = shown.json
  }
  return {
    name,
    description: apiDescription(doc),
    get parameters() {
      return zodOf(schemas, doc, false)
    },
    parametersJsonSchema: schemas.json,
    meta,
    call: (args) =>
      guardToolCall(
        name,
        env.serve({ doc, stdTool, stdApi, args }).pipe(
          Effect.map((result) => result ?? missResult(stdTool, stdApi)),
          Effect.map((result) => {
            const content = truncateObservation(result.content, maxObservation)
            return content === result.content ? result : cutContent(result, content)
          })
        ),
        { timeoutMs: options.timeoutMs }
      )
  }
}

/**
 * A library of ToolBench APIs. Two docs with the same function name (same tool and API after
 * standardization, or the same last 64 characters) keep the first, as StableToolBench's name lookup does.
 */
export const toolbenchLibrary = (
  name: string,
  apiList: ReadonlyArray<ApiDoc | ApiDocInput>,
  env: ToolEnvironment,
  options: ToolbenchToolOptions = {}
): ToolLibrary => {
  const tools = new Map<string, Tool>()
  for (const doc of apiList) {
    const tool = apiDocToTool(doc, env, options)
    if (!tools.has(tool.name)) tools.set(tool.name, tool)
  }
  return makeToolLibrary(name, [...tools.values()])
}
