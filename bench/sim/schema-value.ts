// A value that satisfies a JSON Schema (the subset zod's toJSONSchema emits), with hints that pick meaningful leaves.
type Schema = Record<string, unknown>

/**
 * Asked at every node before the schema decides: the property path from the root and the node's
 * schema. Return a value to use it (it is conformed to the node's type), or undefined to let the
 * schema decide.
 */
export type Hint = (path: ReadonlyArray<string>, schema: Schema) => unknown

const samePath = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i])

const asSchema = (value: unknown): Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Schema) : {}

/** Follow a local `$ref` ("#/$defs/x", "#/definitions/x", "#"). */
const resolve = (schema: Schema, root: Schema): Schema => {
  let current = schema
  for (let depth = 0; depth < 16 && typeof current["$ref"] === "string"; depth++) {
    const ref = current["$ref"] as string
    if (!ref.startsWith("#")) return {}
    let target: unknown = root
    for (const part of ref
      .slice(1)
      .split("/")
      .filter((p) => p.length > 0))
      target = asSchema(target)[decodeURIComponent(part.replace(/~1/g, "/").replace(/~0/g, "~"))]
    const { $ref: _ref, ...rest } = current
    current = { ...asSchema(target), ...rest }
  }
  return current
}

const typesOf = (schema: Schema): ReadonlyArray<string> => {
  const t = schema["type"]
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === "string")
  if (typeof t === "string") return [t]
  if (schema["properties"] !== undefined) return ["object"]
  if (schema["items"] !== undefined) return ["array"]
  return []
}

/** The first alternative of anyOf/oneOf that is not null, so that optional fields get a real value. */
const pickAlternative = (alternatives: ReadonlyArray<unknown>, root: Schema): Schema => {
  const resolved = alternatives.map((a) => resolve(asSchema(a), root))
  return resolved.find((a) => !typesOf(a).includes("null") || typesOf(a).length > 1) ?? resolved[0] ?? {}
}

const clampNumber = (value: number, schema: Schema, integer: boolean): number => {
  let v = integer ? Math.round(value) : value
  const min =
    typeof schema["minimum"] === "number"
      ? schema["minimum"]
      : typeof schema["exclusiveMinimum"] === "number"
        ? schema["exclusiveMinimum"] + (integer ? 1 : 1e-6)
        : undefined
  const max =
    typeof schema["maximum"] === "number"
      ? schema["maximum"]
      : typeof schema["exclusiveMaximum"] === "number"
        ? schema["exclusiveMaximum"] - (integer ? 1 : 1e-6)
        : undefined
  if (min !== undefined && v < min) v = integer ? Math.ceil(min) : min
  if (max !== undefined && v > max) v = integer ? Math.floor(max) : max
  return v
}

const fitString = (value: string, schema: Schema): string => {
  const min = typeof schema["minLength"] === "number" ? schema["minLength"] : 0
  const max = typeof schema["maxLength"] === "number" ? schema["maxLength"] : Infinity
  let v = value
  if (v.length > max) v = v.slice(0, max)
  if (v.length < min) v = v.padEnd(min, "x")
  return v
}

/** Make a hinted value fit the node's type: numbers from numeric strings, strings from anything. */
const conform = (value: unknown, schema: Schema): unknown => {
  const types = typesOf(schema)
  const enumValues = Array.isArray(schema["enum"]) ? (schema["enum"] as ReadonlyArray<unknown>) : undefined
  if (enumValues && enumValues.length > 0)
    return enumValues.includes(value) ? value : (enumValues.find((e) => String(e) === String(value)) ?? enumValues[0])
  if (
    types.length === 0 ||
    types.includes(typeof value === "number" && Number.isInteger(value) ? "integer" : typeof value)
  ) {
    if (typeof value === "string") return fitString(value, schema)
    return value
  }
  if (types.includes("integer") || types.includes("number")) {
    const n = typeof value === "boolean" ? Number(value) : Number(value)
    return Number.isFinite(n)
      ? clampNumber(n, schema, !types.includes("number"))
      : clampNumber(0, schema, !types.includes("number"))
  }
  if (types.includes("boolean")) return value === true || value === "true" || value === 1 || value === "1"
  if (types.includes("string"))
    return fitString(typeof value === "string" ? value : (JSON.stringify(value) ?? ""), schema)
  if (types.includes("array")) return Array.isArray(value) ? value : [value]
  return value
}

/**
 * A value of `schema`. Objects get every required property and every property a hint fills;
 * arrays get their minimum count (at least one item); strings, numbers and booleans a neutral
 * value, or the `default`/`const`/first `enum` when there is one.
 */
export const schemaValueOf = (schema: Record<string, unknown>, hint: Hint = () => undefined): unknown =>
  build(schema, schema, [], hint, 0)

const build = (raw: Schema, root: Schema, path: ReadonlyArray<string>, hint: Hint, depth: number): unknown => {
  let schema = resolve(raw, root)
  if (Array.isArray(schema["allOf"]))
    schema = Object.assign({}, ...(schema["allOf"] as ReadonlyArray<unknown>).map((s) => resolve(asSchema(s), root)), {
      ...schema,
      allOf: undefined
    })
  if (Array.isArray(schema["anyOf"]) || Array.isArray(schema["oneOf"])) {
    const hinted = hint(path, schema)
    const alternative = pickAlternative((schema["anyOf"] ?? schema["oneOf"]) as ReadonlyArray<unknown>, root)
    return hinted !== undefined ? conform(hinted, alternative) : build(alternative, root, path, hint, depth + 1)
  }
  if ("const" in schema) return schema["const"]
  const hinted = hint(path, schema)
  const types = typesOf(schema)
  if (hinted !== undefined) {
    if (types.includes("object") && typeof hinted === "object" && hinted !== null && !Array.isArray(hinted))
      return buildObject(schema, root, path, hint, depth, hinted as Record<string, unknown>)
    if (types.includes("array") && Array.isArray(hinted))
      return hinted.map((item, i) => conformItem(item, schema, root, [...path, String(i)], hint, depth))
    return conform(hinted, schema)
  }
  if (Array.isArray(schema["enum"]) && schema["enum"].length > 0) return schema["enum"][0]
  if ("default" in schema) return schema["default"]
  if (depth > 12) return null
  const type = types.find((t) => t !== "null") ?? types[0]
  switch (type) {
    case "object":
      return buildObject(schema, root, path, hint, depth, {})
    case "array": {
      const min = typeof schema["minItems"] === "number" ? schema["minItems"] : 1
      const max = typeof schema["maxItems"] === "number" ? schema["maxItems"] : Math.max(1, min)
      const items = asSchema(schema["items"])
      return Array.from({ length: Math.max(0, Math.min(Math.max(1, min), max)) }, (_, i) =>
        build(items, root, [...path, String(i)], hint, depth + 1)
      )
    }
    case "integer":
      return clampNumber(1, schema, true)
    case "number":
      return clampNumber(1, schema, false)
    case "boolean":
      return true
    case "null":
      return null
    case "string":
      return fitString(
        schema["format"] === "date"
          ? "2024-01-01"
          : schema["format"] === "date-time"
            ? "2024-01-01T00:00:00Z"
            : "value",
        schema
      )
    default:
      return "value"
  }
}

const conformItem = (
  item: unknown,
  schema: Schema,
  root: Schema,
  path: ReadonlyArray<string>,
  hint: Hint,
  depth: number
): unknown => {
  const items = resolve(asSchema(schema["items"]), root)
  return build({ ...items }, root, path, (p, s) => (samePath(p, path) ? item : hint(p, s)), depth + 1)
}

const buildObject = (
  schema: Schema,
  root: Schema,
  path: ReadonlyArray<string>,
  hint: Hint,
  depth: number,
  given: Record<string, unknown>
): Record<string, unknown> => {
  const properties = asSchema(schema["properties"])
  const required = new Set(Array.isArray(schema["required"]) ? (schema["required"] as ReadonlyArray<string>) : [])
  const out: Record<string, unknown> = {}
  for (const [name, propertySchema] of Object.entries(properties)) {
    const childPath = [...path, name]
    const fromGiven = given[name]
    const childHint: Hint = fromGiven !== undefined ? (p, s) => (samePath(p, childPath) ? fromGiven : hint(p, s)) : hint
    const probe = fromGiven ?? hint(childPath, resolve(asSchema(propertySchema), root))
    if (!required.has(name) && probe === undefined) continue
    out[name] = build(asSchema(propertySchema), root, childPath, childHint, depth + 1)
  }
  // Keys the hint gave that the schema does not declare are kept: the hint knows what it wants.
  for (const [name, value] of Object.entries(given)) if (!(name in out)) out[name] = value
  return out
}
