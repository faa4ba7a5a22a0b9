// A tool's child process does not keep `smurfs run` alive after the answer: it is stopped, with a warning naming it.
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { demoQuery, demoScript, smurfs } from "../cli/spawn.ts"

const module = fileURLToPath(new URL("./fixtures/child-process-tools.ts", import.meta.url))

/** Whether `pid` is a live process (a zombie waiting for its new parent to reap it is not). */
const alive = (pid: number) => {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

describe("a tool module that leaves `sleep 60` running", () => {
  it("smurfs run exits within seconds of the answer and says which process it stopped", async () => {
    const started = Date.now()
    const r = await smurfs([
      "run",
      demoQuery,
      "--model",
      `scripted:${demoScript}`,
      "--tools",
      "demo",
      "--tools",
      module
    ])
    const seconds = (Date.now() - started) / 1000
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("3483.86 feet")
    expect(seconds).toBeLessThan(20) // the run itself takes a few seconds; before, it waited for sleep's 60
    const warned =
      /a tool's child process \(pid (\d+): sleep 60\) was still running when the command finished; it was stopped/.exec(
        r.stderr
      )
    expect(warned, r.stderr).not.toBeNull()
    // and it is gone, not orphaned
    const pid = Number(warned![1])
    for (let i = 0; i < 30 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(alive(pid), `sleep 60 (pid ${pid}) still runs`).toBe(false)
  }, 90_000)

  it("smurfs tools lists the module's tools and exits at once too", async () => {
    const started = Date.now()
    const r = await smurfs(["tools", "--tools", module])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("background_helper")
    expect((Date.now() - started) / 1000).toBeLessThan(20)
    expect(r.stderr).toMatch(/a tool's child process \(pid \d+: sleep 60\) was still running when the command finished/)
  }, 90_000)
})
