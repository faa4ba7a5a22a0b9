// --json for every command's result (issue 12 point 5), and bench's progress and summary (point 1), through spawned processes.
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { MINI_DATA } from "../data.ts"
import { smurfs } from "./spawn.ts"

vi.setConfig({ testTimeout: 300_000 })

describe("--json results and bench's summary", () => {
  it("bench, compare, eval and doctor print their results as JSON on stdout", async () => {
    const dir = mkdtempSync(join(tmpdir(), "smurfs-json-"))
    const out = join(dir, "run")
    const bench = await smurfs(
      ["bench", "--model", "sim", "--group", "G1_instruction", "--limit", "3", "--out", out, "--json"],
      { env: { SMURFS_DATA: MINI_DATA.path } }
    )
    expect(bench.code, bench.stderr).toBe(0)
    const summary = JSON.parse(bench.stdout)
    expect(summary).toMatchObject({ runDir: out, total: 3, recorded: 3, answered: 3, errors: 0, notRecorded: 0 })
    // the simulated model makes calls; they were counted as they happened
    expect(summary.modelCalls).toBeGreaterThan(3)
    expect(summary.tokens).toBeGreaterThan(0)
    expect(summary.next).toBe(`smurfs eval --run ${out} --judge <judge model spec>`)
    // progress on stderr: answered (never "solved" before judging), an ETA only once estimable, the next command
    expect(bench.stderr).toContain("answered 1 | ETA estimating")
    expect(bench.stderr).not.toMatch(/solved/i)
    expect(bench.stderr).toContain(
      `Next: judge the answers with \`smurfs eval --run ${out} --judge <judge model spec>\``
    )

    const judge = join(dir, "judge.json")
    writeFileSync(
      judge,
      JSON.stringify({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }], $cycle: true })
    )
    const evaluated = await smurfs(["eval", "--run", out, "--judge", `scripted:${judge}`, "--k", "1", "--json"])
    expect(evaluated.code, evaluated.stderr).toBe(0)
    const rows = JSON.parse(evaluated.stdout).rows
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ method: "smurfs", group: "G1_instruction", n: 3 })
    expect(rows[0].pass.mean).toBe(100)

    const compared = await smurfs(["compare", out, "--json"])
    expect(compared.code).toBe(0)
    expect(JSON.parse(compared.stdout).rows[0]).toMatchObject({ method: "smurfs", n: 3 })

    const doctor = await smurfs(["doctor", "--model", "sim", "--json"])
    expect(doctor.code).toBe(0)
    expect(JSON.parse(doctor.stdout).model).toMatchObject({ spec: "sim" })
  })
})
