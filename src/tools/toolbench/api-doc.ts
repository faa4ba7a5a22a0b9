// The StableToolBench `api_list` entry (an API's documentation), read leniently: missing fields get defaults.
import { z } from "zod"

export const ApiParameter = z.looseObject({
  name: z.string(),
  type: z
    .string()
    .nullish()
    .transform((t) => t ?? "STRING"),
  description: z
    .string()
    .nullish()
    .transform((d) => d ?? ""),
  default: z.unknown().optional()
})
export type ApiParameter = z.infer<typeof ApiParameter>

const text = (fallback: string) =>
  z
    .string()
    .nullish()
    .transform((s) => s ?? fallback)

export const ApiDoc = z.looseObject({
  category_name: text(""),
  tool_name: z.string(),
  api_name: z.string(),
  api_description: text(""),
  required_parameters: z
    .array(ApiParameter)
    .nullish()
    .transform((p) => p ?? []),
  optional_parameters: z
    .array(ApiParameter)
    .nullish()
    .transform((p) => p ?? []),
  method: text("GET"),
  /** The response's shape as StableToolBench records it: an object of type names, or its text. */
  template_response: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown()), z.string()]).nullish()
})
export type ApiDoc = z.infer<typeof ApiDoc>
export type ApiDocInput = z.input<typeof ApiDoc>

/** A parameter already in ApiParameter's output shape. */
const isParameter = (p: unknown): boolean => {
  if (typeof p !== "object" || p === null || Array.isArray(p)) return false
  const { name, type, description } = p as Record<string, unknown>
  return typeof name === "string" && typeof type === "string" && typeof description === "string"
}

/**
 * True when `input` already has ApiDoc's output shape (every field present with its type, as in
 * StableToolBench's own files): parsing it would give an equal copy, so it is used as it is.
 */
const hasApiDocShape = (input: unknown): input is ApiDoc => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return false
  const doc = input as Record<string, unknown>
  const template = doc["template_response"]
  return (
    typeof doc["category_name"] === "string" &&
    typeof doc["tool_name"] === "string" &&
    typeof doc["api_name"] === "string" &&
    typeof doc["api_description"] === "string" &&
    typeof doc["method"] === "string" &&
    Array.isArray(doc["required_parameters"]) &&
    doc["required_parameters"].every(isParameter) &&
    Array.isArray(doc["optional_parameters"]) &&
    doc["optional_parameters"].every(isParameter) &&
    (template === undefined || template === null || typeof template === "string" || typeof template === "object")
  )
}

/**
 * An API doc read leniently (see ApiDoc). A bench reads thousands, nearly all already in shape: those are
 * taken as they are, without zod's copy. Throws zod's error for a doc that cannot be read.
 */
export const readApiDoc = (input: ApiDoc | ApiDocInput): ApiDoc => (hasApiDocShape(input) ? input : ApiDoc.parse(input))
