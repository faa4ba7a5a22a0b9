import { describe, expect, it } from "vitest"
import { pythonJsonDumps } from "./json-dumps.ts"

describe("pythonJsonDumps (json.dumps defaults)", () => {
  it("keeps key order, spaces after separators and escapes non-ASCII as Python does", () => {
    expect(pythonJsonDumps({ b: "é €", a: [1, 2.5, true, null], c: { ü: 'x\n"' } })).toBe(
      '{"b": "\\u00e9 \\u20ac", "a": [1, 2.5, true, null], "c": {"\\u00fc": "x\\n\\""}}'
    )
    expect(pythonJsonDumps("😀")).toBe('"\\ud83d\\ude00"')
  })
})
