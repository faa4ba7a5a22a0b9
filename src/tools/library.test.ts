import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { defineTool } from "./define-tool.ts"
import { DuplicateToolName, excludeTools, findTool, makeToolLibrary, resolveTool, toolSpecs } from "./library.ts"

const echo = defineTool({
  name: "echo",
  description: "Echo the text back.\nSecond line.",
  parameters: z.object({ text: z.string().describe("what to echo"), times: z.number().int().optional() }),
  execute: ({ text, times }) => text.repeat(times ?? 1)
})
const upper = defineTool({
  name: "get_upper_for_strings",
  description: "Upper-case the text.",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text.toUpperCase()
})

describe("defineTool", () => {
  it("calls the implementation with the arguments", async () => {
    expect(await Effect.runPromise(echo.call({ text: "ab", times: 2 }))).toEqual({ ok: true, content: "abab" })
  })

  it("applies its own timeout", async () => {
    const hang = defineTool({
      name: "hang",
      description: "",
      parameters: z.object({}),
      execute: () => new Promise(() => {}),
      timeoutMs: 10
    })
    expect(await Effect.runPromise(hang.call({}))).toMatchObject({
      ok: false,
      error: 'tool "hang" did not answer within 10 ms (timeout)'
    })
  })
})

describe("tool libraries", () => {
  it("rejects duplicate names with a clear error", () => {
    expect(() => makeToolLibrary("lib", [echo, echo])).toThrow(DuplicateToolName)
    expect(() => makeToolLibrary("lib", [echo, echo])).toThrow('The tool library "lib" has two tools named "echo"')
  })

  it("finds tools exactly, case-insensitively, and by unique suffix", () => {
    const library = makeToolLibrary("lib", [echo, upper])
    expect(findTool(library, "echo")).toBe(echo)
    expect(findTool(library, "ECHO")).toBeUndefined()
    expect(resolveTool(library, "ECHO")).toBe(echo)
    expect(resolveTool(library, "upper_for_strings")).toBe(upper)
    expect(resolveTool(library, "nothing")).toBeUndefined()
    expect(excludeTools(library, ["echo"]).tools.map((t) => t.name)).toEqual(["get_upper_for_strings"])
  })

  it("gives JSON Schema specs for native tool calling", () => {
    const [spec] = toolSpecs(makeToolLibrary("lib", [echo]))
    expect(spec!.name).toBe("echo")
    expect(spec!.parameters).toMatchObject({
      type: "object",
      properties: { text: { type: "string", description: "what to echo" }, times: { type: "integer" } },
      required: ["text"]
    })
    expect(spec!.parameters).not.toHaveProperty("$schema")
  })

  it("builds a tool's spec once, shared by every library and task that lists the tool", () => {
    const [first] = toolSpecs(makeToolLibrary("a", [echo]))
    const [again] = toolSpecs(makeToolLibrary("b", [echo, upper]))
    expect(again).toBe(first)
  })
})
