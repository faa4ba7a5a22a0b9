// `smurfs bench --runs N`, `smurfs results` and `smurfs bench --replay-from` as a user runs them (issue 31 §1, §6).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MINI_DATA } from "../data.ts"
import { type CliResult, smurfs } from "./spawn.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-cli-runs-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const GROUP = "G1_instruction"
const source = join(scratch, "source")
let benched: CliResult

beforeAll(async () => {
  benched = await smurfs([
    "bench",
    "--data",
    MINI_DATA.path,
    "--group",
    GROUP,
    "--limit",
    "2",
    "--method",
    "react",
    "--model",
    "sim",
    "--runs",
    "2",
    "--out",
    source
  ])
})

describe("smurfs bench --runs", () => {
  it("solves each task twice, each run its own record, and notes that temperature-0 runs are identical", () => {
    expect(benched.code, benched.stderr).toBe(0)
    expect(benched.stderr).toMatch(/react samples at temperature 0, so its 2 runs differ only in their seeds/)
    expect(readdirSync(join(source, "tasks", "react", GROUP)).sort()).toEqual([
      "588.json",
      "588.run1.json",
      "608.json",
      "608.run1.json"
    ])
    const run1 = JSON.parse(readFileSync(join(source, "tasks", "react", GROUP, "588.run1.json"), "utf8"))
    expect(run1).toMatchObject({ run: 1, seed: 43 })
  })

  it("smurfs results lists one row per task and run", async () => {
    const { code, stdout } = await smurfs(["results", source])
    expect(code).toBe(0)
    const lines = stdout.trim().split("\n")
    expect(lines[0]).toMatch(/^method +group +id +run +labels/)
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 4).join(" "))).toEqual([
      `react ${GROUP} 588 0`,
      `react ${GROUP} 588 1`,
      `react ${GROUP} 608 0`,
      `react ${GROUP} 608 1`
    ])
  })
})

describe("smurfs show", () => {
  it("prints every run of a task, each named by its run", async () => {
    const { code, stdout } = await smurfs(["show", source, "588"])
    expect(code).toBe(0)
    expect(stdout).toMatch(/== react G1_instruction\/588 run 0 ==[\s\S]*== react G1_instruction\/588 run 1 ==/)
  })
})

describe("smurfs bench --replay-from", () => {
  it("replays the run with no model and finds every trajectory identical (exit 0)", async () => {
    const { code, stderr } = await smurfs(["bench", "--replay-from", source, "--out", join(scratch, "replay")])
    expect(code, stderr).toBe(0)
    expect(stderr).toMatch(/replayed .* with 0 model calls: 4 of 4 trajectories identical, 0 divergences/)
  })

  it("names a tampered task, its run and its first differing event (exit 1)", async () => {
    const path = join(source, "tasks", "react", GROUP, "608.run1.json")
    const record = JSON.parse(readFileSync(path, "utf8"))
    record.finalAnswer = "an answer the run never gave"
    writeFileSync(path, JSON.stringify(record))
    const { code, stderr } = await smurfs(["bench", "--replay-from", source, "--out", join(scratch, "replay-2")])
    expect(code).toBe(1)
    expect(stderr).toMatch(/3 of 4 trajectories identical, 1 divergence/)
    expect(stderr).toMatch(/react G1_instruction\/608 run 1: final answer: recorded "an answer the run never gave"/)
    const report = JSON.parse(readFileSync(join(scratch, "replay-2", "replay.json"), "utf8"))
    expect(report).toMatchObject({ checked: 4, identical: 3, modelCalls: 0 })
  })
})
