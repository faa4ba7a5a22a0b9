import { describe, expect, it } from "vitest"
import { METHOD_NAMES, METHODS, methodFor, methodSpec, UnknownMethod } from "./methods.ts"

describe("the method registry", () => {
  it("lists each method once, with its label and the run options it reads", () => {
    expect(METHOD_NAMES).toEqual(METHODS.map((m) => m.name))
    expect(new Set(METHOD_NAMES).size).toBe(METHOD_NAMES.length)
    expect(methodSpec("dfsdt").reads).toContain("budget")
    expect(methodSpec("react").optionsOf({ tries: 3, budget: 9 })).toMatchObject({ tries: 3 })
    expect(methodSpec("react").optionsOf({ tries: 3, budget: 9 })).not.toHaveProperty("budget")
  })

  it("an unknown name is an error naming the methods, never Smurfs", () => {
    expect(() => methodFor("smurfz")).toThrow(UnknownMethod)
    expect(() => methodFor("smurfz")).toThrow(/use "smurfs", "react", "dfsdt"/)
  })
})
