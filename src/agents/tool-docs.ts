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

/** The doc the executor writes arguments from: description and the parameters' JSON Schema. */
export const toolDoc = (tool: Tool) => ({
  tool: tool.name,
  description: tool.description,
  schema: JSON.stringify(parametersJsonSchema(tool))
})
