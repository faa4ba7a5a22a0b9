import { describe, expect, it } from "vitest"
import { childProcesses } from "../../test/processes.ts"
import { runMcpSession } from "./session.ts"

describe("an MCP session through the --tools mcp: source", () => {
  it("50 sequential calls answer right, and closing leaves no child process and no extra active handle", async () => {
    const before = childProcesses().length
    const figures = await runMcpSession({ calls: 50 })
    expect(figures.tools).toBe(20)
    expect(figures.callMs).toHaveLength(50)
    expect(figures.wrongResults).toBe(0)
    expect(figures.childrenLeft).toEqual([])
    expect(figures.handlesLeft).toEqual({})
    expect(childProcesses().length).toBe(before)
  }, 300_000)
})
