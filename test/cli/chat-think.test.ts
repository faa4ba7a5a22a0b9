// `smurfs chat --think`: a reasoning model's thinking is switched as on `run`, for every call of every turn.
import { execFile } from "node:child_process"
import { afterEach, describe, expect, it } from "vitest"
import { answerFor } from "../agent-answers.ts"
import { startFakeOllama } from "../fake-servers/ollama.ts"
import { bin, repo } from "./spawn.ts"

/** Run `smurfs chat` with `lines` typed on stdin, then end of input (Ctrl-D). */
const chat = (args: ReadonlyArray<string>, lines: ReadonlyArray<string>, host = "http://127.0.0.1:9") =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      NO_COLOR: "1",
      SMURFS_MODEL: undefined,
      OLLAMA_HOST: host
    }
    for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
    const child = execFile(process.execPath, [bin, "chat", ...args], { cwd: repo, env }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr })
    )
    child.stdin?.end(lines.map((l) => `${l}\n`).join(""))
  })

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length) await closers.pop()!()
})

describe("smurfs chat --think", () => {
  for (const [flag, sent] of [
    ["off", false],
    ["high", "high"]
  ] as const) {
    it(`--think ${flag} sends think: ${JSON.stringify(sent)} on every call, and the turn is answered`, async () => {
      const server = await startFakeOllama({
        chat: (body: any) => ({ content: JSON.stringify(answerFor(body.format)) })
      })
      closers.push(() => server.close())
      const r = await chat(
        ["--model", "ollama:qwen2.5:7b", "--think", flag],
        ["What is 6 times 7?", "/exit"],
        server.url
      )
      expect(r.stderr).not.toMatch(/error/i)
      expect(r.code).toBe(0)
      expect(r.stdout).toContain("42")
      const requests = server.chatRequests()
      // the intent step, the planner, the executor's three calls, the answerer, the verifier, the final answer
      expect(requests.length).toBeGreaterThanOrEqual(5)
      for (const body of requests) expect(body.think).toBe(sent)
    })
  }

  it("rejects a --think value it does not know, with the values it takes", async () => {
    const r = await chat(["--model", "ollama:qwen2.5:7b", "--think", "maybe"], [])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/on.*off.*low.*medium.*high/)
  })
})
