import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { approvalReason, parseApproval, withApproval } from "./approval.ts"
import type { Tool } from "./tool.ts"

const tool = (name: string, annotations?: Record<string, unknown>, mcp = true): Tool => ({
  name,
  description: name,
  parameters: z.object({}),
  call: () => Effect.succeed({ ok: true, content: `${name} ran` }),
  meta: mcp ? { mcpTool: name, ...(annotations ? { mcpAnnotations: annotations } : {}) } : {}
})

describe("approval policies", () => {
  it("reads all, none, ask and tool-name globs; refuses anything else", () => {
    expect(parseApproval("ask")).toEqual({ kind: "ask" })
    expect(parseApproval(" write_*, edit_file ")).toEqual({ kind: "globs", globs: ["write_*", "edit_file"] })
    expect(() => parseApproval(",")).toThrow(/takes all, none, ask or tool-name globs/)
    expect(() => parseApproval("rm -rf")).toThrow(/"rm -rf" is not a tool-name glob/)
  })

  it("only MCP tools not marked read-only, or marked destructive, need approval", () => {
    expect(approvalReason(tool("read", { readOnlyHint: true }))).toBeUndefined()
    expect(approvalReason(tool("plain"))).toBe("its server does not mark it read-only")
    expect(approvalReason(tool("both", { readOnlyHint: true, destructiveHint: true }))).toBe(
      "its server marks it destructive"
    )
    expect(approvalReason(tool("module", undefined, false))).toBeUndefined()
  })

  it("a glob matches the server's own tool name too; a read-only tool is never wrapped", async () => {
    const renamed = { ...tool("fs_write"), meta: { mcpTool: "write_file" } }
    expect(await Effect.runPromise(withApproval(renamed, { policy: parseApproval("write_*") }).call({}))).toMatchObject(
      { ok: true }
    )
    const read = tool("read", { readOnlyHint: true })
    expect(withApproval(read, { policy: { kind: "none" } })).toBe(read)
  })
})
