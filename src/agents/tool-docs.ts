// How tools are described to the agents: a list of names and descriptions, and one tool's full doc.
import { parametersJsonSchema } from "../tools/library.ts"
import type { Tool } from "../tools/tool.ts"

const MAX_DESCRIPTION = 300

const shorten = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat
}

/**
 * What a tool does in its own words: a ToolBench tool's API description (its function description only adds a
 * fixed preamble naming the tool, which the function's name already ends with), else its description.
 */
const ownDescription = (tool: Tool): string => {
  const doc = tool.meta?.["doc"] as { readonly api_description?: unknown } | undefined
  const own = typeof doc?.api_description === "string" ? doc.api_description.trim() : ""
  return own !== "" ? own : tool.description
}

/** One line per tool; goes in the static part of prompts, so it must not depend on the step. */
export const toolList = (tools: ReadonlyArray<Tool>): string =>
  tools.map((t) => `- ${t.name}: ${shorten(ownDescription(t), MAX_DESCRIPTION)}`).join("\n")

/**
 * A tool's parameters as the fused task prefix lists them: the properties' schemas and the required names, without
 * the `{"type":"object","properties":...}` wrapper every tool repeats; a schema with more at its top stays whole.
 */
const compactSchema = (json: string): string => {
  const schema = JSON.parse(json) as Record<string, unknown>
  const { type, properties, required, ...rest } = schema
  if (type !== "object" || Object.keys(rest).length > 0) return json
  const req =
    Array.isArray(required) && required.length > 0 ? `; required: ${(required as Array<string>).join(", ")}` : ""
  return `${JSON.stringify(properties ?? {})}${req}`
}

/**
 * One entry per tool with its parameters' JSON Schema (`toolDoc`'s, without empty descriptions) on the next line:
 * the fused executor's task prefix, where its one request per step reads every tool's parameters.
 */
export const toolListWithSchemas = (tools: ReadonlyArray<Tool>): string =>
  tools
    .map(
      (t) =>
        `- ${t.name}: ${shorten(ownDescription(t), MAX_DESCRIPTION)}\n  Parameters: ${compactSchema(toolDoc(t).schema)}`
    )
    .join("\n")

/** Said instead of a description the tool list already shows whole (the list is in the same prompt's prefix). */
export const LISTED_DESCRIPTION = "as listed"

/**
 * The doc the executor writes arguments from: description and the parameters' JSON Schema. With
 * `listed`, a description the tool list shows whole is not repeated (a server computes it once).
 */
export const toolDoc = (tool: Tool, listed = false) => {
  const description = ownDescription(tool)
  // a catch-all for undeclared parameters says nothing the model should use (it gives declared ones only), nor
  // does an empty description (many ToolBench parameters have one)
  const { additionalProperties: _, ...schema } = parametersJsonSchema(tool)
  const properties = schema["properties"] as Record<string, Record<string, unknown>> | undefined
  const shown = properties
    ? {
        ...schema,
        properties: Object.fromEntries(
          Object.entries(properties).map(([name, p]) => {
            const { description, ...rest } = p
            return [name, description === "" ? rest : p]
          })
        )
      }
    : schema
  return {
    tool: tool.name,
    description: listed && shorten(description, MAX_DESCRIPTION) === description ? LISTED_DESCRIPTION : description,
    schema: JSON.stringify(shown)
  }
}
