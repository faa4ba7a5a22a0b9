// A JSON Schema (an MCP tool's inputSchema) as a tool's zod parameters, so the same guardrails apply.
import { z } from "zod"

type JsonObject = Record<string, unknown>

const isObject = (x: unknown): x is JsonObject => typeof x === "object" && x !== null && !Array.isArray(x)

/** zod for one property; a schema zod cannot express becomes `unknown` that still shows the model the original schema. */
const propertySchema = (schema: unknown, defs: JsonObject): z.ZodType => {
  try {
    return z.fromJSONSchema(
      (isObject(schema) && Object.keys(defs).length > 0 ? { ...schema, $defs: defs } : schema) as never
    )
  } catch {
    return z.unknown().meta(isObject(schema) ? schema : {})
  }
}

/**
 * The arguments object of a JSON Schema. zod's own converter (`z.fromJSONSchema`) handles the schema
 * whole when it can, so types, enums, bounds and required fields are checked before a call; when it
 * cannot (an exotic keyword), each property is converted on its own and the ones it cannot express
 * accept any value. A schema that is not an object schema gives a tool without declared parameters.
 */
export const parametersFromJsonSchema = (input: unknown): z.ZodObject<z.ZodRawShape> => {
  const schema = isObject(input) ? input : {}
  const object = { ...schema, type: "object" }
  try {
    const whole = z.fromJSONSchema(object as never)
    if (whole instanceof z.ZodObject) return whole as unknown as z.ZodObject<z.ZodRawShape>
  } catch {
    // fall back to one property at a time
  }
  const properties = isObject(schema.properties) ? schema.properties : {}
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : []
  )
  const defs = isObject(schema.$defs) ? schema.$defs : isObject(schema.definitions) ? schema.definitions : {}
  const shape: Record<string, z.ZodType> = {}
  for (const [name, property] of Object.entries(properties)) {
    const zod = propertySchema(property, defs)
    shape[name] = required.has(name) ? zod : zod.optional()
  }
  return z.looseObject(shape) as unknown as z.ZodObject<z.ZodRawShape>
}
