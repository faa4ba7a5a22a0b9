import { describe, expect, it } from "vitest"
import { parsePythonLiteral, pythonRepr, pythonStrRepr } from "./python-repr.ts"

describe("Python repr", () => {
  it("prints decoded arguments as Python's str(dict) does", () => {
    expect(pythonRepr({ q: "birthday", limit: 5 })).toBe("{'q': 'birthday', 'limit': 5}")
    expect(pythonRepr({ flag: true, none: null, list: [1, "a"], nested: { x: 1.5 } })).toBe(
      "{'flag': True, 'none': None, 'list': [1, 'a'], 'nested': {'x': 1.5}}"
    )
    expect(pythonRepr({})).toBe("{}")
  })

  it("quotes and escapes strings like Python", () => {
    expect(pythonStrRepr("it's")).toBe(`"it's"`)
    expect(pythonStrRepr(`both ' and "`)).toBe(`'both \\' and "'`)
    expect(pythonStrRepr("a\nb\\c")).toBe("'a\\nb\\\\c'")
    expect(pythonStrRepr("日本")).toBe("'日本'")
  })

  it("reads such reprs back", () => {
    expect(parsePythonLiteral("{'q': 'birthday', 'limit': 5}")).toEqual({ q: "birthday", limit: 5 })
    expect(parsePythonLiteral(`{"it's": [True, False, None, -1.5e3, (1, 2)], 'e': 'a\\nb'}`)).toEqual({
      "it's": [true, false, null, -1500, [1, 2]],
      e: "a\nb"
    })
    expect(parsePythonLiteral("{}")).toEqual({})
    expect(parsePythonLiteral("{'a': }")).toBeUndefined()
    expect(parsePythonLiteral("not python")).toBeUndefined()
  })

  it("round-trips", () => {
    const value = { text: `quotes ' " and \t tab`, n: 3, ok: false, items: [{ a: null }] }
    expect(parsePythonLiteral(pythonRepr(value))).toEqual(value)
  })
})
