import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { passLabelsPath, winVerdictsPath } from "../../../bench/eval/labels.ts"
import { writeFakeRun, writeJson } from "../../../bench/eval/test-fixtures.ts"
import { captureConsole } from "../../../test/capture-console.ts"
import { DATA_EXAMPLE, lacks, skipNote } from "../../../test/data.ts"
import { ExitCode } from "../exit-codes.ts"
import { run } from "./compare.ts"

const EXAMPLE = DATA_EXAMPLE.path

let out: Array<string>, err: Array<string>
beforeEach(() => void ({ out, err } = captureConsole()))
afterEach(() => vi.restoreAllMocks())

describe("smurfs compare", () => {
  it.skipIf(lacks(DATA_EXAMPLE))(
    `prints one table of a run and ToolEval's results, and writes the HTML report${skipNote(DATA_EXAMPLE)}`,
    async () => {
      const dir = await writeFakeRun([{ taskId: "1", promptTokens: 1234 }])
      const html = join(mkdtempSync(join(tmpdir(), "smurfs-report-")), "report.html")
      expect(await run([dir, EXAMPLE, "--html", html])).toBe(ExitCode.Ok)
      const table = out.join("\n")
      // (its prompt tokens are in the cost section below the table)
      expect(table).toMatch(/smurfs\s+scripted:test\s+G1_instruction\s+-\s+0\/1\s+-\s+-\s+4\.0\s+2\.0/)
      expect(table).toMatch(/per task\s+4\.0 \[4\.0, 4\.0\]\s+1234 \[1234, 1234\]/)
      expect(table).toMatch(/virtual_chatgpt_cot\s+CoT@1\s+G1_instruction\s+ToolEval\s+3\/3\s+66\.7 ± 0\.0 \[/)
      expect(table).toMatch(
        /virtual_chatgpt_dfs\s+DFS_woFilter_w2\s+G1_instruction\s+ToolEval\s+3\/3\s+100\.0 ± 0\.0 \[100\.0, 100\.0\]\s+100\.0 vs virtual_chatgpt_cot \(N=3\)/
      )
      expect(readFileSync(html, "utf8")).toContain("Pass rate (SoPR)")
    }
  )

  it("--json lists every missing decision and marks an incomplete win rate", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }, { taskId: "3" }])
    const other = await writeFakeRun([{ taskId: "1" }])
    const base = { method: "smurfs", group: "G1_instruction", judge: "j", k: 3 }
    for (const taskId of ["1", "2", "3"])
      await writeJson(passLabelsPath(dir, "j", "smurfs", "G1_instruction", taskId), {
        ...base,
        taskId,
        runs: {
          "0": { label: "Solved", reason: "", stage: "answer" },
          "1": { label: "Solved", reason: "", stage: "answer" },
          "2": { label: "Solved", reason: "", stage: "answer" }
        }
      })
    const round = { winner: "candidate", order: ["candidate", "reference"], stage: "judge", reason: "" }
    await writeJson(winVerdictsPath(dir, "j", "ref", "smurfs", "G1_instruction", "1"), {
      ...base,
      taskId: "1",
      reference: { source: "ref", method: "react" },
      rounds: { "0": round }
    })
    expect(await run([dir, other, "--json"])).toBe(ExitCode.Ok)
    const { rows, missing } = JSON.parse(out.join("\n"))
    expect(rows[0].win).toMatchObject({
      n: 1,
      incomplete: { k: 3, partial: [{ taskId: "1", rounds: 1 }], unjudged: ["2", "3"] }
    })
    expect(missing).toEqual([
      expect.stringMatching(
        /win rounds vs ref missing: task 1 has 1 of 3 .*; 2 answered tasks have no win round vs ref \(2, 3;/
      ),
      expect.stringMatching(/1 answered task not judged at all, while other rows are \(judge j;/)
    ])
  })

  it("prints the statistics below the table and in --json, the same for the same seed, others for another", async () => {
    const tasks = ["1", "2", "3", "4", "5", "6"]
    const dir = await writeFakeRun(
      tasks.flatMap((taskId) => [
        { taskId, method: "smurfs", modelCalls: 8, promptTokens: 4000, completionTokens: 200 },
        { taskId, method: "react", modelCalls: 3 }
      ])
    )
    const labels = { smurfs: ["S", "S", "S", "S", "U", "U"], react: ["S", "U", "U", "U", "U", "U"] } as const
    for (const method of ["smurfs", "react"] as const)
      for (const [i, taskId] of tasks.entries())
        await writeJson(passLabelsPath(dir, "j", method, "G1_instruction", taskId), {
          taskId,
          method,
          group: "G1_instruction",
          judge: "j",
          runs: Object.fromEntries(
            [0, 1].map((r) => [
              String(r),
              { label: labels[method][i] === "S" ? "Solved" : "Unsolved", reason: "", stage: "answer" }
            ])
          )
        })
    expect(await run([dir, "--gpu-model", "default"])).toBe(ExitCode.Ok)
    const text = out.join("\n")
    expect(text).toMatch(/smurfs\s+scripted:test\s+G1_instruction\s+j\s+6\/6\s+66\.7 ± 0\.0 \[\d+\.\d, \d+\.\d\]/)
    expect(text).toMatch(/react − \S+\/smurfs = -50\.0 \[/)
    // statsmodels.stats.contingency_tables.mcnemar([[1, 0], [3, 2]], exact=True).pvalue -> 0.25
    expect(text).toMatch(/McNemar p = 0\.250 \(0 tasks only A, 3 only B\)/)
    expect(text).toMatch(/GPU s/)
    expect(text).toMatch(/j: 2 judge rounds on 12 answers: Krippendorff's α = 1\.000, Cohen's κ = 1\.000/)
    const json = async (...extra: Array<string>) => {
      out.length = 0
      expect(await run([dir, "--json", ...extra])).toBe(ExitCode.Ok)
      return out.join("\n")
    }
    const first = await json("--seed", "5")
    expect(await json("--seed", "5")).toBe(first)
    expect(await json("--seed", "6")).not.toBe(first)
    const parsed = JSON.parse(first)
    expect(parsed.rows[0].samples).toBeUndefined()
    expect(parsed.statistics).toMatchObject({ seed: 5, resamples: 2000 })
    expect(parsed.statistics.pairs[0]).toMatchObject({ kind: "pass", tasks: 6, mcnemar: { onlyA: 0, onlyB: 3 } })
    expect(parsed.statistics.rows[1].cost.modelCalls.perSolved.estimate).toBe(12)
    expect(await run([dir, "--resamples", "50"])).toBe(ExitCode.Usage)
    expect(await run([dir, "--gpu-model", "cache=4"])).toBe(ExitCode.Usage)
  })

  it("reports a missing directory as bad input and no arguments as usage", async () => {
    expect(await run(["/nonexistent/run"])).toBe(ExitCode.BadInput)
    expect(err.join("\n")).toMatch(/does not exist/)
    expect(await run([])).toBe(ExitCode.Usage)
  })
})
