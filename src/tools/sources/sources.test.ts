import { describe, expect, it } from "vitest"
import { splitCommandLine } from "./command-line.ts"
import { parametersFromJsonSchema } from "./json-schema-params.ts"
import { mcpResultToToolResult } from "./mcp-result.ts"
import { parseToolSource } from "./source-spec.ts"
import { modelSafeNames } from "./tool-names.ts"

describe("tool source specs", () => {
  it("splits an MCP command line without a shell", () => {
    expect(splitCommandLine(`npx -y server "/tmp/my dir" 'a $HOME' b\\ c`)).toEqual([
      "npx",
      "-y",
      "server",
      "/tmp/my dir",
      "a $HOME",
      "b c"
    ])
    expect(() => splitCommandLine(`npx "unclosed`)).toThrow("never closed")
  })

  it("reads stdio, HTTP, demo and path sources", () => {
    expect(parseToolSource("mcp:node server.js --root /x")).toEqual({
      kind: "mcp-stdio",
      command: "node",
      args: ["server.js", "--root", "/x"]
    })
    expect(parseToolSource("mcp+https://h.example/mcp#auth=MY_TOKEN")).toEqual({
      kind: "mcp-http",
      url: "https://h.example/mcp",
      authEnv: "MY_TOKEN"
    })
    expect(parseToolSource("mcp+http://127.0.0.1:8/mcp")).toMatchObject({ authEnv: "SMURFS_MCP_AUTHORIZATION" })
    expect(parseToolSource("demo")).toEqual({ kind: "demo" })
    expect(parseToolSource("./tools.ts")).toEqual({ kind: "file", path: "./tools.ts" })
    expect(() => parseToolSource("mcp+https://user:pw@h.example/mcp")).toThrow("no credentials")
    expect(() => parseToolSource("mcp+https://h.example/mcp#token=x")).toThrow("#auth=ENV_VAR")
  })

  it("makes names model-safe and unique", () => {
    expect(modelSafeNames(["files/search", "files.search", "ok-name", "x".repeat(80)])).toEqual([
      "files_search",
      "files_search_2",
      "ok-name",
      "x".repeat(64)
    ])
  })
})

describe("JSON Schema parameters", () => {
  it("keeps what zod can express and accepts anything for what it cannot", () => {
    const params = parametersFromJsonSchema({
      type: "object",
      properties: {
        n: { type: "integer", minimum: 1 },
        odd: { type: "weird-type", description: "kept for the model" }
      },
      required: ["n"]
    })
    expect(Object.keys(params.shape)).toEqual(["n", "odd"])
    expect(params.safeParse({ n: 0 }).success).toBe(false)
    expect(params.safeParse({ n: 2, odd: { anything: true } }).success).toBe(true)
    expect(params.safeParse({}).success).toBe(false)
  })

  it("gives a tool without parameters for a missing or non-object schema", () => {
    expect(Object.keys(parametersFromJsonSchema(undefined).shape)).toEqual([])
    expect(parametersFromJsonSchema("nonsense").safeParse({}).success).toBe(true)
  })
})

describe("MCP results", () => {
  it("joins text parts, falls back to structured content, notes binary parts", () => {
    expect(
      mcpResultToToolResult("t", {
        content: [
          { type: "text", text: "a" },
          { type: "image", data: "AAAA", mimeType: "image/png" },
          { type: "text", text: "b" }
        ]
      })
    ).toEqual({
      ok: true,
      content: "a\nb"
    })
    expect(mcpResultToToolResult("t", { content: [], structuredContent: { x: 1 } })).toEqual({
      ok: true,
      content: '{"x":1}'
    })
    expect(
      mcpResultToToolResult("t", { content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }).content
    ).toBe("[image image/png, 3 bytes]")
    expect(
      mcpResultToToolResult("t", { content: [{ type: "resource", resource: { uri: "file:///a", text: "inside" } }] })
        .content
    ).toBe("inside")
  })

  it("makes isError a failed result that carries the server's message", () => {
    const result = mcpResultToToolResult("t", { isError: true, content: [{ type: "text", text: "no such city" }] })
    expect(result).toMatchObject({ ok: false, content: "no such city" })
    expect(result.error).toContain("no such city")
  })
})
