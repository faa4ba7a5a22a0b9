import { describe, expect, it } from "vitest"
import { evaluateArithmetic } from "./arithmetic.ts"

describe("evaluateArithmetic", () => {
  it("respects precedence, associativity and parentheses", () => {
    expect(evaluateArithmetic("2 + 3 * 4")).toBe(14)
    expect(evaluateArithmetic("(2 + 3) * 4")).toBe(20)
    expect(evaluateArithmetic("2 ^ 3 ^ 2")).toBe(512)
    expect(evaluateArithmetic("2 ** 10")).toBe(1024)
    expect(evaluateArithmetic("-2 ^ 2")).toBe(-4)
    expect(evaluateArithmetic("10 - 4 - 3")).toBe(3)
    expect(evaluateArithmetic("7 % 4 + 1.5e1")).toBe(18)
    expect(evaluateArithmetic("12 × 3 ÷ 4")).toBe(9)
  })

  it("knows constants and functions", () => {
    expect(evaluateArithmetic("sqrt(16) + abs(-2) + max(1, 5, 3)")).toBe(11)
    expect(evaluateArithmetic("round(pi * 100)")).toBe(314)
    expect(evaluateArithmetic("log(1000)")).toBe(3)
  })

  it("rejects bad input with the reason, and never evaluates code", () => {
    expect(() => evaluateArithmetic("1 / 0")).toThrow("division by zero")
    expect(() => evaluateArithmetic("2 +")).toThrow("ends too early")
    expect(() => evaluateArithmetic("(1 + 2")).toThrow('expected ")"')
    expect(() => evaluateArithmetic("process.exit(1)")).toThrow()
    expect(() => evaluateArithmetic("foo(1)")).toThrow('unknown function "foo"')
    expect(() => evaluateArithmetic("1 2")).toThrow('unexpected "2"')
    expect(() => evaluateArithmetic("")).toThrow("empty")
  })
})
