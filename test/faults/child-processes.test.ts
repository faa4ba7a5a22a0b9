// A tool's child process does not keep `smurfs run` alive after the answer: it is stopped, with a warning naming it.
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { demoQuery, demoScript, smurfs } from "../cli/spawn.ts"

const module = fileURLToPath(new URL("./fixtures/child-process-tools.ts", import.meta.url))

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("a tool module that leaves `sleep 60` running", () => {
  it("smurfs run exits within seconds of the answer and says which process it stopped", async () => {
    const started = Date.now()
    const r = await smurfs(["run", demoQuery, "--model", `scripted:${demoScript}`, "--tools", "demo", "--tools", module])
    const seconds = (Date.now() - started) / 1000
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("3483.86 feet")
    expect(seconds).toBeLessThan(20) // the run itself takes a few seconds; before, it waited for sleep's 60
    const warned = /a tool's child process \(pid (\d+): sleep 60\) was still running when the command finished; it was stopped/.exec(r.stderr)
    expect(warned, r.stderr).not.toBeNull()
    // and it is gone, not orphaned
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(alive(Number(warned![1]))).toBe(false)
  }, 90_000)
})
