// `eval` checks its judge model is on the server before writing anything (issue 22 §4); bench's check is in test/bench-cli.test.ts.
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { writeFakeRun } from "../../bench/eval/test-fixtures.ts"
import { startFakeOllama } from "../fake-servers/ollama.ts"
import { smurfs } from "./spawn.ts"

describe("a judge model the server does not have", { timeout: 120_000 }, () => {
  it("eval exits 4 before writing a label, with ollama pull and the names the server has", async () => {
    const run = await writeFakeRun([{ taskId: "1", query: "q", finalAnswer: "a", calls: [] }])
    const before = readdirSync(run).sort()
    const server = await startFakeOllama()
    try {
      const result = await smurfs(["eval", "--run", run, "--judge", "ollama:qwen2.5:7bb", "--k", "1"], {
        env: { OLLAMA_HOST: server.url }
      })
      expect(result.code, result.stderr).toBe(4)
      expect(result.stderr).toContain("ollama pull qwen2.5:7bb")
      expect(result.stderr).toContain("The server has: qwen2.5:7b")
      expect(readdirSync(run).sort()).toEqual(before)
      expect(existsSync(join(run, "eval"))).toBe(false)
      expect(server.requests.filter((r) => r.path === "/api/chat")).toHaveLength(0)
    } finally {
      await server.close()
    }
  })
})
