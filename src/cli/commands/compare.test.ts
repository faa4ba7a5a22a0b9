import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { writeFakeRun } from "../../../bench/eval/test-fixtures.ts"
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
      expect(table).toMatch(/smurfs\s+scripted:test\s+G1_instruction\s+-\s+0\/1\s+-\s+-\s+4\.0\s+1234/)
      expect(table).toMatch(/virtual_chatgpt_cot\s+CoT@1\s+G1_instruction\s+ToolEval\s+3\/3\s+66\.7 ± 0\.0/)
      expect(table).toMatch(
        /virtual_chatgpt_dfs\s+DFS_woFilter_w2\s+G1_instruction\s+ToolEval\s+3\/3\s+100\.0 ± 0\.0\s+100\.0 vs virtual_chatgpt_cot \(N=3\)/
      )
      expect(readFileSync(html, "utf8")).toContain("Pass rate (SoPR)")
    }
  )

  it("reports a missing directory as bad input and no arguments as usage", async () => {
    expect(await run(["/nonexistent/run"])).toBe(ExitCode.BadInput)
    expect(err.join("\n")).toMatch(/does not exist/)
    expect(await run([])).toBe(ExitCode.Usage)
  })
})
