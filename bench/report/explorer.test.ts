import { describe, expect, it } from "vitest"
import type { Row } from "./collect.ts"
import { type ReportTask, renderHtml } from "./html.ts"

const row: Row = {
  source: "run",
  method: "smurfs",
  model: "m",
  group: "G1",
  judge: "",
  n: 2,
  judged: 0,
  total: 2,
  errors: 0
}
const task = (taskId: string, query: string): ReportTask => ({
  method: "smurfs",
  group: "G1",
  taskId,
  status: "answered",
  finished: true,
  query,
  labels: [],
  source: "run",
  transcript: `t${taskId}`,
  href: `run-tasks/1/G1/${taskId}.html`,
  finish: "give_answer"
})

describe("the report's task list", () => {
  it("keeps a task's text in escaped attributes and cells, never as markup", () => {
    const html = renderHtml([row], {
      tasks: [task("1", `"><img src=x onerror=alert(1)> & <script>x</script>`)],
      transcripts: new Map([["t1", '<div class="cols">escaped columns</div>']])
    })
    expect(html).not.toMatch(/<img|<script>x/)
    expect(html).toContain(
      'data-query="&quot;&gt;&lt;img src=x onerror=alert(1)&gt; &amp; &lt;script&gt;x&lt;/script&gt;"'
    )
    expect(html).toContain('<template id="tr-t1"><div class="cols">escaped columns</div></template>')
  })

  it("embeds transcripts up to its budget; the other rows open their task's own page, and the page says so", () => {
    const html = renderHtml([row], {
      tasks: [task("1", "a"), task("2", "b")],
      transcripts: new Map([
        ["t1", "x".repeat(600)],
        ["t2", "y".repeat(600)]
      ]),
      transcriptBudget: 1000
    })
    expect(html).toContain('<template id="tr-t1">')
    expect(html).not.toContain('<template id="tr-t2">')
    expect(html).toMatch(/data-id="2"[^>]*data-transcript=""/)
    expect(html).toContain("The transcripts of 1 task did not fit in this page")
    expect(html).toContain('href="run-tasks/1/G1/2.html"')
  })
})
