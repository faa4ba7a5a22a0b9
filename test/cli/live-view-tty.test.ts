// The live view in a real pseudo-terminal (tmux): a spinner with the agent role and the time waited while the model thinks; never in a pipe or with --json.
import { execFileSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { defaultReply } from "../fake-servers/core.ts"
import { type FakeOllama, startFakeOllama } from "../fake-servers/ollama.ts"
import { hasTmux } from "../tmux.ts"
import { bin, demoQuery, repo, smurfs } from "./spawn.ts"

vi.setConfig({ testTimeout: 300_000 })

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
let server: FakeOllama
let fast: FakeOllama
beforeAll(async () => {
  // every reply takes 700 ms: long enough to be seen waiting
  server = await startFakeOllama((body: { format?: unknown; tools?: [] }) => ({
    ...defaultReply(body.format, body.tools),
    delayMs: 700
  }))
  // a spinner would draw at the start of each call, however short: a fast server suffices to show there is none
  fast = await startFakeOllama()
})
afterAll(async () => {
  await server.close()
  await fast.close()
})

describe.skipIf(!hasTmux)("smurfs run in a terminal (needs tmux)", () => {
  it("shows a spinner with the role and the time waited, and the steps around it", async () => {
    const session = `smurfs-tty-${process.pid}`
    const command = `cd ${repo} && NO_COLOR=1 OLLAMA_HOST=${server.url} ${process.execPath} ${bin} run '${demoQuery}' --model ollama:qwen2.5:7b --max-steps 1; sleep 60`
    execFileSync("tmux", ["new-session", "-d", "-s", session, "-x", "140", "-y", "40", command])
    try {
      let screen = ""
      const seen = new Set<string>()
      for (let i = 0; i < 200 && !(seen.has("spinner") && seen.has("step")); i++) {
        await sleep(150)
        screen = execFileSync("tmux", ["capture-pane", "-p", "-t", session], { encoding: "utf8" })
        const spin =
          /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] (planner|executor\.\w+|answerer\.\w+|verifier)( \(\+\d+ more\))? waiting for the model \d+\.\ds$/m.exec(
            screen
          )
        if (spin) seen.add("spinner")
        if (screen.includes("Subtask 1:") && screen.includes("thought:")) seen.add("step")
      }
      expect([...seen].sort(), screen).toEqual(["spinner", "step"])
      // the spinner never tears a line of the live view: every spinner frame is alone on its line
      for (const line of screen.split("\n"))
        if (/waiting for the model/.test(line)) expect(line, screen).toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /)
    } finally {
      execFileSync("tmux", ["kill-session", "-t", session])
    }
  })
})

describe("smurfs run in a pipe", () => {
  it("draws no spinner when stderr is not a terminal, nor with --json", async () => {
    const r = await smurfs(
      ["run", demoQuery, "--model", "ollama:qwen2.5:7b", "--max-steps", "1", "--no-verifier", "--json"],
      { env: { OLLAMA_HOST: fast.url } }
    )
    expect(r.stderr).not.toContain("waiting for the model")
    expect(r.stderr).not.toContain("\x1b[2K")
    const plain = await smurfs(
      ["run", demoQuery, "--model", "ollama:qwen2.5:7b", "--max-steps", "1", "--no-verifier"],
      { env: { OLLAMA_HOST: fast.url } }
    )
    expect(plain.stderr).toContain("Subtask 1:")
    expect(plain.stderr).not.toContain("waiting for the model")
  })
})
