// A tool as a search document: its name, its tool/server, category, description and parameter docs.
import { parametersJsonSchema } from "../library.ts"
import type { Tool } from "../tool.ts"

/** The text fields a retriever indexes for one tool. */
export interface ToolDocument {
  /** The tool's name in its library (the id of the document). */
  readonly id: string
  /** The name as words: a ToolBench API's own name, else the tool name. */
  readonly name: string
  /** The tool an API belongs to (ToolBench `tool_name`) or the server that serves it. */
  readonly tool: string
  readonly category: string
  readonly description: string
  /** Parameter names and their descriptions. */
  readonly params: string
}

const text = (value: unknown): string => (typeof value === "string" ? value : "")

/**
 * The document of a tool. A ToolBench tool carries its API doc in `meta`: the raw API description is
 * used rather than the function description, whose fixed preamble ("This is the subfunction for tool
 * ...") is the same in every tool and only adds noise.
 */
export const toolDocument = (tool: Tool): ToolDocument => {
  const meta = tool.meta ?? {}
  const doc = (meta.doc ?? {}) as Record<string, unknown>
  const schema = parametersJsonSchema(tool) as { properties?: Record<string, { description?: unknown }> }
  const params = Object.entries(schema.properties ?? {})
    .map(([name, p]) => `${name} ${text(p.description)}`)
    .join(" ; ")
  return {
    id: tool.name,
    name: text(meta.api) || tool.name,
    tool: text(meta.tool) || text(meta.server),
    category: text(meta.category),
    description: text(doc.api_description) || tool.description,
    params
  }
}

/** The whole document as one text (for embeddings and content hashes). */
export const documentText = (doc: ToolDocument): string =>
  [
    `${doc.name}${doc.tool ? ` (${doc.tool})` : ""}`,
    doc.category,
    doc.description,
    doc.params ? `parameters: ${doc.params}` : ""
  ]
    .filter((s) => s.length > 0)
    .join("\n")
