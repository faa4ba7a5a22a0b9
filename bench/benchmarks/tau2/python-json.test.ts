import { describe, expect, it } from "vitest"
import { jsonDumpsFloat } from "../../../src/tools/environments/json-dumps.ts"
import { calculate } from "./python-arithmetic.ts"
import {
  copyCollections,
  freezePy,
  type PyValue,
  parsePyJson,
  pyEqual,
  pyJsonDumps,
  pyRound,
  writableEntry
} from "./python-json.ts"

// Expected texts are what CPython 3.11 prints for the same values (repr, round, json.dumps).
describe("Python's JSON, floats and rounding", () => {
  it("keeps an object's key order, integer-like keys included, and tells ints from floats", () => {
    const value = parsePyJson('{"9": 1, "1008292230": 2.0, "a": [3, 4.5, -0, 1e2], "0": null}') as Map<string, PyValue>
    expect([...value.keys()]).toEqual(["9", "1008292230", "a", "0"])
    expect(value.get("9")).toBe(1n)
    expect(value.get("1008292230")).toBe(2)
    expect(value.get("a")).toEqual([3n, 4.5, 0n, 100])
    expect(pyJsonDumps(value)).toBe('{"9": 1, "1008292230": 2.0, "a": [3, 4.5, 0, 100.0], "0": null}')
  })

  it("refuses text that is not JSON, saying where", () => {
    expect(() => parsePyJson('{"a": }')).toThrow(/at character 6/)
    expect(() => parsePyJson('{"a": 1} x')).toThrow(/after the value/)
    expect(() => parsePyJson('"unterminated')).toThrow(/unterminated/)
  })

  it("writes floats as Python's repr", () => {
    expect(jsonDumpsFloat(17)).toBe("17.0")
    expect(jsonDumpsFloat(54.04)).toBe("54.04")
    expect(jsonDumpsFloat(0.1 + 0.2)).toBe("0.30000000000000004")
    expect(jsonDumpsFloat(1e16)).toBe("1e+16")
    expect(jsonDumpsFloat(123456789012345680)).toBe("1.2345678901234568e+17")
    expect(jsonDumpsFloat(9999999999999998)).toBe("9999999999999998.0")
    expect(jsonDumpsFloat(0.0001)).toBe("0.0001")
    expect(jsonDumpsFloat(0.00001)).toBe("1e-05")
    expect(jsonDumpsFloat(-2.5e-7)).toBe("-2.5e-07")
    expect(jsonDumpsFloat(-0)).toBe("-0.0")
    expect(jsonDumpsFloat(1.5e300)).toBe("1.5e+300")
  })

  it("rounds as Python's round(x, 2): exact ties to even, everything else to the nearest", () => {
    expect(pyRound(1.125, 2)).toBe(1.12)
    expect(pyRound(1.375, 2)).toBe(1.38)
    expect(pyRound(-1.125, 2)).toBe(-1.12)
    expect(pyRound(2.675, 2)).toBe(2.67) // 2.675 is just below in binary
    expect(pyRound(0.125, 2)).toBe(0.12)
    expect(pyRound(153.23 - 135.24, 2)).toBe(17.99)
    expect(pyRound(0.5, 0)).toBe(0)
    expect(pyRound(1.5, 0)).toBe(2)
  })

  it("writes strings and keys as json.dumps does (ensure_ascii, sort_keys by code point)", () => {
    const value = new Map<string, string>([
      ["b", 'quote " and \\ and \n\t'],
      ["a", "café 😀 \u007f \u0001"]
    ])
    expect(pyJsonDumps(value)).toBe(
      '{"b": "quote \\" and \\\\ and \\n\\t", "a": "caf\\u00e9 \\ud83d\\ude00 \\u007f \\u0001"}'
    )
    expect(pyJsonDumps(value, { sortKeys: true }).startsWith('{"a": ')).toBe(true)
    expect(
      pyJsonDumps(
        new Map([
          ["\u{1F600}", 1n],
          ["\uFFFF", 2n]
        ]) as never,
        { sortKeys: true }
      )
    ).toBe('{"\\uffff": 2, "\\ud83d\\ude00": 1}')
  })

  it("compares as Python's ==: dict order ignored, 1 == 1.0, lists in order", () => {
    expect(
      pyEqual(
        new Map<string, unknown>([
          ["a", 1n],
          ["b", [1, 2]]
        ]),
        { b: [1n, 2.0], a: 1 }
      )
    ).toBe(true)
    expect(pyEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false)
    expect(pyEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false)
    expect(pyEqual("1", 1)).toBe(false)
  })

  it("gives each copy of a frozen database its own writable entries, and writes their JSON as it is now", () => {
    const frozen = freezePy({ orders: new Map([["#1", { status: "pending", total: 1.5 }]]) })
    const a = copyCollections(frozen)
    const b = copyCollections(frozen)
    const before = pyJsonDumps(a, { sortKeys: true })
    const order = writableEntry(a.orders, "#1") as { status: string }
    order.status = "cancelled"
    expect(pyJsonDumps(a, { sortKeys: true })).toBe('{"orders": {"#1": {"status": "cancelled", "total": 1.5}}}')
    expect(pyJsonDumps(b, { sortKeys: true })).toBe(before)
    expect(() => {
      ;(b.orders.get("#1") as { status: string }).status = "x"
    }).toThrow(TypeError)
  })
})

describe("calculate (τ²'s eval of arithmetic)", () => {
  it("answers as Python does", () => {
    expect(calculate("2 ** 10")).toBe("1024.0")
    expect(calculate("7 / 2")).toBe("3.5")
    expect(calculate("-7 // 2")).toBe("-4.0")
    expect(calculate("-3 ** 2")).toBe("-9.0")
    expect(calculate("2 ** -1")).toBe("0.5")
    expect(calculate("2 ** 3 ** 2")).toBe("512.0")
    expect(calculate("1.125 * 1")).toBe("1.12")
    expect(calculate("3131.1 + 4777.75 + 367.38")).toBe("8276.23")
    expect(calculate("123456789 * 987654321 * 1000")).toBe("1.2193263111263527e+20")
    expect(calculate(" ( 1 + 2 ) * 3 ")).toBe("9.0")
  })

  it("fails with Python's messages", () => {
    expect(() => calculate("1/0")).toThrow("division by zero")
    expect(() => calculate("1.0 / 0")).toThrow("float division by zero")
    expect(() => calculate("1e5")).toThrow("Invalid characters in expression")
    expect(() => calculate("(1 + 2")).toThrow("'(' was never closed (<string>, line 1)")
    expect(() => calculate("1 + 2)")).toThrow("unmatched ')' (<string>, line 1)")
    expect(() => calculate("2 +")).toThrow("invalid syntax (<string>, line 1)")
    expect(() => calculate("012")).toThrow(/leading zeros/)
    expect(() => calculate("9 ** 9 ** 9")).toThrow()
  })
})
