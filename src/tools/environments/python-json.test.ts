// Python's json.dumps defaults and json.loads(strict=...), checked against texts CPython 3 printed for the same values.
import { describe, expect, it } from "vitest"
import { PythonNumber } from "./canonical.ts"
import { plainJson, pythonJsonDumpsAscii, pythonJsonLoads, serverResponseText } from "./python-json.ts"
import { pythonRepr } from "./python-repr.ts"

describe("json.dumps with Python's defaults", () => {
  it("keeps key order, spaces as Python, escapes every character outside printable ASCII (DEL too)", () => {
    // python3: json.dumps({'k\u00e9y': [1, 2.5, None, True, 'a"b\\\x7f\n'], 'n': nan, 'i': -inf})
    expect(
      pythonJsonDumpsAscii({
        kéy: [1, 2.5, null, true, 'a"b\\\x7f\n'],
        n: new PythonNumber("NaN"),
        i: Number.NEGATIVE_INFINITY
      })
    ).toBe('{"k\\u00e9y": [1, 2.5, null, true, "a\\"b\\\\\\u007f\\n"], "n": NaN, "i": -Infinity}')
  })

  it("writes a number as it was read: 10.0 stays a float, an astral character is two escapes", () => {
    const read = pythonJsonLoads('{"price": 10.0, "tiny": 1e-7, "big": 12345678901234567890, "s": "\\ud83d\\ude00"}')
    // python3: json.dumps(json.loads(...)) of the same text
    expect(pythonJsonDumpsAscii(read)).toBe(
      '{"price": 10.0, "tiny": 1e-07, "big": 12345678901234567890, "s": "\\ud83d\\ude00"}'
    )
  })

  it("nests a structured response in the server's {error, response} and keeps a text response a string", () => {
    expect(serverResponseText("", { content: '{"a":1}', structured: { a: new PythonNumber("1.0") } })).toBe(
      '{"error": "", "response": {"a": 1.0}}'
    )
    expect(serverResponseText("", { content: '{"a":1}' })).toBe('{"error": "", "response": "{\\"a\\":1}"}')
    expect(serverResponseText("boom")).toBe('{"error": "boom", "response": ""}')
  })
})

describe("json.loads", () => {
  it("refuses a raw control character inside a string when strict, reads it with strict=False", () => {
    expect(() => pythonJsonLoads('{"a": "x\ny"}')).toThrow(SyntaxError)
    expect(plainJson(pythonJsonLoads('{"a": "x\ny\tz"}', false))).toEqual({ a: "x\ny\tz" })
    // outside a string a line break is whitespace either way
    expect(plainJson(pythonJsonLoads('{\n"a": 1}'))).toEqual({ a: 1 })
  })

  it("reads Python's NaN and Infinity outside strings only, and refuses what Python refuses", () => {
    expect(pythonRepr(pythonJsonLoads('{"n": NaN, "i": -Infinity, "s": "NaN x"}'))).toBe(
      "{'n': nan, 'i': -inf, 's': 'NaN x'}"
    )
    expect(() => pythonJsonLoads('{"a": 1,}')).toThrow(SyntaxError)
    expect(() => pythonJsonLoads("{'a': 1}")).toThrow(SyntaxError)
  })

  it("keeps key order and number texts for str(tool_input)", () => {
    // python3: str(json.loads('{"limit": 10.0, "q": "x", "n": 5}'))
    expect(pythonRepr(pythonJsonLoads('{"limit": 10.0, "q": "x", "n": 5}'))).toBe("{'limit': 10.0, 'q': 'x', 'n': 5}")
  })
})
