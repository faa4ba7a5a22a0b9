// Canonical arguments: the key `responses.jsonl` records calls under, so that equal calls match however they were spelled.

/** Python's `repr` of a float or int, as far as a JavaScript number allows (7.0 and 7 are the same number here). */
const pythonNumber = (n: number): string => {
  if (Number.isNaN(n)) return "NaN"
  if (!Number.isFinite(n)) return n > 0 ? "Infinity" : "-Infinity"
  return String(n)
}

/** Compare keys by code point, as Python's `sorted` does. */
const byCodePoint = (a: string, b: string): number => {
  const x = [...a]
  const y = [...b]
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!
    if (d !== 0) return d
  }
  return x.length - y.length
}

/** Python's `json.dumps(value, sort_keys=True, ensure_ascii=False)`: `", "` and `": "` separators. */
export const pythonJsonDumps = (value: unknown): string => {
  if (value === null || value === undefined) return "null"
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "number") return pythonNumber(value)
  if (typeof value === "string") return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(", ")}]`
  if (typeof value === "object") {
    const record = value as Record<string, unknown>
    const keys = Object.keys(record).sort(byCodePoint)
    return `{${keys.map((k) => `${JSON.stringify(k)}: ${pythonJsonDumps(record[k])}`).join(", ")}}`
  }
  return JSON.stringify(String(value))
}

/**
 * One argument value as recorded: strings as they are, numbers as Python prints them, booleans as
 * `True`/`False`, null as `None`, lists and objects as Python's sorted-key JSON.
 */
export const canonicalValue = (value: unknown): string => {
  if (typeof value === "string") return value
  if (typeof value === "boolean") return value ? "True" : "False"
  if (value === null || value === undefined) return "None"
  if (typeof value === "number") return pythonNumber(value)
  return pythonJsonDumps(value)
}

/** The canonical JSON of an arguments object: keys sorted by code point, values as strings, no spaces. */
export const canonicalArgs = (args: Readonly<Record<string, unknown>>): string => {
  const keys = Object.keys(args)
    .filter((k) => args[k] !== undefined)
    .sort(byCodePoint)
  return `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(canonicalValue(args[k]))}`).join(",")}}`
}

/** Re-canonicalize a recorded `args` string (a hand-written or older recording may not be canonical). */
export const recanonicalize = (recorded: string): string => {
  try {
    const parsed: unknown = JSON.parse(recorded)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? canonicalArgs(parsed as Record<string, unknown>) : recorded
  } catch {
    return recorded
  }
}
