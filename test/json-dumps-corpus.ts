// Our `jsonDumps` against CPython's `json.dumps` on corpus values (scripts/json-dumps-corpus.ts makes them; the unit
// test reads a stored part, test/fixtures/json-dumps/cpython.jsonl).
import { type JsonDumpsOptions, jsonDumps } from "../src/tools/environments/json-dumps.ts"
import { pythonJsonLoads } from "../src/tools/environments/python-json.ts"

/** A Python value as the corpus carries it: ints as digits, floats as repr, dicts as pairs (order and types kept). */
export type Tagged =
  | readonly ["n"]
  | readonly ["b", boolean]
  | readonly ["i", string]
  | readonly ["f", string]
  | readonly ["s", string]
  | readonly ["l", ReadonlyArray<Tagged>]
  | readonly ["d", ReadonlyArray<readonly [string, Tagged]>]

/** One value and CPython's text of it under each option set of `JSON_DUMPS_OPTION_SETS`. */
export interface JsonDumpsCorpusCase {
  readonly input: Tagged
  readonly outputs: Readonly<Record<string, string>>
}

/** `json.dumps`' keyword arguments as python3 takes them, by name; `OURS` gives ours for each. */
export const JSON_DUMPS_OPTION_SETS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  default: {},
  noAscii: { ensure_ascii: false },
  sorted: { sort_keys: true },
  sortedNoAscii: { sort_keys: true, ensure_ascii: false },
  indent2: { indent: 2 },
  indent4Sorted: { indent: 4, sort_keys: true },
  indent0: { indent: 0 },
  indentTabNoAscii: { indent: "\t", ensure_ascii: false },
  compact: { separators: [",", ":"] },
  indentCompact: { indent: 1, separators: [";", "="] }
}

const ours = (python: Readonly<Record<string, unknown>>): JsonDumpsOptions => ({
  ensureAscii: python["ensure_ascii"] as boolean | undefined,
  sortKeys: python["sort_keys"] as boolean | undefined,
  indent: python["indent"] as number | string | undefined,
  separators: python["separators"] as readonly [string, string] | undefined
})

const floatOf = (repr: string): number => Number(repr)

/** As τ²'s port holds Python values: a dict a Map, an int a bigint, a float a number. */
export const pythonValueOf = (t: Tagged): unknown => {
  switch (t[0]) {
    case "n":
      return null
    case "b":
    case "s":
      return t[1]
    case "i":
      return BigInt(t[1])
    case "f":
      return floatOf(t[1])
    case "l":
      return t[1].map(pythonValueOf)
    case "d":
      return new Map(t[1].map(([k, v]) => [k, pythonValueOf(v)]))
  }
}

/** Whether every dict's keys keep their order in a JavaScript object (integer-like keys move first there). */
const keyOrderKept = (t: Tagged): boolean => {
  if (t[0] === "l") return t[1].every(keyOrderKept)
  if (t[0] !== "d") return true
  const keys = t[1].map(([k]) => k)
  const jsOrder = Object.keys(Object.fromEntries(keys.map((k) => [k, 0])))
  return jsOrder.every((k, i) => k === keys[i]) && t[1].every(([, v]) => keyOrderKept(v))
}

/** Whether JSON.parse keeps what Python prints: no whole float below 1e16 (read as an int), no int past 2^53. */
const plainNumbersKept = (t: Tagged): boolean => {
  switch (t[0]) {
    case "f": {
      const x = floatOf(t[1])
      return Number.isFinite(x) && !(Number.isInteger(x) && Math.abs(x) < 1e16)
    }
    case "i":
      return BigInt(t[1]) <= 2n ** 53n && BigInt(t[1]) >= -(2n ** 53n)
    case "l":
      return t[1].every(plainNumbersKept)
    case "d":
      return t[1].every(([, v]) => plainNumbersKept(v))
    default:
      return true
  }
}

export interface RouteResult {
  compared: number
  equal: number
  skipped: number
  readonly why: string
}

export interface Mismatch {
  readonly route: string
  readonly option: string
  readonly input: Tagged
  readonly expected: string
  readonly actual: string
}

/**
 * Dump every case three ways and compare with CPython's texts: `pythonValues` (Maps, bigints, floats: τ²'s model,
 * `wholeNumbers: "float"`), `recordedText` (CPython's default text read back with `pythonJsonLoads`, numbers kept
 * as recorded: the reference profile's tool responses) and `plainJson` (the text read with JSON.parse: the
 * ToolEval inputs); the last two skip values JavaScript objects or numbers cannot hold (said in `why`).
 */
export const compareWithCPython = (
  cases: ReadonlyArray<JsonDumpsCorpusCase>,
  dumps: (value: unknown, options: JsonDumpsOptions) => string = jsonDumps
): { routes: Record<string, RouteResult>; mismatches: Array<Mismatch> } => {
  const routes: Record<string, RouteResult> = {
    pythonValues: { compared: 0, equal: 0, skipped: 0, why: "none skipped" },
    recordedText: {
      compared: 0,
      equal: 0,
      skipped: 0,
      why: "a dict with integer-like keys out of JavaScript's order"
    },
    plainJson: {
      compared: 0,
      equal: 0,
      skipped: 0,
      why: "key order as above, or NaN/Infinity, a whole float below 1e16 or an int past 2^53 in it"
    }
  }
  const mismatches: Array<Mismatch> = []
  const check = (
    route: string,
    input: Tagged,
    value: unknown,
    outputs: Readonly<Record<string, string>>,
    more = {}
  ) => {
    const r = routes[route]!
    for (const [option, python] of Object.entries(JSON_DUMPS_OPTION_SETS)) {
      const expected = outputs[option]
      if (expected === undefined) continue
      const actual = dumps(value, { ...ours(python), ...more })
      r.compared++
      if (actual === expected) r.equal++
      else mismatches.push({ route, option, input, expected, actual })
    }
  }
  for (const c of cases) {
    check("pythonValues", c.input, pythonValueOf(c.input), c.outputs, { wholeNumbers: "float" })
    const text = c.outputs["default"]!
    if (!keyOrderKept(c.input)) {
      routes["recordedText"]!.skipped++
      routes["plainJson"]!.skipped++
      continue
    }
    check("recordedText", c.input, pythonJsonLoads(text), c.outputs)
    if (plainNumbersKept(c.input)) check("plainJson", c.input, JSON.parse(text), c.outputs)
    else routes["plainJson"]!.skipped++
  }
  return { routes, mismatches }
}
