import { describe, expect, it } from "vitest"
import { cappedAt, capRecordSize, capStrings, hasLongString, recordBytes, recordText } from "./size-caps.ts"

describe("capStrings", () => {
  it("copies plain data with long strings cut, keys (__proto__ as data) and their order kept, other objects shared", () => {
    const when = new Date(0)
    const value = JSON.parse('{"a":"xxxxxxxxxx","__proto__":{"b":"yyyyyyyyyy"},"c":[1,"zzzzzzzzzz",null]}') as Record<
      string,
      unknown
    >
    value["d"] = when
    const capped = capStrings(value, 4)
    expect(capped).not.toBe(value)
    expect(Object.keys(capped)).toEqual(["a", "__proto__", "c", "d"])
    expect(Object.getPrototypeOf(capped)).toBe(Object.prototype)
    expect(Object.hasOwn(capped, "__proto__")).toBe(true)
    expect(JSON.stringify(capped)).toBe(
      '{"a":"xxxx… [cut: 10 characters in all]","__proto__":{"b":"yyyy… [cut: 10 characters in all]"},"c":[1,"zzzz… [cut: 10 characters in all]",null],"d":"1970-01-01T00:00:00.000Z"}'
    )
    expect(capped["d"]).toBe(when)
    expect(value["a"]).toBe("xxxxxxxxxx")
  })
})

describe("hasLongString", () => {
  it("finds a string longer than the cap anywhere in plain data, and only there", () => {
    expect(hasLongString({ a: [{ b: "xxxxx" }] }, 4)).toBe(true)
    expect(hasLongString({ a: [{ b: "xxxx" }], n: 12345678 }, 4)).toBe(false)
    expect(hasLongString("xxxxx", 4)).toBe(true)
    expect(hasLongString({ d: new Date(0) }, 4)).toBe(false) // capStrings keeps such objects as they are
    expect(hasLongString(JSON.parse('{"__proto__":{"b":"xxxxx"}}'), 4)).toBe(true)
  })
})

describe("capRecordSize", () => {
  it("returns a record with nothing to cut as it is, remembering the text it measured for the writer", () => {
    const record = { a: "short", n: [1, 2] }
    const kept = capRecordSize(record, 1024)
    expect(kept).toBe(record)
    expect(recordText(kept)).toBe(JSON.stringify(record, null, 2))
    expect(recordBytes(kept)).toBe(JSON.stringify(record, null, 2).length)
    // it fits the cap it was measured against and any larger one; a smaller cap measures it again
    expect([cappedAt(kept, 1024), cappedAt(kept, 4096), cappedAt(kept, 16), cappedAt({ ...record }, 1024)]).toEqual([
      true,
      true,
      false,
      false
    ])
  })

  it("cuts a record over the cap, and the text remembered is the cut record's", () => {
    const record = { a: "x".repeat(5000), b: "y".repeat(5000) }
    const cut = capRecordSize(record, 4000)
    expect(cut).not.toBe(record)
    expect(recordText(cut)).toBe(JSON.stringify(cut, null, 2))
    expect(recordBytes(cut)).toBeLessThanOrEqual(4000)
    expect(record.a).toHaveLength(5000)
  })
})
