import { describe, expect, it } from "vitest"
import { canonicalArgs, canonicalValue, pythonJsonDumps, recanonicalize } from "./canonical.ts"

describe("canonical arguments", () => {
  it("sorts keys and writes scalars as strings, so spellings of one call match", () => {
    expect(canonicalArgs({ b: 5, a: "x" })).toBe('{"a":"x","b":"5"}')
    expect(canonicalArgs({ a: "x", b: "5" })).toBe(canonicalArgs({ b: 5, a: "x" }))
    expect(canonicalArgs({})).toBe("{}")
    expect(canonicalArgs({ a: undefined, b: 1 })).toBe('{"b":"1"}')
  })

  it("writes booleans and null the way Python's str() does", () => {
    expect(canonicalArgs({ lowercase: true, uppercase: false, x: null })).toBe(
      '{"lowercase":"True","uppercase":"False","x":"None"}'
    )
    expect(canonicalValue(1.5)).toBe("1.5")
  })

  it("writes nested values as Python's sorted-key json.dumps", () => {
    expect(pythonJsonDumps({ b: [1, true, null], a: "é" })).toBe('{"a": "é", "b": [1, true, null]}')
    expect(canonicalArgs({ keywords: ["science fiction", "thriller"], quantity: 40 })).toBe(
      '{"keywords":"[\\"science fiction\\", \\"thriller\\"]","quantity":"40"}'
    )
  })

  it("sorts keys by code point like Python (digits before letters, not JS integer-key order)", () => {
    expect(canonicalArgs({ b: 1, "10": 2, "2": 3, A: 4 })).toBe('{"10":"2","2":"3","A":"4","b":"1"}')
  })

  it("sorts keys beyond the surrogates by code point too (U+FF21 before an emoji, whose UTF-16 units sort lower)", () => {
    // Python: sorted(["\U0001F600", "\uFF21", "b", "ba"]) == ["b", "ba", "\uFF21", "\U0001F600"]
    expect(pythonJsonDumps({ "\u{1F600}": 1, "\uFF21": 2, ba: 3, b: 4 })).toBe('{"b": 4, "ba": 3, "Ａ": 2, "😀": 1}')
  })

  it("re-canonicalizes a recorded args text", () => {
    expect(recanonicalize('{"b": 1, "a": "x"}')).toBe('{"a":"x","b":"1"}')
    expect(recanonicalize("not json")).toBe("not json")
  })
})
