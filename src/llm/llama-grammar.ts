// The JSON Schemas the embedded engine decodes under: a request's schema in the subset node-llama-cpp's grammar
// takes, every string bounded by maxLength and every array by maxItems, and the token limit that bounds the reply.
// The reply is still read by our own parser (structured.ts): the grammar's number rule admits exponents, its
// length counting differs.

/** A schema node (JSON Schema), loosely typed: what `z.toJSONSchema` writes. */
type Schema = Record<string, unknown>

/** Bounds the grammar adds where a schema sets none. */
export const GRAMMAR_BOUNDS = {
  /** Characters of a string without maxLength: room for a final answer, never an endless one. */
  stringChars: 1200,
  /** Items of an array without maxItems. */
  arrayItems: 12,
  /** Keys of an object whose keys are free (arguments "any object"). */
  objectKeys: 12,
  /** Tokens of the reply, whatever the schema allows. */
  maxTokens: 4096
} as const

const SCALARS = new Set(["string", "number", "integer", "boolean", "null"])
const FORMATS = new Set(["date-time", "time", "date"])

const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v)

/** Any JSON value, bounded: a scalar, or an object or array of them. */
const anyValue = (depth: number): Schema => ({
  oneOf: [
    { type: ["string", "number", "boolean", "null"] },
    ...(depth > 2
      ? []
      : [
          { type: "object", additionalProperties: anyValue(depth + 1), maxProperties: GRAMMAR_BOUNDS.objectKeys },
          { type: "array", items: anyValue(depth + 1), maxItems: GRAMMAR_BOUNDS.arrayItems }
        ])
  ]
})

const bounded = (value: unknown, bound: number): number =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 ? Math.min(value, bound) : bound

/** One type of a node, converted. */
const ofType = (type: string, node: Schema, depth: number): Schema => {
  switch (type) {
    case "string": {
      if (typeof node["format"] === "string" && FORMATS.has(node["format"])) return { type, format: node["format"] }
      const maxLength = bounded(node["maxLength"], GRAMMAR_BOUNDS.stringChars)
      const minLength = typeof node["minLength"] === "number" ? Math.min(node["minLength"], maxLength) : undefined
      return { type, maxLength, ...(minLength ? { minLength } : {}) }
    }
    case "object": {
      const properties = isObject(node["properties"]) ? node["properties"] : {}
      const names = Object.keys(properties)
      const extra = node["additionalProperties"]
      const out: Schema = {
        type,
        properties: Object.fromEntries(names.map((k) => [k, convert(properties[k], depth + 1)]))
      }
      if (Array.isArray(node["required"])) out["required"] = node["required"].filter((k) => names.includes(k as string))
      // free keys: when the schema says so, or says nothing of its keys at all
      if (isObject(extra) || extra === true || (extra === undefined && names.length === 0)) {
        out["additionalProperties"] = isObject(extra) ? convert(extra, depth + 1) : anyValue(depth + 1)
        out["maxProperties"] = names.length + bounded(node["maxProperties"], GRAMMAR_BOUNDS.objectKeys)
      } else out["additionalProperties"] = false
      return out
    }
    case "array": {
      const maxItems = bounded(node["maxItems"], GRAMMAR_BOUNDS.arrayItems)
      const minItems = typeof node["minItems"] === "number" ? Math.min(node["minItems"], maxItems) : undefined
      return {
        type,
        items: node["items"] === undefined ? anyValue(depth + 1) : convert(node["items"], depth + 1),
        ...(Array.isArray(node["prefixItems"])
          ? { prefixItems: node["prefixItems"].map((s) => convert(s, depth + 1)) }
          : {}),
        maxItems,
        ...(minItems ? { minItems } : {})
      }
    }
    default:
      return { type }
  }
}

/** A schema node in the grammar's subset, bounded; anything it cannot say becomes "any value". */
const convert = (node: unknown, depth: number): Schema => {
  if (!isObject(node)) return node === false ? { type: "null" } : anyValue(depth)
  if (typeof node["$ref"] === "string") return { $ref: node["$ref"] }
  if ("const" in node) return { const: node["const"] as unknown }
  if (Array.isArray(node["enum"])) return { enum: node["enum"] }
  const union = node["anyOf"] ?? node["oneOf"]
  if (Array.isArray(union)) return { oneOf: union.map((s) => convert(s, depth)) }
  if (Array.isArray(node["allOf"]) && node["allOf"].length > 0) return convert(node["allOf"][0], depth)
  const type = node["type"]
  if (typeof type === "string") return ofType(type, node, depth)
  if (Array.isArray(type)) {
    const types = type.filter((t): t is string => typeof t === "string")
    if (types.every((t) => SCALARS.has(t)) && !types.includes("string")) return { type: types }
    return { oneOf: types.map((t) => ofType(t, node, depth)) }
  }
  if (isObject(node["properties"])) return ofType("object", node, depth)
  return anyValue(depth)
}

/** `schema` as node-llama-cpp's JSON-schema grammar takes it, every string, array and free object bounded. */
export const grammarSchema = (schema: Schema): Schema => {
  const out = convert(schema, 0)
  const defs = schema["$defs"] ?? schema["definitions"]
  if (!isObject(defs)) return out
  return {
    ...out,
    $defs: Object.fromEntries(Object.entries(defs).map(([k, v]) => [k, convert(v, 1)]))
  }
}

/** Tokens a value of a bounded schema can take at most (a character a token), for the reply's token limit. */
export const schemaTokens = (schema: Schema): number => {
  const defs = isObject(schema["$defs"]) ? (schema["$defs"] as Schema) : {}
  const count = (node: unknown, depth: number): number => {
    if (!isObject(node) || depth > 6) return 16
    if (typeof node["$ref"] === "string") return count(defs[node["$ref"].split("/").pop() ?? ""], depth + 1)
    if ("const" in node) return JSON.stringify(node["const"]).length + 1
    if (Array.isArray(node["enum"])) return Math.max(1, ...node["enum"].map((v) => JSON.stringify(v).length + 1))
    if (Array.isArray(node["oneOf"])) return Math.max(1, ...node["oneOf"].map((s) => count(s, depth + 1)))
    const type = node["type"]
    if (Array.isArray(type)) return Math.max(1, ...type.map((t) => count({ ...node, type: t }, depth)))
    switch (type) {
      case "string":
        return (typeof node["maxLength"] === "number" ? node["maxLength"] : 32) + 3
      case "number":
      case "integer":
        return 24
      case "boolean":
      case "null":
        return 6
      case "object": {
        const properties = isObject(node["properties"]) ? node["properties"] : {}
        const fixed = Object.entries(properties).reduce((sum, [k, v]) => sum + k.length + 4 + count(v, depth + 1), 2)
        const free = isObject(node["additionalProperties"])
          ? (Number(node["maxProperties"] ?? 0) - Object.keys(properties).length) *
            (24 + count(node["additionalProperties"], depth + 1))
          : 0
        return fixed + Math.max(0, free)
      }
      case "array": {
        const items = Number(node["maxItems"] ?? GRAMMAR_BOUNDS.arrayItems)
        return 2 + items * (1 + count(node["items"], depth + 1))
      }
      default:
        return 16
    }
  }
  return Math.min(GRAMMAR_BOUNDS.maxTokens, count(schema, 0) + 8)
}

/** A function the model may call, as a request offers it. */
export interface OfferedTool {
  readonly name: string
  readonly parameters: Record<string, unknown>
}

/** Characters of the thought that comes with a tool call. */
export const THOUGHT_CHARS = 400

/**
 * The reply to a request with tools: one object `{thought, name, arguments}` whose `name` is one of the tools and
 * whose `arguments` follow that tool's parameters.
 */
export const toolCallSchema = (tools: ReadonlyArray<OfferedTool>): Schema => ({
  oneOf: tools.map((tool) => ({
    type: "object",
    properties: {
      thought: { type: "string", maxLength: THOUGHT_CHARS },
      name: { const: tool.name },
      arguments: grammarSchema(isObject(tool.parameters) ? tool.parameters : {})
    },
    required: ["thought", "name", "arguments"],
    additionalProperties: false
  }))
})
