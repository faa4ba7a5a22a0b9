// The offline environment: a deterministic answer to any call, never a network call.
import * as Effect from "effect/Effect"
import type { ToolResult } from "../tool.ts"
import type { ToolEnvironment } from "./environment.ts"

/** `error`: the call fails, saying nothing was recorded. `template`: a response shaped by the API's `template_response`. */
export type OfflineMode = "error" | "template"

const LIST_OF = /^list of (\w+) with length \d+$/

/** A deterministic value for a StableToolBench type name ("str", "int", "list of str with length 3", ...). */
const leaf = (type: string, key: string): unknown => {
  switch (type) {
    case "str":
      return `<${key}>`
    case "int":
      return 0
    case "float":
      return 0.0
    case "bool":
      return false
    case "NoneType":
      return null
    case "empty list":
      return []
    default: {
      const m = LIST_OF.exec(type)
      return m ? [leaf(m[1]!, key)] : type
    }
  }
}

/** A deterministic instance of a `template_response`: one element per list, placeholders for values. */
export const instantiateTemplate = (template: unknown, key = "value"): unknown => {
  if (typeof template === "string") return leaf(template, key)
  if (Array.isArray(template))
    // ["list of str with length 18"] describes the list itself, not a list of lists
    return template.slice(0, 1).flatMap((t) => {
      const m = typeof t === "string" ? LIST_OF.exec(t) : null
      return m ? [leaf(m[1]!, key)] : [instantiateTemplate(t, key)]
    })
  if (typeof template === "object" && template !== null)
    return Object.fromEntries(
      Object.entries(template as Record<string, unknown>)
        .filter(([k]) => k !== "_list_length")
        .map(([k, v]) => [k, instantiateTemplate(v, k)])
    )
  return template
}

const noRecording = (tool: string, api: string): ToolResult => ({
  ok: false,
  content: "",
  error: `no recorded response for ${tool}.${api} with these arguments (offline environment)`
})

/** A response shaped by the doc's template, or the `error` answer when the doc has none. */
const templateAnswer = (tool: string, api: string, template: unknown): ToolResult => {
  if (template === undefined || template === null || template === "") return noRecording(tool, api)
  if (typeof template === "string") {
    // StableToolBench sometimes stores the template as (possibly cut) JSON text
    try {
      return { ok: true, content: JSON.stringify(instantiateTemplate(JSON.parse(template))) }
    } catch {
      return { ok: true, content: template }
    }
  }
  return { ok: true, content: JSON.stringify(instantiateTemplate(template)) }
}

export const makeOfflineEnvironment = (mode: OfflineMode = "error"): ToolEnvironment => ({
  name: `offline:${mode}`,
  serve: (call) =>
    Effect.succeed(
      mode === "template"
        ? templateAnswer(call.stdTool, call.stdApi, call.doc.template_response)
        : noRecording(call.stdTool, call.stdApi)
    )
})
