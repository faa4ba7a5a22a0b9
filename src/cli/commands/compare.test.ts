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

  it("reports a missing directory as bad input and no arguments as usage", async () => {
    expect(await run(["/nonexistent/run"])).toBe(ExitCode.BadInput)
    expect(err.join("\n")).toMatch(/does not exist/)
    expect(await run([])).toBe(ExitCode.Usage)
  })
})
