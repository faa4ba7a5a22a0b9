import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { approvalAsker } from "./ask-terminal.ts"
import { COMMAND } from "./commands/run.ts"
import { approvalOption, parseCommand } from "./options.ts"

describe("--approve", () => {
  it("the CLI's default asks on a terminal and makes every call elsewhere; a bad value is a usage error", () => {
    expect(approvalOption(undefined, true)).toEqual({ kind: "ask" })
    expect(approvalOption(undefined, false)).toEqual({ kind: "all" })
    expect(approvalOption("none", true)).toEqual({ kind: "none" })
    expect(() => approvalOption("", false)).toThrow(expect.objectContaining({ kind: "usage" }))
  })
})

describe("the terminal's approval questions", () => {
  it("asks one question at a time; 'a' approves every later call of that tool without asking", async () => {
    const questions: Array<string> = []
    const answers = ["n", "a", "y"]
    let open = 0
    const ask = approvalAsker(async (q) => {
      open++
      expect(open).toBe(1)
      questions.push(q)
      await new Promise((r) => setTimeout(r, 5))
      open--
      return answers.shift()
    })
    const reason = "its server marks it destructive"
    const results = await Promise.all([
      ask({ tool: "write_file", args: { path: "/x" }, reason }),
      ask({ tool: "write_file", args: { path: "/y" }, reason }),
      ask({ tool: "write_file", args: { path: "/z" }, reason }),
      ask({ tool: "move_file", args: {}, reason })
    ])
    expect(results).toEqual([false, true, true, true])
    expect(questions).toHaveLength(3)
    expect(questions[0]).toContain('write_file({"path":"/x"})? It may change things: its server marks it destructive')
    expect(questions[2]).toContain("move_file")
  })
})

describe("--mcp-env", () => {
  it("comes from smurfs.config.json as a list, and a value with commas (NO_PROXY=a,b) stays one entry", () => {
    const cwd = mkdtempSync(join(tmpdir(), "smurfs-mcp-env-"))
    try {
      writeFileSync(
        join(cwd, "smurfs.config.json"),
        JSON.stringify({ "mcp-env": ["NODE_EXTRA_CA_CERTS", "HTTPS_PROXY"] })
      )
      expect(parseCommand(COMMAND, ["q"], { cwd, env: {} }).values["mcp-env"]).toEqual([
        "NODE_EXTRA_CA_CERTS",
        "HTTPS_PROXY"
      ])
      expect(parseCommand(COMMAND, ["q", "--mcp-env", "NO_PROXY=a,b"], { cwd, env: {} }).values["mcp-env"]).toEqual([
        "NO_PROXY=a,b"
      ])
    } finally {
      rmSync(cwd, { recursive: true, force: true })
    }
  })
})
