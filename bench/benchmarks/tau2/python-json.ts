// JSON as τ²-bench's Python reads and writes it: objects keep their key order (a JS object would move integer-like
// keys such as item ids to the front), ints and floats stay apart, and text is written as `json.dumps` writes it.
import { jsonDumps, jsonDumpsTo } from "../../../src/tools/environments/json-dumps.ts"

/**
 * A Python value as the τ² port holds it: a `dict` is a `Map` (key order kept), a model (a pydantic object) is a plain
 * object whose keys are its fields in declaration order, an `int` is a `bigint`, a `float` is a `number`.
 */
export type PyValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | ReadonlyArray<PyValue>
  | ReadonlyMap<string, PyValue>
  | { readonly [key: string]: PyValue }

/** A JSON text that is not valid JSON; `offset` is where the reader stopped. */
export class PyJsonSyntaxError extends Error {
  readonly offset: number
  constructor(problem: string, offset: number) {
    super(`${problem} at character ${offset}`)
    this.offset = offset
  }
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"])

/**
 * Parse JSON as Python's `json.loads` does: every object becomes a `Map` in the order of the text, a number without
 * a fraction or an exponent becomes a `bigint` (Python's int), any other number a `number` (Python's float).
 */
export const parsePyJson = (text: string): PyValue => {
  let i = 0
  const fail = (problem: string): never => {
    throw new PyJsonSyntaxError(problem, i)
  }
  const skip = () => {
    while (i < text.length && WHITESPACE.has(text[i] as string)) i++
  }
  const parseString = (): string => {
    // text[i] is the opening quote
    i++
    let out = ""
    let start = i
    for (;;) {
      if (i >= text.length) fail("unterminated string")
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        out += text.slice(start, i)
        i++
        return out
      }
      if (c === 0x5c) {
        out += text.slice(start, i)
        const e = text[i + 1]
        i += 2
        switch (e) {
          case '"':
            out += '"'
            break
          case "\\":
            out += "\\"
            break
          case "/":
            out += "/"
            break
          case "b":
            out += "\b"
            break
          case "f":
            out += "\f"
            break
          case "n":
            out += "\n"
            break
          case "r":
            out += "\r"
            break
          case "t":
            out += "\t"
            break
          case "u": {
            const hex = text.slice(i, i + 4)
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("invalid \\u escape")
            out += String.fromCharCode(Number.parseInt(hex, 16))
            i += 4
            break
          }
          default:
            i -= 1
            fail("invalid escape")
        }
        start = i
        continue
      }
      if (c < 0x20) fail("control character in string")
      i++
    }
  }
  const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y
  const parseValue = (depth: number): PyValue => {
    if (depth > 512) fail("nesting too deep")
    skip()
    const c = text[i]
    if (c === "{") {
      i++
      const map = new Map<string, PyValue>()
      skip()
      if (text[i] === "}") {
        i++
        return map
      }
      for (;;) {
        skip()
        if (text[i] !== '"') fail("expected a string key")
        const key = parseString()
        skip()
        if (text[i] !== ":") fail("expected ':'")
        i++
        map.set(key, parseValue(depth + 1))
        skip()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "}") {
          i++
          return map
        }
        fail("expected ',' or '}'")
      }
    }
    if (c === "[") {
      i++
      const list: Array<PyValue> = []
      skip()
      if (text[i] === "]") {
        i++
        return list
      }
      for (;;) {
        list.push(parseValue(depth + 1))
        skip()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "]") {
          i++
          return list
        }
        fail("expected ',' or ']'")
      }
    }
    if (c === '"') return parseString()
    if (text.startsWith("true", i)) {
      i += 4
      return true
    }
    if (text.startsWith("false", i)) {
      i += 5
      return false
    }
    if (text.startsWith("null", i)) {
      i += 4
      return null
    }
    NUMBER.lastIndex = i
    const m = NUMBER.exec(text)
    if (m === null) return fail("unexpected character")
    i = NUMBER.lastIndex
    return m[1] === undefined && m[2] === undefined ? BigInt(m[0]) : Number(m[0])
  }
  const value = parseValue(0)
  skip()
  if (i !== text.length) fail("unexpected text after the value")
  return value
}

/**
 * Python's `round(x, ndigits)` of a float: the decimal nearest to the exact binary value, ties to even (JS's
 * `toFixed` breaks ties upwards).
 */
export const pyRound = (x: number, ndigits: number): number => {
  if (!Number.isFinite(x) || x === 0) return x
  if (Math.abs(x) >= 1e21) return x
  const fixed = x.toFixed(ndigits)
  const exact = Math.abs(x).toFixed(100)
  const point = exact.indexOf(".")
  const rest = exact.slice(point + 1 + ndigits)
  if (/^50*$/.test(rest)) {
    // an exact tie: toFixed went away from zero; Python goes to the even neighbour
    const kept = exact.slice(0, point + 1 + ndigits)
    const lastDigit = Number(kept[kept.length - 1] === "." ? kept[kept.length - 2] : kept[kept.length - 1])
    if (lastDigit % 2 === 0) {
      const truncated = Number(kept.endsWith(".") ? kept.slice(0, -1) : kept)
      return x < 0 ? -truncated : truncated
    }
  }
  return Number(fixed)
}

/** Options of `pyJsonDumps`, as `json.dumps`' keyword arguments. */
export interface PyJsonDumpsOptions {
  /** `sort_keys=True`. */
  readonly sortKeys?: boolean | undefined
}

/**
 * `json.dumps(value)` of a `PyValue` (every `number` a float, `bigint`s ints) in pieces of about 64 KiB handed to
 * `sink` (a hash reads a database's 2 MB without one string); a frozen part's text is written once and reused.
 */
export const pyJsonDumpsTo = (
  value: PyValue | undefined,
  sink: (piece: string) => void,
  options: PyJsonDumpsOptions = {}
): void => jsonDumpsTo(value, sink, { sortKeys: options.sortKeys, wholeNumbers: "float", cacheFrozen: true })

/** `json.dumps(value)` with Python's defaults (`", "`, `": "`, `ensure_ascii`, floats as `repr`) of a `PyValue`. */
export const pyJsonDumps = (value: PyValue | undefined, options: PyJsonDumpsOptions = {}): string =>
  jsonDumps(value, { sortKeys: options.sortKeys, wholeNumbers: "float", cacheFrozen: true })

/** A parsed Python value as plain JSON-ready data (Maps as objects, ints as numbers), for records and reports. */
export const pyToPlain = (value: PyValue): unknown => {
  if (typeof value === "bigint") return Number(value)
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return (value as ReadonlyArray<PyValue>).map(pyToPlain)
  const entries = value instanceof Map ? [...value] : Object.entries(value)
  return Object.fromEntries(entries.map(([k, v]) => [k, pyToPlain(v as PyValue)]))
}

/** A deep copy of a Python value (Maps, lists, models); a database copy for one conversation. */
export const clonePy = <T>(value: T): T => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map(clonePy) as T
  if (value instanceof Map) {
    const copy = new Map()
    for (const [k, v] of value) copy.set(k, clonePy(v))
    return copy as T
  }
  const copy: Record<string, unknown> = {}
  for (const k of Object.keys(value)) copy[k] = clonePy((value as Record<string, unknown>)[k])
  return copy as T
}

/** A Python dict as the port holds one: a Map, or a plain object (a model). */
export const isPyDict = (v: unknown): v is ReadonlyMap<string, unknown> | Readonly<Record<string, unknown>> =>
  v instanceof Map || (typeof v === "object" && v !== null && !Array.isArray(v))

/** A dict's entries as a Map (the Map itself when it is one). */
export const pyDictEntries = (
  v: ReadonlyMap<string, unknown> | Readonly<Record<string, unknown>>
): Map<string, unknown> => (v instanceof Map ? (v as Map<string, unknown>) : new Map(Object.entries(v)))

/** As a Python number: bool is an int there (`True == 1`). */
const asNumber = (v: unknown): number | bigint | undefined =>
  typeof v === "number" || typeof v === "bigint" ? v : typeof v === "boolean" ? (v ? 1n : 0n) : undefined

/**
 * Python's `==` on JSON-like values: dicts equal whatever their key order (a Map or a plain object), lists
 * element-wise, ints and floats by value (`1 == 1.0`, `True == 1`).
 */
export const pyEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  const x = asNumber(a)
  const y = asNumber(b)
  if (x !== undefined && y !== undefined) {
    // biome-ignore lint/suspicious/noDoubleEquals: a bigint equals a number of the same value only with ==
    return x == y
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((v, k) => pyEqual(v, b[k]))
  }
  if (isPyDict(a) && isPyDict(b)) {
    const m = pyDictEntries(a)
    const n = pyDictEntries(b)
    if (m.size !== n.size) return false
    for (const [k, v] of m) if (!n.has(k) || !pyEqual(v, n.get(k))) return false
    return true
  }
  return false
}

/**
 * Freeze a Python value and everything in it (a Map's entries are left as they are by `Object.freeze`; no code here
 * changes a frozen Map). A frozen part is read-only and may be shared: its JSON text is kept once computed.
 */
export const freezePy = <T>(value: T): T => {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value
  if (value instanceof Map) for (const v of value.values()) freezePy(v)
  else for (const v of Object.values(value)) freezePy(v)
  return Object.freeze(value)
}

/**
 * A database for one conversation from a frozen one: the root and its collections (Maps, lists) are new, their
 * entries are the frozen originals until a tool writes one (`writableEntry` copies it first). Nothing writable is
 * shared between two copies.
 */
export const copyCollections = <T>(frozenRoot: T): T => {
  const root: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(frozenRoot as Record<string, unknown>))
    root[k] = v instanceof Map ? new Map(v) : Array.isArray(v) ? [...v] : v
  return root as T
}

/** The entry `id` of a conversation's collection, copied into it first when it is still the shared frozen one. */
export const writableEntry = <T>(collection: Map<string, T>, id: string): T | undefined => {
  const entry = collection.get(id)
  if (entry === undefined || entry === null || typeof entry !== "object" || !Object.isFrozen(entry)) return entry
  const copy = clonePy(entry)
  collection.set(id, copy)
  return copy
}
