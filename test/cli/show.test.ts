// `smurfs show` (issue 12 point 4): a recorded trajectory printed as the live view printed it, from a run directory or a trajectory file, and as one HTML page.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { MINI_DATA } from "../data.ts"
import { demoQuery, demoScript, smurfs } from "./spawn.ts"

vi.setConfig({ testTimeout: 300_000 })

describe("smurfs show", () => {
  it("prints a trajectory file exactly as the live view printed the run, then the answer; --html writes one page", async () => {
    const dir = mkdtempSync(join(tmpdir(), "smurfs-show-"))
    // the same scripted run twice, at once: as the live view prints it, and as --json
    const [live, json] = await Promise.all([
      smurfs(["run", demoQuery, "--model", `scripted:${demoScript}`]),
      smurfs(["run", demoQuery, "--model", `scripted:${demoScript}`, "--json"])
    ])
    expect(live.code).toBe(0)
    const file = join(dir, "trajectory.json")
    writeFileSync(file, json.stdout)
    const html = join(dir, "page.html")
    const shown = await smurfs(["show", file, "--html", html])
    expect(shown.code, shown.stderr).toBe(0)
    // the live view's lines (stderr, before its summary line) are the shown lines before the answer
    const liveLines = live.stderr.trimEnd().split("\n").slice(0, -2)
    const shownLines = shown.stdout.trimEnd().split("\n")
    expect(shownLines.slice(0, liveLines.length)).toEqual(liveLines)
    expect(shownLines).toContain(`Answer: ${live.stdout.trim()}`)
    // the default loop: a plan, one fused executor reply and one verdict per step (the tools' short responses are the
    // steps' answers, no Answer agent call), the final answer: 1 + 3 + 3 + 1
    expect(shownLines.at(-1)).toMatch(/^8 model calls, \d+ tokens, 3 tool calls, 0 backtracks/)
    const page = readFileSync(html, "utf8")
    expect(page).toMatch(/^<!doctype html>/)
    expect(page).toContain(
      "<summary>call convert_units {&quot;value&quot;:8849,&quot;from&quot;:&quot;m&quot;,&quot;to&quot;:&quot;ft&quot;}</summary>"
    )
    expect(page).toContain('class="step verdict')
  })

  it("finds a task in a run directory by id, and says what to give when it cannot", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "smurfs-show-run-")), "run")
    const bench = await smurfs(["bench", "--model", "sim", "--group", "G1_instruction", "--ids", "588", "--out", out], {
      env: { SMURFS_DATA: MINI_DATA.path }
    })
    expect(bench.code, bench.stderr).toBe(0)
    // four readers of the finished run, at once
    const [shown, json, missing, noId] = await Promise.all([
      smurfs(["show", out, "588"]),
      smurfs(["show", out, "588", "--json"]),
      smurfs(["show", out, "9999"]),
      smurfs(["show", out])
    ])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(/^Query: I'm a football enthusiast/)
    expect(shown.stdout).toContain("call transfermarkt_search_for_theclique")
    expect(shown.stdout).toContain("verifier: solved")
    expect(shown.stdout).toContain("Answer: ")
    expect(json.code, json.stderr).toBe(0)
    const { tasks } = JSON.parse(json.stdout) as {
      tasks: Array<{ method: string; query: string; finishType: string; events: Array<unknown> }>
    }
    expect(tasks).toHaveLength(1)
    expect(tasks[0]).toMatchObject({ method: "smurfs", finishType: "give_answer" })
    expect(tasks[0]!.query).toMatch(/^I'm a football enthusiast/)
    expect(tasks[0]!.events.length).toBeGreaterThan(3)
    expect(missing.code).toBe(3)
    expect(missing.stderr).toContain('has no task "9999"')
    expect(noId.code).toBe(2)
    expect(noId.stderr).toContain("give the task id too")
  })
})
