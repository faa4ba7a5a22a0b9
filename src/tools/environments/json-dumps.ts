// Python's `json.dumps`, byte for byte: the one writer of every text a reference (StableToolBench, ToolEval, τ²)
// computes with it. Checked against CPython on a generated corpus (scripts/json-dumps-corpus.ts).
import { PythonNumber, pythonFloat, pythonNumber } from "./python-number.ts"

/**
 * `json.dumps`' keyword arguments. JavaScript holds no Python value, so how each JS value reads as one:
 * - a `bigint` is an `int` (its digits exactly);
 * - a `PythonNumber` is the number a text was read with (`parseJsonAsPython`): its text as Python prints it (`10.0`,
 *   `12345678901234567890`);
 * - a `number` is a `float`, but by default a whole one below 1e16 is an `int` (a JSON integer read by JSON.parse,
 *   which cannot tell `5` from `5.0`; `-0` so is `0`, as JSON's `-0` is Python's int 0): see `wholeNumbers`;
 * - a `str` holding a surrogate pair as two code points is the character the pair encodes (a JS string is UTF-16);
 * - a `Map` is a `dict` in its insertion order; a plain object is a `dict` in JavaScript's key order (integer-like keys
 *   such as `"2"` come first, ascending: read a text with a Map-keeping reader when that order matters);
 * - `undefined` is `None` (Python has no other); any other value (a function, a symbol) is written as its `String()`
 *   (Python would raise a TypeError).
 */
export interface JsonDumpsOptions {
  /** `ensure_ascii` (default true): every UTF-16 unit outside space..`~` as `\uXXXX`, DEL (`\u007f`) included. */
  readonly ensureAscii?: boolean | undefined
  /** `sort_keys` (default false): keys in code point order, as Python's `sorted`. */
  readonly sortKeys?: boolean | undefined
  /** `indent`: a count of spaces or a string; each item on its own line (0 or "" too). Undefined: one line. */
  readonly indent?: number | string | undefined
  /** `separators` as `[item, key]`: `[", ", ": "]` by default, `[",", ": "]` with an indent. */
  readonly separators?: readonly [string, string] | undefined
  /**
   * A whole JS `number`: `"int"` (default) writes one below 1e16 as an int (`5`) and any other as a float (`1e+16`);
   * `"float"` writes every number as a float (`5.0`), for values whose ints are bigints (τ²'s) or a float lookup.
   */
  readonly wholeNumbers?: "int" | "float" | undefined
  /**
   * Keep the text of each frozen object or list once written, per options, and reuse it (τ²'s databases are mostly
   * frozen parts hashed again and again). Only for values frozen deeply (`Object.freeze` of every part); one line only.
   */
  readonly cacheFrozen?: boolean | undefined
}

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

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f"
}
const escapeUnit = (c: string): string => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

// json.encoder's ESCAPE_ASCII and ESCAPE; with ensure_ascii an astral character is escaped as its two surrogates, as
// Python does, and without it a lone surrogate stays as it is (Python's str holds it; JSON.stringify would escape it)
const ASCII_ESCAPED = /["\\]|[^\x20-\x7e]/g
const ASCII_NEEDS_ESCAPE = /["\\]|[^\x20-\x7e]/
const ESCAPED = /["\\\x00-\x1f]/g
const NEEDS_ESCAPE = /["\\\x00-\x1f]/

/** A string as `json.dumps` writes it: `ensureAscii` (default) escapes all but printable ASCII. */
export const jsonDumpsString = (s: string, ensureAscii = true): string =>
  ensureAscii
    ? ASCII_NEEDS_ESCAPE.test(s)
      ? `"${s.replace(ASCII_ESCAPED, escapeUnit)}"`
      : `"${s}"`
    : NEEDS_ESCAPE.test(s)
      ? `"${s.replace(ESCAPED, escapeUnit)}"`
      : `"${s}"`

/** A float as `json.dumps` writes it: `repr` (`17.0`, `1e-07`, `-0.0`), and `NaN`, `Infinity`, `-Infinity`. */
export const jsonDumpsFloat = (x: number): string =>
  Number.isNaN(x) ? "NaN" : Number.isFinite(x) ? pythonFloat(x) : x > 0 ? "Infinity" : "-Infinity"

const numberText = (x: number): string => (Number.isFinite(x) ? pythonNumber(x) : jsonDumpsFloat(x))

/** Texts of frozen values, per options (a WeakMap each). */
const frozenTexts = new Map<string, WeakMap<object, string>>()

/** `json.dumps(value, ...)` in pieces of about 64 KiB handed to `sink` (a hash reads a 2 MB text without one string). */
export const jsonDumpsTo = (value: unknown, sink: (piece: string) => void, options: JsonDumpsOptions = {}): void => {
  const ascii = options.ensureAscii !== false
  const sortKeys = options.sortKeys === true
  const asFloat = options.wholeNumbers === "float"
  const indentUnit =
    options.indent === undefined
      ? undefined
      : typeof options.indent === "string"
        ? options.indent
        : " ".repeat(Math.max(0, options.indent))
  const [itemSep, keySep] = options.separators ?? (indentUnit === undefined ? [", ", ": "] : [",", ": "])
  const optionsKey = `${ascii}|${sortKeys}|${asFloat}|${itemSep}|${keySep}`
  let cache: WeakMap<object, string> | undefined
  if (options.cacheFrozen === true && indentUnit === undefined) {
    cache = frozenTexts.get(optionsKey)
    if (cache === undefined) frozenTexts.set(optionsKey, (cache = new WeakMap()))
  }
  // pieces joined once per flush: a flat string (appending with += builds a rope that is slow to read)
  let parts: Array<string> = []
  let size = 0
  // writing a frozen value's text to keep: no flush meanwhile
  let collecting = 0
  const put = (s: string) => {
    parts.push(s)
    size += s.length
  }
  const str = (s: string) => put(jsonDumpsString(s, ascii))
  // the separator before an item at `depth` and the closing line of a container at `depth`
  const newline = (depth: number) => (indentUnit === undefined ? "" : `\n${indentUnit.repeat(depth)}`)
  const close = (depth: number, bracket: string) => (indentUnit === undefined ? bracket : newline(depth) + bracket)

  const write = (v: unknown, depth: number): void => {
    if (size > 65536 && collecting === 0) {
      sink(parts.join(""))
      parts = []
      size = 0
    }
    if (cache !== undefined && typeof v === "object" && v !== null && Object.isFrozen(v)) {
      let text = cache.get(v)
      if (text === undefined) {
        const saved = parts
        const savedSize = size
        parts = []
        size = 0
        collecting++
        writeValue(v, depth)
        collecting--
        text = parts.join("")
        parts = saved
        size = savedSize
        cache.set(v, text)
      }
      put(text)
      return
    }
    writeValue(v, depth)
  }

  const writeValue = (v: unknown, depth: number): void => {
    if (v === null || v === undefined) put("null")
    else if (v === true) put("true")
    else if (v === false) put("false")
    else if (typeof v === "string") str(v)
    else if (typeof v === "number") put(asFloat ? jsonDumpsFloat(v) : numberText(v))
    else if (typeof v === "bigint") put(v.toString())
    else if (v instanceof PythonNumber) put(v.text)
    else if (Array.isArray(v)) {
      if (v.length === 0) {
        put("[]")
        return
      }
      put("[")
      const inner = newline(depth + 1)
      const between = itemSep + inner
      for (let k = 0; k < v.length; k++) {
        put(k > 0 ? between : inner)
        write(v[k], depth + 1)
      }
      put(close(depth, "]"))
    } else if (typeof v === "object") {
      // a Map's keys (a dict's order) or an object's; each read back with `get`
      const map = v instanceof Map ? (v as ReadonlyMap<unknown, unknown>) : undefined
      const keys: Array<unknown> = map !== undefined ? [...map.keys()] : Object.keys(v)
      if (keys.length === 0) {
        put("{}")
        return
      }
      if (sortKeys) keys.sort((a, b) => byCodePoint(String(a), String(b)))
      put("{")
      const inner = newline(depth + 1)
      const between = itemSep + inner
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k]
        put(k > 0 ? between : inner)
        str(String(key))
        put(keySep)
        write(map !== undefined ? map.get(key) : (v as Record<string, unknown>)[key as string], depth + 1)
      }
      put(close(depth, "}"))
    } else str(String(v))
  }

  write(value, 0)
  sink(parts.join(""))
}

/**
 * Python's `json.dumps(value, ...)`: by default with Python's defaults (`", "` and `": "`, `ensure_ascii`, keys in
 * their order); see `JsonDumpsOptions` for how JavaScript values read as Python's.
 */
export const jsonDumps = (value: unknown, options: JsonDumpsOptions = {}): string => {
  const pieces: Array<string> = []
  jsonDumpsTo(value, (piece) => pieces.push(piece), options)
  return pieces.length === 1 ? (pieces[0] as string) : pieces.join("")
}
