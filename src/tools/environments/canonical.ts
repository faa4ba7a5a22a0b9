// Canonical arguments: the key `responses.jsonl` records calls under, so that equal calls match however they were spelled.
import { pythonNumber, pythonNumberFromJson } from "./python-number.ts"

/**
 * A number literal of recorded JSON text, kept as Python printed it: JSON.parse would turn `5.0`
 * into 5 and lose that the call was made with a float.
 */
export class PythonNumber {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

/** A number as Python's json.dumps / repr writes it; `asFloat` writes whole numbers as floats (`5.0`). */
const numberText = (n: unknown, asFloat: boolean): string => {
  if (n instanceof PythonNumber) return n.text
  const x = n as number
  if (Number.isNaN(x)) return "NaN"
  if (!Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity"
  return pythonNumber(x, asFloat)
}

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

/**
 * Compare keys by code point, as Python's `sorted` does. Below the surrogates code units order as code
 * points do, so keys that differ there first (nearly all) are compared without splitting them.
 */
export const byCodePoint = (a: string, b: string): number => {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    if (x < 0xd800 && y < 0xd800) return x - y
    break
  }
  return byCodePoints(a, b)
}

const byCodePoints = (a: string, b: string): number => {
  const x = [...a]
  const y = [...b]
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!
    if (d !== 0) return d
  }
  return x.length - y.length
}

/** Python's `json.dumps(value, sort_keys=True, ensure_ascii=False)`: `", "` and `": "` separators. */
export const pythonJsonDumps = (value: unknown, asFloat = false): string => {
  if (value === null || value === undefined) return "null"
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "number" || value instanceof PythonNumber) return numberText(value, asFloat)
  if (typeof value === "string") return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map((v) => pythonJsonDumps(v, asFloat)).join(", ")}]`
  if (typeof value === "object") {
    const record = value as Record<string, unknown>
    const keys = Object.keys(record).sort(byCodePoint)
    return `{${keys.map((k) => `${JSON.stringify(k)}: ${pythonJsonDumps(record[k], asFloat)}`).join(", ")}}`
  }
  return JSON.stringify(String(value))
}

/**
 * One argument value as recorded: strings as they are, numbers as Python prints them, booleans as
 * `True`/`False`, null as `None`, lists and objects as Python's sorted-key JSON.
 */
export const canonicalValue = (value: unknown, asFloat = false): string => {
  if (typeof value === "string") return value
  if (typeof value === "boolean") return value ? "True" : "False"
  if (value === null || value === undefined) return "None"
  if (typeof value === "number" || value instanceof PythonNumber) return numberText(value, asFloat)
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
