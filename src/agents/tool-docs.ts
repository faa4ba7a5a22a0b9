// How tools are described to the agents: a list of names and descriptions, and one tool's full doc.
import { parametersJsonSchema } from "../tools/library.ts"
import type { Tool } from "../tools/tool.ts"

const MAX_DESCRIPTION = 300

const shorten = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat
}

/** One line per tool; goes in the static part of prompts, so it must not depend on the step. */
export const toolList = (tools: ReadonlyArray<Tool>): string =>
  tools.map((t) => `- ${t.name}: ${shorten(t.description, MAX_DESCRIPTION)}`).join("\n")

/** Said instead of a description the tool list already shows whole (the list is in the same prompt's prefix). */
export const LISTED_DESCRIPTION = "as in the tool list"

/**
 * The doc the executor writes arguments from: description and the parameters' JSON Schema. With
 * `listed`, a description the tool list shows whole is not repeated (a server computes it once).
 */
export const toolDoc = (tool: Tool, listed = false) => ({
  tool: tool.name,
  description:
    listed && shorten(tool.description, MAX_DESCRIPTION) === tool.description ? LISTED_DESCRIPTION : tool.description,
  schema: JSON.stringify(parametersJsonSchema(tool))
})
