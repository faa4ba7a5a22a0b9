// Tool libraries: a named set of tools with unique names, lookups, and their specs for native tool calling.
import * as Data from "effect/Data"
import type { FailureKind } from "../failure.ts"
import type { ToolSpec } from "../llm/language-model.ts"
import { jsonSchemaOf } from "../llm/structured.ts"
import {
  STB_FUNCTION_PARAMETERS,
  STB_JSON_SCHEMA,
  STB_PARAMETERS,
  stableToolBenchParameters,
  type Tool,
  type ToolLibrary
} from "./tool.ts"

/** Two tools of one library share a name. */
export class DuplicateToolName extends Data.TaggedError("DuplicateToolName")<{
  readonly library: string
  readonly name: string
}> {
  get kind(): FailureKind {
    return "bad-input"
  }
  override get message() {
    return `The tool library "${this.library}" has two tools named "${this.name}". Rename one: names must be unique within a library.`
  }
}

/** A library from tools; throws DuplicateToolName when two tools share a name (a programming error). */
export const makeToolLibrary = (name: string, tools: ReadonlyArray<Tool>): ToolLibrary => {
  const seen = new Set<string>()
  for (const tool of tools) {
    if (seen.has(tool.name)) throw new DuplicateToolName({ library: name, name: tool.name })
    seen.add(tool.name)
  }
  return { name, tools: [...tools] }
}

/** The tool with exactly this name. */
export const findTool = (library: ToolLibrary, name: string): Tool | undefined =>
  library.tools.find((t) => t.name === name)

/**
 * The tool a model meant: the exact name, else a case-insensitive match, else the one tool whose name
 * ends with the given name (StableToolBench matches a function by suffix, as names are cut to 64 chars).
 */
export const resolveTool = (library: ToolLibrary, name: string): Tool | undefined => {
  const wanted = name.trim()
  const exact = findTool(library, wanted)
  if (exact) return exact
  const lower = wanted.toLowerCase()
  const folded = library.tools.filter((t) => t.name.toLowerCase() === lower)
  if (folded.length === 1) return folded[0]
  if (wanted.length === 0) return undefined
  const suffix = library.tools.filter((t) => t.name.endsWith(wanted))
  return suffix.length === 1 ? suffix[0] : undefined
}

/** The names of a library's tools, in order. */
export const toolNames = (library: ToolLibrary): ReadonlyArray<string> => library.tools.map((t) => t.name)

/** A library without the given tools (per-depth exclusion of failing tools). */
export const excludeTools = (library: ToolLibrary, names: Iterable<string>): ToolLibrary => {
  const excluded = new Set(names)
  return { name: library.name, tools: library.tools.filter((t) => !excluded.has(t.name)) }
}

/** A tool's arguments schema as JSON Schema: the one its source gave, else converted from its zod parameters. */
export const parametersJsonSchema = (tool: Tool): Record<string, unknown> =>
  (tool.parametersJsonSchema as Record<string, unknown> | undefined) ?? jsonSchemaOf(tool.parameters)

/** The JSON Schema of the arguments StableToolBench would show for `tool` (see `stableToolBenchParameters`). */
const stableToolBenchJsonSchema = (tool: Tool): Record<string, unknown> => {
  const given = tool.meta?.[STB_JSON_SCHEMA]
  if (typeof given === "object" && given !== null) return given as Record<string, unknown>
  // only a tool that declares a StableToolBench view pays for reading it (a lazy `parameters` stays unbuilt)
  return tool.meta?.[STB_PARAMETERS] === undefined
    ? parametersJsonSchema(tool)
    : jsonSchemaOf(stableToolBenchParameters(tool))
}

/**
 * One tool's spec as StableToolBench shows its functions (the baselines' function list, the converted
 * `available_tools`); the JSON Schema comes from its parameters, with StableToolBench's hidden
 * optional parameters hidden here too (see `stableToolBenchParameters`).
 */
export const toolSpec = (tool: Tool): ToolSpec => {
  let spec = specs.get(tool)
  if (spec === undefined) {
    spec = { name: tool.name, description: tool.description, parameters: stableToolBenchJsonSchema(tool) }
    specs.set(tool, spec)
  }
  return spec
}

/** Each tool's spec, built once: a run lists the same tools to the model on every task. Shared, never mutated. */
const specs = new WeakMap<Tool, ToolSpec>()

/** Specs of every tool in a library, in order. */
export const toolSpecs = (library: ToolLibrary): ReadonlyArray<ToolSpec> => library.tools.map(toolSpec)

/**
 * A tool's function as StableToolBench's own code sends it (the reference profile): a ToolBench API's parameters
 * as rapidapi.py writes them (`STB_FUNCTION_PARAMETERS`), any other tool's as `toolSpec` gives them.
 */
export const stableToolBenchFunctionSpec = (tool: Tool): ToolSpec => {
  const own = tool.meta?.[STB_FUNCTION_PARAMETERS]
  return typeof own === "object" && own !== null
    ? { name: tool.name, description: tool.description, parameters: own as Record<string, unknown> }
    : toolSpec(tool)
}
