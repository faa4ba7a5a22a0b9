import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { passLabelsPath } from "../eval/labels.ts"
import { writeFakeRun, writeJson } from "../eval/test-fixtures.ts"
import { collectRows } from "./collect.ts"
import { renderHtml } from "./html.ts"
import { renderTable } from "./table.ts"


const EXAMPLE = fileURLToPath(new URL("../../../shared/toolbench/example/data_example", import.meta.url))

/** A run of two methods with known costs, and pass labels of one judge. */
const syntheticRun = () => {
  const run = writeFakeRun([
    { taskId: "1", method: "smurfs", modelCalls: 6, promptTokens: 1200, completionTokens: 150, wallMs: 3000, calls: [{ tool: "a", ok: true, content: "x" }] },
    { taskId: "2", method: "smurfs", modelCalls: 10, promptTokens: 2000, completionTokens: 250, wallMs: 5000, calls: [] },
    { taskId: "1", method: "react", modelCalls: 3, promptTokens: 4000, completionTokens: 90, wallMs: 1000, calls: [{ tool: "a", ok: true, content: "x" }, { tool: "b", ok: false, content: "" }] }
  ])
  const label = (method: string, taskId: string, labels: Array<"Solved" | "Unsolved" | "Unsure">) =>
    writeJson(passLabelsPath(run, "ollama:judge", method, "G1_instruction", taskId), {
      taskId, method, group: "G1_instruction", judge: "ollama:judge",
      runs: Object.fromEntries(labels.map((l, r) => [String(r), { label: l, reason: "", stage: "answer" }]))
    })
  // smurfs: run 0 (1 + 0.5)/2 = 0.75, run 1 (1 + 1)/2 = 1 -> mean 87.5, std 12.5
  label("smurfs", "1", ["Solved", "Solved"])
  label("smurfs", "2", ["Unsure", "Solved"])
  // react: (0)/1 and (1)/1 -> mean 50, std 50
  label("react", "1", ["Unsolved", "Solved"])
  return run
}

describe("compare rows and table", () => {
  it("renders one row per method and group with pass ± std and mean costs", () => {
    const rows = collectRows([syntheticRun()])
    const smurfs = rows.find((r) => r.method === "smurfs")!
    expect(smurfs).toMatchObject({ judge: "ollama-judge", n: 2, modelCalls: 8, promptTokens: 1600, completionTokens: 200, toolCalls: 0.5, wallMs: 4000 })
    expect(smurfs.pass!.mean).toBeCloseTo(87.5, 10)
    expect(smurfs.pass!.std).toBeCloseTo(12.5, 10)
    const table = renderTable(rows)
    const lines = table.split("\n")
    expect(lines[0]).toMatch(/^source\s+method\s+model\s+group\s+judge\s+N\s+pass ± std\s+win\s+model calls\s+prompt tok\s+compl tok\s+tool calls\s+wall s$/)
    expect(lines.find((l) => / smurfs /.test(l))).toMatch(/G1_instruction\s+ollama-judge\s+2\s+87\.5 ± 12\.5\s+-\s+8\.0\s+1600\s+200\s+0\.5\s+4\.0$/)
    expect(lines.find((l) => / react /.test(l))).toMatch(/1\s+50\.0 ± 50\.0\s+-\s+3\.0\s+4000\s+90\s+2\.0\s+1\.0$/)
  })

  it("shows ToolEval's published labels of a StableToolBench folder beside the costs of its predictions", () => {
    const rows = collectRows([EXAMPLE])
    expect(rows.map((r) => [r.method, r.judge, r.n, Number(r.pass!.mean.toFixed(2)), r.win?.rate])).toEqual([
      ["virtual_chatgpt_cot", "ToolEval", 3, 66.67, undefined],
      ["virtual_chatgpt_dfs", "ToolEval", 3, 100, 100]
    ])
    expect(rows[0]!.toolCalls).toBeGreaterThan(0)
  })

  it("says what a directory should contain when it is not a run", () => {
    expect(() => collectRows([fileURLToPath(new URL(".", import.meta.url))])).toThrow(/not a run directory/)
  })
})

describe("HTML report", () => {
  const html = renderHtml([...collectRows([syntheticRun()]), ...collectRows([EXAMPLE])], { generatedAt: "2026-01-01" })

  it("is self-contained: no external scripts, styles, images or fonts", () => {
    expect(html).not.toMatch(/https?:\/\//)
    expect(html).not.toMatch(/<(script|link|img|iframe)\b/i)
    expect(html).not.toMatch(/url\(/)
  })

  it("includes the table and the pass, win, token and call charts as inline SVG", () => {
    expect(html).toContain("<table>")
    for (const title of ["Pass rate (SoPR) per method and group", "Win rate (SoWR) per method and group", "Tokens per task", "Model calls and tool calls per task"])
      expect(html).toContain(title)
    expect((html.match(/<svg /g) ?? []).length).toBe(4)
    // the smurfs pass bar carries its value and its ± std whisker
    expect(html).toMatch(/smurfs · judge ollama-judge · G1_instruction: 87\.5/)
    expect(html).toContain('class="whisker"')
  })

  it("escapes text from the runs", () => {
    const rows = collectRows([writeFakeRun([{ taskId: "1", method: "m<script>", promptTokens: 1 }])])
    expect(renderHtml(rows)).not.toContain("m<script>")
  })
})
