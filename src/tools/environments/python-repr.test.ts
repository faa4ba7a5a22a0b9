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

describe("Python repr of every code point", () => {
  it("escapes what str.isprintable calls not printable, as CPython 3 does", () => {
    // python3: repr({'a': '\t\u0085\u00ad\u061c\u2029\ue000 x', 'b': 1e-07})
    expect(pythonRepr({ a: "\t\u0085\u00ad\u061c\u2029\ue000 x", b: 1e-7 })).toBe(
      "{'a': '\\t\\x85\\xad\\u061c\\u2029\\ue000 x', 'b': 1e-07}"
    )
    // python3: repr('a\x80\xa0\u200b\u2028\U0001F600\ud800 \u3000\xe9\x7f\U000E0001')
    expect(pythonStrRepr("a\x80\xa0\u200b\u2028\u{1F600}\ud800 \u3000é\x7f\u{E0001}")).toBe(
      "'a\\x80\\xa0\\u200b\\u2028\u{1F600}\\ud800 \\u3000é\\x7f\\U000e0001'"
    )
  })

  it("reads numbers as eval does when asked to keep them: str() then writes them as Python", () => {
    expect(pythonRepr(parsePythonLiteral("{'limit': 10.0, 'big': 1e5, 'n': -7}", true))).toBe(
      "{'limit': 10.0, 'big': 100000.0, 'n': -7}"
    )
  })
})
