import { rmSync } from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import { passLabelsPath } from "../eval/labels.ts"
import { writeFakeRun, writeJson } from "../eval/test-fixtures.ts"
import { collectRows } from "./collect.ts"
import { renderHtml } from "./html.ts"
import { rowKey } from "./statistics.ts"

const runs: Array<string> = []
const fakeRun = async (...args: Parameters<typeof writeFakeRun>) => {
  const run = await writeFakeRun(...args)
  runs.push(run)
  return run
}
afterAll(() => {
  for (const run of runs) rmSync(run, { recursive: true, force: true })
})

describe("the report's statistics", () => {
  it("without intervals says what the ± std is and where intervals and paired comparisons will show", async () => {
    const rows = collectRows([await fakeRun([{ taskId: "1" }])])
    const html = renderHtml(rows)
    expect(html).toContain('<section id="statistics"')
    expect(html).toContain("not an interval over tasks")
    expect(html).toContain('id="pairs-empty"')
    expect(html).not.toContain("pass interval</th>")
  })

  it("shows the caller's intervals in the runs' table and the statistics, and its paired comparisons, escaped", async () => {
    const run = await fakeRun([
      { taskId: "1", method: "smurfs" },
      { taskId: "1", method: "react" }
    ])
    for (const method of ["smurfs", "react"])
      await writeJson(passLabelsPath(run, "j", method, "G1_instruction", "1"), {
        taskId: "1",
        method,
        group: "G1_instruction",
        judge: "j",
        runs: { "0": { label: "Solved", reason: "ok", stage: "answer" } }
      })
    const rows = collectRows([run])
    const [react, smurfs] = [rows.find((r) => r.method === "react")!, rows.find((r) => r.method === "smurfs")!]
    const html = renderHtml(rows, {
      statistics: {
        intervals: [
          { row: rowKey(smurfs), metric: "pass", low: 41.2, high: 77.9, level: 0.95, method: "bootstrap <x>" }
        ],
        pairs: [
          {
            metric: "pass",
            group: "G1_instruction",
            a: rowKey(smurfs),
            b: rowKey(react),
            n: 1,
            difference: 12.5,
            low: -3.25,
            high: 30,
            level: 0.95,
            pValue: 0.0004,
            verdict: "a better <b>"
          }
        ],
        sections: ['<section id="agreement"><h3>Judge agreement</h3></section>']
      }
    })
    expect(html).toContain("pass interval</th>")
    expect(html.match(/\[41\.2, 77\.9\]/g)).toHaveLength(2)
    expect(html).toContain("bootstrap &lt;x&gt;")
    expect(html).toMatch(
      /<td class="num">\+12\.5<\/td><td class="num">\[-3\.3, 30\.0\] \(95%\)<\/td><td class="num">&lt;0\.001<\/td><td>a better &lt;b&gt;<\/td>/
    )
    expect(html).toContain('<section id="agreement">')
    expect(html).not.toContain('id="pairs-empty"')
  })
})
