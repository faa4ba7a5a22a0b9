// An MCP tool result as a ToolResult: text (or structured) content is the observation, isError a failure.
import { tooDeepMessage, valueNestsDeeper } from "../../llm/nesting.ts"
import { stringifyOutput } from "../call.ts"
import type { ToolResult } from "../tool.ts"

type Part = Readonly<Record<string, unknown>> & { readonly type?: unknown }

/** One content part as text: text as is, embedded text resources by their text, binary parts by a short note. */
const partText = (part: Part): string => {
  switch (part.type) {
    case "text":
      return typeof part.text === "string" ? part.text : ""
    case "resource": {
      const resource = (part.resource ?? {}) as Record<string, unknown>
      if (typeof resource.text === "string") return resource.text
      return `[resource ${String(resource.uri ?? "")}${typeof resource.mimeType === "string" ? ` (${resource.mimeType})` : ""}]`
    }
    case "resource_link":
      return `[resource link ${String(part.name ?? "")} ${String(part.uri ?? "")}]`.replace(/\s+]/, "]")
    case "image":
    case "audio": {
      const bytes = typeof part.data === "string" ? Math.floor((part.data.length * 3) / 4) : 0
      return `[${part.type} ${typeof part.mimeType === "string" ? part.mimeType : ""}, ${bytes} bytes]`
    }
    default:
      return stringifyOutput(part)
  }
}

/**
 * The observation of a `tools/call` result: the text parts joined; when there are none, the structured
 * content as JSON; else notes on the binary parts. `isError: true` makes a failed result whose error is
 * that text, as the MCP spec has tool errors reported inside the result for the model to see.
 */
export const mcpResultToToolResult = (toolName: string, result: unknown): ToolResult => {
  const record = (typeof result === "object" && result !== null ? result : {}) as Record<string, unknown>
  const parts = Array.isArray(record.content) ? (record.content as Array<Part>) : []
  const texts = parts.filter(
    (p) =>
      p.type === "text" ||
      (p.type === "resource" && typeof (p.resource as Record<string, unknown> | undefined)?.text === "string")
  )
  const structured = record.structuredContent
  // serializing (and every later walk) would overflow the stack
  if (valueNestsDeeper(structured) || valueNestsDeeper(record.toolResult))
    return {
      ok: false,
      content: "",
      error: `tool "${toolName}" returned a result that cannot be used: ${tooDeepMessage()}`
    }
  let content: string
  if (texts.length > 0) content = texts.map(partText).join("\n")
  else if (structured !== undefined && structured !== null) content = stringifyOutput(structured)
  else if (parts.length > 0) content = parts.map(partText).join("\n")
  else if ("toolResult" in record)
    content = stringifyOutput(record.toolResult) // the 2024-10-07 protocol's shape
  else content = ""
  if (record.isError === true)
    return {
      ok: false,
      content,
      error: `tool "${toolName}" reported an error: ${content.slice(0, 500) || "(no message)"}`
    }
  return { ok: true, content }
}
