import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { findTool } from "../library.ts"
import type { ToolResult } from "../tool.ts"
import { convertCurrency } from "./convert-currency.ts"
import { convertUnits } from "./convert-units.ts"
import { dateDiff } from "./date-diff.ts"
import { demoLibrary } from "./index.ts"

const call = async (name: string, args: Record<string, unknown>): Promise<ToolResult> => {
  const tool = findTool(demoLibrary(), name)
  if (!tool) throw new Error(`no tool ${name}`)
  return Effect.runPromise(tool.call(tool.parameters.parse(args)))
}

describe("demo library", () => {
  it("is named demo and holds the five tools", () => {
    expect(demoLibrary().name).toBe("demo")
    expect(demoLibrary().tools.map((t) => t.name)).toEqual([
      "calculator",
      "convert_units",
      "convert_currency",
      "lookup_fact",
      "date_diff"
    ])
  })

  it("calculator answers with tidy numbers and fails as data", async () => {
    expect(JSON.parse((await call("calculator", { expression: "0.1 + 0.2" })).content)).toEqual({
      expression: "0.1 + 0.2",
      result: 0.3
    })
    expect(await call("calculator", { expression: "1/0" })).toMatchObject({
      ok: false,
      error: 'tool "calculator" failed: division by zero'
    })
  })

  it("convert_units uses exact factors and refuses mixed dimensions", async () => {
    expect(convertUnits(1, "mile", "km").result).toBe(1.609344)
    expect(convertUnits(100, "C", "F").result).toBe(212)
    expect(convertUnits(0, "kelvin", "celsius").result).toBe(-273.15)
    expect(convertUnits(1, "gal", "l").result).toBe(3.785411784)
    expect(convertUnits(16, "oz", "lb").result).toBe(1)
    expect(() => convertUnits(1, "kg", "m")).toThrow("cannot convert mass (kg) to length (m)")
    expect(() => convertUnits(1, "furlong", "m")).toThrow('unknown unit "furlong"')
    const result = await call("convert_units", { value: 5, from: "km", to: "m" })
    expect(JSON.parse(result.content)).toMatchObject({ result: 5000, dimension: "length" })
  })

  it("convert_currency uses the fixed demo rates through USD", async () => {
    expect(convertCurrency(100, "USD", "EUR")).toBe(92)
    expect(convertCurrency(92, "eur", "usd")).toBe(100)
    expect(convertCurrency(100, "GBP", "JPY")).toBe(Math.round((100 / 0.78) * 151.5 * 100) / 100)
    expect(await call("convert_currency", { amount: 1, from: "XXX", to: "USD" })).toMatchObject({ ok: false })
  })

  it("lookup_fact finds facts by subject and attribute, and explains a miss", async () => {
    const capital = JSON.parse((await call("lookup_fact", { subject: "france", attribute: "capital" })).content)
    expect(capital).toEqual([{ subject: "France", attribute: "capital", value: "Paris", source: "constitution" }])
    const everest = JSON.parse((await call("lookup_fact", { subject: "Everest" })).content)
    expect(everest[0]).toMatchObject({ value: 8849, unit: "m" })
    const miss = await call("lookup_fact", { subject: "Atlantis" })
    expect(miss.ok).toBe(false)
    expect(miss.error).toContain("known subjects: France")
    const noAttr = await call("lookup_fact", { subject: "France", attribute: "currency" })
    expect(noAttr.error).toContain("known attributes: capital")
  })

  it("date_diff counts days, months and years across leap years", async () => {
    expect(dateDiff("2024-01-31", "2024-03-01")).toMatchObject({ days: 30, months: 1, years: 0 })
    expect(dateDiff("2000-02-29", "2024-02-28")).toMatchObject({ days: 8765, years: 23 })
    expect(dateDiff("2024-03-01", "2024-01-31")).toMatchObject({ days: -30, months: -1 })
    expect(dateDiff("2024-01-01", "2024-01-08").weekday_of_end).toBe("Monday")
    expect(await call("date_diff", { start: "2024-02-30", end: "2024-03-01" })).toMatchObject({ ok: false })
  })
})
