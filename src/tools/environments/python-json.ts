// Python's `json.dumps` with its defaults and `json.loads(..., strict=False)`: what StableToolBench's code does with
// a tool's response and a model's arguments, so that the reference profile sends the texts their models saw.
import { PythonNumber, parseJsonAsPython } from "./canonical.ts"
import { jsonDumps } from "./json-dumps.ts"

/**
 * `json.dumps(value)` with Python's defaults: keys in their order, `", "` and `": "` separators, `ensure_ascii`
 * (`\u00e9`, `\ud83d\ude00`, `\u007f`), numbers as Python writes them (a `PythonNumber` keeps the text a response
 * was recorded with: `10.0` stays `10.0`), `NaN` and `Infinity` as Python writes them.
 */
export const pythonJsonDumpsAscii = (value: unknown): string => jsonDumps(value)

/**
 * The JSON text with what `json.loads` accepts beyond JSON.parse made JSON: raw control characters inside strings
 * escaped (when not `strict`), and `NaN`, `Infinity`, `-Infinity` outside strings marked as strings to restore.
 */
const prepare = (text: string, strict: boolean): { text: string; constants: boolean } => {
  let out = ""
  let inString = false
  let constants = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (inString) {
      if (c === "\\") {
        out += c + (text[i + 1] ?? "")
        i++
        continue
      }
      if (c === '"') inString = false
      const code = c.charCodeAt(0)
      out += !strict && code < 0x20 ? `\\u${code.toString(16).padStart(4, "0")}` : c
      continue
    }
    if (c === '"') inString = true
    const constant = /^(?:-?Infinity|NaN)/.exec(text.slice(i, i + 9))
    if (constant) {
      out += `"${MARK_ESCAPED}${constant[0]}"`
      i += constant[0].length - 1
      constants = true
      continue
    }
    out += c
  }
  return { text: out, constants }
}

/** Marks a constant `prepare` turned into a string, as written in the JSON text and as decoded. */
const MARK_ESCAPED = "\\u0000\\uffff\\u0000"
const CONSTANT_MARK = "\u0000\uffff\u0000"

/**
 * `json.loads(text, strict=strict)`: the decoded value, numbers kept as Python would print them (`PythonNumber`),
 * control characters allowed inside strings when not `strict`; throws a SyntaxError where Python raises.
 */
export const pythonJsonLoads = (text: string, strict = true): unknown => {
  const prepared = prepare(text, strict)
  const value = parseJsonAsPython(prepared.text)
  return prepared.constants ? restoreConstants(value) : value
}

const restoreConstants = (value: unknown): unknown => {
  if (typeof value === "string" && value.startsWith(CONSTANT_MARK))
    return new PythonNumber(value.slice(CONSTANT_MARK.length))
  if (Array.isArray(value)) return value.map(restoreConstants)
  if (value !== null && typeof value === "object" && !(value instanceof PythonNumber))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, restoreConstants(v)]))
  return value
}

/** A decoded value with Python's number texts turned into JavaScript numbers (for code that reads the values). */
export const plainJson = (value: unknown): unknown => {
  if (value instanceof PythonNumber) return Number(value.text)
  if (Array.isArray(value)) return value.map(plainJson)
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainJson(v)]))
  return value
}

/**
 * A tool server's answer as StableToolBench's client hands it to the model: `json.dumps(response)` of the
 * `{"error", "response"}` object, its response nested when structured (not a string of JSON).
 */
export const serverResponseText = (
  error: string,
  result?: { readonly content: string; readonly structured?: unknown } | undefined
): string =>
  pythonJsonDumpsAscii({
    error,
    response: result === undefined ? "" : result.structured !== undefined ? result.structured : result.content
  })
