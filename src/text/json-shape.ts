// The JSON shape a prompt shows the model ("Reply with only a JSON object of this form: ..."), rendered from the
// reply's JSON Schema (keys, enums, types) and the template's example wording, so the two cannot drift apart.

type Schema = Readonly<Record<string, unknown>>

const asSchema = (v: unknown): Schema => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Schema) : {})

/** The first alternative of a nullable/optional property (`anyOf: [T, null]`). */
const present = (schema: Schema): Schema => {
  const options = schema["anyOf"]
  return Array.isArray(options) ? asSchema(options.find((o) => asSchema(o)["type"] !== "null")) : schema
}

/** A property's value in the shape: its example wording, else its enum's options, else a value of its type. */
const shapeValueOf = (property: Schema, example: string | undefined): string => {
  const schema = present(property)
  if (example !== undefined)
    // a list's example names its items, separated by " | "
    return schema["type"] === "array"
      ? `[${example
          .split(" | ")
          .map((item) => JSON.stringify(item))
          .join(", ")}]`
      : JSON.stringify(example)
  if (Array.isArray(schema["enum"])) return schema["enum"].map((o) => JSON.stringify(o)).join(" or ")
  switch (schema["type"]) {
    case "boolean":
      return "true"
    case "number":
    case "integer":
      return "0"
    case "array":
      return "[]"
    default:
      return '""'
  }
}

/**
 * One line showing an object schema's properties in order, each with its example (`examples`, by
 * property name), e.g. `{"status": "solved" or "pending", "reason": "why, in one sentence"}`.
 */
export const jsonShape = (schema: Schema, examples: Readonly<Record<string, string>> = {}): string => {
  const properties = asSchema(schema["properties"])
  const unknown = Object.keys(examples).filter((k) => !(k in properties))
  if (unknown.length > 0)
    throw new Error(`the prompt's example names ${unknown.join(", ")}, which the reply's schema does not have`)
  return `{${Object.entries(properties)
    .map(([key, property]) => `${JSON.stringify(key)}: ${shapeValueOf(asSchema(property), examples[key])}`)
    .join(", ")}}`
}
