// JSON Schemas whose decoding grammar accepts what the schema means. Ollama and llama.cpp's server turn
// `format` / `response_format` (and llama-server every tool's `parameters`) into a grammar with
// llama.cpp's JSON-Schema converter, which reads an empty schema `{}` as "a JSON object": a value
// "any JSON" must say so with explicit types.

/** Any JSON value, spelled so that the converter allows every kind. */
export const ANY_JSON_VALUE: Readonly<Record<string, unknown>> = {
  type: ["string", "number", "integer", "boolean", "object", "array", "null"]
}

/** Keys that only annotate a schema; a schema with nothing else constrains nothing. */
const ANNOTATIONS = new Set([
  "description",
  "title",
  "default",
  "examples",
  "example_value",
  "$comment",
  "deprecated",
  "readOnly",
  "writeOnly"
])

/** True for a schema that allows any value (`{}`, or only annotations). */
export const isAnySchema = (schema: unknown): boolean =>
  typeof schema === "object" &&
  schema !== null &&
  !Array.isArray(schema) &&
  Object.keys(schema).every((k) => ANNOTATIONS.has(k))

/** Keys whose value is one subschema, and keys whose value is a list or a map of them. */
const ONE = [
  "additionalProperties",
  "items",
  "not",
  "contains",
  "propertyNames",
  "if",
  "then",
  "else",
  "unevaluatedProperties",
  "unevaluatedItems"
]
const LIST = ["anyOf", "oneOf", "allOf", "prefixItems"]
const MAP = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]

/** A copy of `schema` with every "any value" subschema (`{}`, or only annotations) spelled out. */
export const grammarSafe = (schema: Record<string, unknown>): Record<string, unknown> => {
  const sub = (s: unknown): unknown =>
    isAnySchema(s)
      ? { ...(s as object), ...ANY_JSON_VALUE }
      : typeof s === "object" && s !== null && !Array.isArray(s)
        ? grammarSafe(s as Record<string, unknown>)
        : s
  const out: Record<string, unknown> = { ...schema }
  // zod writes a safe integer's bounds (±(2^53-1)) on every integer: they exclude nothing a model writes, and
  // llama.cpp's converter turns them into a digit-range grammar that its server then fails to build a sampler for
  // (HTTP 400 "Failed to initialize samplers", seen on llama-server with the planner's `dependsOn`)
  if (out["minimum"] === -Number.MAX_SAFE_INTEGER) delete out["minimum"]
  if (out["maximum"] === Number.MAX_SAFE_INTEGER) delete out["maximum"]
  for (const key of ONE) if (key in out) out[key] = sub(out[key])
  for (const key of LIST) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(sub)
  for (const key of MAP)
    if (typeof out[key] === "object" && out[key] !== null)
      out[key] = Object.fromEntries(Object.entries(out[key] as Record<string, unknown>).map(([k, v]) => [k, sub(v)]))
  return out
}
