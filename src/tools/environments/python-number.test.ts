import { describe, expect, it } from "vitest"
import { canonicalArgs, pythonJsonDumps, recanonicalize } from "./canonical.ts"
import { pythonFloat } from "./python-number.ts"
import { pythonRepr } from "./python-repr.ts"
import { makeReplayIndex } from "./recorded.ts"

describe("numbers as Python writes them", () => {
  it("repr of floats: shortest digits, fixed from 1e-4 to 1e16, else a signed two-digit exponent", () => {
    // each expected text is Python 3's repr() of the same float
    const cases: Array<[number, string]> = [
      [1e-7, "1e-07"],
      [1e16, "1e+16"],
      [5, "5.0"],
      [1.5e-5, "1.5e-05"],
      [0.0001, "0.0001"],
      [1e21, "1e+21"],
      [1e15, "1000000000000000.0"],
      [123456.789, "123456.789"],
      [-3.25, "-3.25"],
      [-0, "-0.0"],
      [1.2345678901234567e20, "1.2345678901234567e+20"]
    ]
    for (const [n, text] of cases) expect(pythonFloat(n)).toBe(text)
  })

  it("canonical arguments and json.dumps write numbers as Python does", () => {
    expect(canonicalArgs({ eps: 1e-7, big: 1e16, n: 5 })).toBe('{"big":"1e+16","eps":"1e-07","n":"5"}')
    expect(canonicalArgs({ n: 5 }, true)).toBe('{"n":"5.0"}')
    expect(pythonJsonDumps({ a: [1e-7, 2] })).toBe('{"a": [1e-07, 2]}')
    expect(pythonRepr({ a: 1e-7, b: 0.5 })).toBe("{'a': 1e-07, 'b': 0.5}")
  })

  it("recorded JSON keeps its floats: 5.0 stays 5.0, 1E-7 becomes 1e-07, big ints stay ints", () => {
    expect(recanonicalize('{"lat": 5.0, "eps": 1E-7, "id": 12345678901234567890, "n": 3}')).toBe(
      '{"eps":"1e-07","id":"12345678901234567890","lat":"5.0","n":"3"}'
    )
  })

  it("a call with a whole number finds the response recorded with the float the model wrote", () => {
    const index = makeReplayIndex()
    // as responses.jsonl holds them: canonical, every value the text Python's str() gave
    index.add({
      tool: "geo",
      api: "near",
      args: '{"lat":"49.0","lon":"2.35","radius":"1e-05"}',
      response: '{"error": "", "response": "ok"}'
    })
    index.add({
      tool: "geo",
      api: "far",
      args: '{"lat": 49.0, "radius": 1e-05}',
      response: '{"error": "", "response": "far"}'
    })
    expect(index.lookup("geo", "near", { lat: 49, lon: 2.35, radius: 0.00001 })?.response).toContain("ok")
    expect(index.lookup("geo", "far", { lat: 49, radius: 0.00001 })?.response).toContain("far")
    expect(index.lookup("geo", "near", { lat: 48, lon: 2.35, radius: 0.00001 })).toBeUndefined()
  })
})
