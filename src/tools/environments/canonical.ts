// Canonical arguments: the key `responses.jsonl` records calls under, so that equal calls match however they were spelled.
import { byCodePoint, jsonDumps } from "./json-dumps.ts"
import { PythonNumber, pythonNumberFromJson } from "./python-number.ts"

export { byCodePoint } from "./json-dumps.ts"
export { PythonNumber } from "./python-number.ts"

/** JSON text parsed with every number kept as Python's json.loads then repr would print it. */
export const parseJsonAsPython = (text: string): unknown =>
  JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && typeof context?.source === "string"
      ? new PythonNumber(pythonNumberFromJson(context.source, value))
      : value
  )

/** JSON.rawJSON (Node 21+): a number's own text inside JSON.stringify's output. */
const rawJSON = (JSON as unknown as { rawJSON: (text: string) => unknown }).rawJSON

/** Compact JSON of a value read by `parseJsonAsPython`, each number with the text it was read with (`10.0`). */
export const jsonText = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v instanceof PythonNumber ? (/^-?\d/.test(v.text) ? rawJSON(v.text) : Number(v.text)) : v
  )

/** Python's `json.dumps(value, sort_keys=True, ensure_ascii=False)`; `asFloat` writes whole numbers as floats. */
export const pythonJsonDumps = (value: unknown, asFloat = false): string =>
  jsonDumps(value, { sortKeys: true, ensureAscii: false, wholeNumbers: asFloat ? "float" : "int" })

/**
 * One argument value as recorded: strings as they are, numbers as Python prints them, booleans as
 * `True`/`False`, null as `None`, lists and objects as Python's sorted-key JSON.
 */
export const canonicalValue = (value: unknown, asFloat = false): string => {
  if (typeof value === "string") return value
  if (typeof value === "boolean") return value ? "True" : "False"
  if (value === null || value === undefined) return "None"
  // a number as json.dumps writes it (a recorded one as recorded, NaN as NaN), a list or an object as its JSON
  return pythonJsonDumps(value, asFloat)
}

/**
 * The canonical JSON of an arguments object: keys sorted by code point, values as strings, no spaces.
 * Numbers are written as Python writes them (`1e-07`, `1e+16`); JavaScript cannot tell `5` from `5.0`,
 * so `asFloat` gives the key with whole numbers as floats, for a second lookup.
 */
export const canonicalArgs = (args: Readonly<Record<string, unknown>>, asFloat = false): string => {
  const keys = Object.keys(args)
    .filter((k) => args[k] !== undefined)
    .sort(byCodePoint)
  return `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(canonicalValue(args[k], asFloat))}`).join(",")}}`
}

/** Re-canonicalize a recorded `args` string (a hand-written or older recording may not be canonical). */
export const recanonicalize = (recorded: string): string => {
  try {
    const parsed: unknown = parseJsonAsPython(recorded)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? canonicalArgs(parsed as Record<string, unknown>)
      : recorded
  } catch {
    return recorded
  }
}
