import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { compareWithCPython, type JsonDumpsCorpusCase } from "../../../test/json-dumps-corpus.ts"
import { PythonNumber } from "./canonical.ts"
import { jsonDumps, jsonDumpsTo } from "./json-dumps.ts"

// CPython 3.11's json.dumps of 800 generated values under 10 option sets (scripts/json-dumps-corpus.ts --write-fixture)
const corpus: ReadonlyArray<JsonDumpsCorpusCase> = readFileSync(
  new URL("../../../test/fixtures/json-dumps/cpython.jsonl", import.meta.url),
  "utf8"
)
  .split("\n")
  .filter((line) => line !== "")
  .map((line) => JSON.parse(line) as JsonDumpsCorpusCase)

describe("jsonDumps (CPython's json.dumps)", () => {
  it("writes every text of the stored CPython corpus alike, in each value model", () => {
    const { routes, mismatches } = compareWithCPython(corpus)
    expect(mismatches.slice(0, 3)).toEqual([])
    // each way of holding the values is compared on most of the corpus, not skipped
    expect(routes["pythonValues"]!.compared).toBe(8000)
    expect(routes["recordedText"]!.compared).toBeGreaterThan(7000)
    expect(routes["plainJson"]!.compared).toBeGreaterThan(6000)
  })

  it("escapes DEL and writes Python's float repr under the defaults (ToolEval's judge inputs)", () => {
    expect(jsonDumps({ b: "é €\u007f", a: [1, 2.5, 1e-7, 1e16, true, null], c: { ü: 'x\n"' } })).toBe(
      '{"b": "\\u00e9 \\u20ac\\u007f", "a": [1, 2.5, 1e-07, 1e+16, true, null], "c": {"\\u00fc": "x\\n\\""}}'
    )
    expect(jsonDumps("😀")).toBe('"\\ud83d\\ude00"')
    expect(jsonDumps([Number.NaN, Number.POSITIVE_INFINITY, new PythonNumber("10.0"), 12345678901234567890n])).toBe(
      "[NaN, Infinity, 10.0, 12345678901234567890]"
    )
  })

  it("takes ensure_ascii, sort_keys, indent and separators as Python does", () => {
    const value = new Map<string, unknown>([
      ["b", [1, []]],
      ["a", { x: "\u007fé" }],
      ["10", {}]
    ])
    expect(jsonDumps(value, { sortKeys: true, ensureAscii: false })).toBe(
      '{"10": {}, "a": {"x": "\u007fé"}, "b": [1, []]}'
    )
    expect(jsonDumps(value, { indent: 2 })).toBe(
      '{\n  "b": [\n    1,\n    []\n  ],\n  "a": {\n    "x": "\\u007f\\u00e9"\n  },\n  "10": {}\n}'
    )
    expect(jsonDumps([1, [2]], { indent: 0 })).toBe("[\n1,\n[\n2\n]\n]")
    expect(jsonDumps({ a: 1, b: 2 }, { separators: [",", ":"] })).toBe('{"a":1,"b":2}')
    expect(jsonDumps([5, 5.5, -0], { wholeNumbers: "float" })).toBe("[5.0, 5.5, -0.0]")
  })

  it("streams a long text in pieces and reuses a frozen part's text, also inside a flushed text", () => {
    const part = Object.freeze(
      new Map(Array.from({ length: 3000 }, (_, i) => [`k${i}`, Object.freeze([i, "é", 0.5])] as const))
    )
    const value = { first: part, second: part, third: [1.5] }
    const pieces: Array<string> = []
    jsonDumpsTo(value, (p) => pieces.push(p), { cacheFrozen: true, sortKeys: true })
    expect(pieces.length).toBeGreaterThan(1)
    const whole = jsonDumps(value, { sortKeys: true })
    expect(pieces.join("")).toBe(whole)
    expect(jsonDumps(value, { cacheFrozen: true, sortKeys: true })).toBe(whole)
    // another option set is not served the first one's texts
    expect(jsonDumps(value, { cacheFrozen: true, ensureAscii: false })).toBe(jsonDumps(value, { ensureAscii: false }))
  })
})
