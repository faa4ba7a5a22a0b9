// Render an HTML report to a PNG with headless Chromium, to look at it (not part of the tests).
//   node instruments/report-screenshot.ts <report.html> <out.png>
//   node instruments/report-screenshot.ts --demo <out.png>     (a synthetic three-method run, judged, rendered)
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { chromium } from "playwright-core"
import { type AnswerStatus, passLabelsPath, winVerdictsPath } from "../bench/eval/labels.ts"
import { makeRng } from "../bench/eval/rng.ts"
import { type FakeTask, writeFakeRun, writeJson } from "../bench/eval/test-fixtures.ts"
import { collectRows } from "../bench/report/collect.ts"
import { renderHtml } from "../bench/report/html.ts"

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** A judged synthetic run: three methods, three groups, pass labels and win rounds against react. */
const demoReport = async (): Promise<string> => {
  const rng = makeRng(42)
  const methods = {
    smurfs: { pass: 0.7, calls: 9, tokens: 2600 },
    react: { pass: 0.45, calls: 4, tokens: 5200 },
    dfsdt: { pass: 0.6, calls: 12, tokens: 9800 }
  }
  const groups = ["G1_instruction", "G1_category", "G2_instruction"]
  const tasks: Array<FakeTask> = []
  for (const [method, m] of Object.entries(methods))
    for (const group of groups)
      for (let i = 0; i < 12; i++)
        tasks.push({
          taskId: String(100 + i),
          method,
          group,
          model: "ollama:qwen2.5:7b",
          modelCalls: Math.round(m.calls * (0.6 + rng())),
          promptTokens: Math.round(m.tokens * (0.6 + rng())),
          completionTokens: Math.round(m.tokens * 0.08 * (0.6 + rng())),
          wallMs: Math.round(m.calls * 900 * (0.6 + rng())),
          calls: Array.from({ length: 1 + Math.floor(rng() * 4) }, (_, c) => ({
            tool: `tool_${c}`,
            ok: rng() > 0.2,
            content: "{}"
          }))
        })
  const run = await writeFakeRun(tasks)
  const judge = "ollama:qwen2.5:32b"
  for (const t of tasks) {
    const p = methods[t.method as keyof typeof methods].pass
    const runs = Object.fromEntries(
      [0, 1, 2].map((r) => {
        const x = rng()
        const label: AnswerStatus = x < p ? "Solved" : x < p + 0.1 ? "Unsure" : "Unsolved"
        return [String(r), { label, reason: "demo", stage: "answer" }]
      })
    )
    await writeJson(passLabelsPath(run, judge, t.method!, t.group!, t.taskId), {
      taskId: t.taskId,
      method: t.method,
      group: t.group,
      judge,
      runs
    })
    if (t.method === "react") continue
    const rounds = Object.fromEntries(
      [0, 1, 2].map((r) => [
        String(r),
        {
          winner: rng() < p ? "candidate" : "reference",
          order: ["candidate", "reference"],
          stage: "judge",
          reason: "demo"
        }
      ])
    )
    await writeJson(winVerdictsPath(run, judge, "demo-react", t.method!, t.group!, t.taskId), {
      taskId: t.taskId,
      method: t.method,
      group: t.group,
      judge,
      reference: { source: "demo", method: "react" },
      rounds
    })
  }
  const file = join(tmpdir(), "smurfs-demo-report.html")
  const example = new URL("../../../shared/toolbench/example/data_example", import.meta.url).pathname
  writeFileSync(
    file,
    renderHtml([...collectRows([run]), ...collectRows([example])], { generatedAt: new Date().toISOString() })
  )
  return file
}

const [first, second] = process.argv.slice(2)
if (!first || !second) {
  console.error("usage: node instruments/report-screenshot.ts <report.html> <out.png> | --demo <out.png>")
  process.exit(2)
}
const html = first === "--demo" ? await demoReport() : resolve(first)
const browser = await chromium.launch({
  executablePath: process.env["CHROMIUM"] ?? "/usr/bin/chromium",
  args: CHROMIUM_ARGS
})
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
  await page.goto(pathToFileURL(html).href)
  await page.screenshot({ path: second, fullPage: true })
  console.log(`${html} -> ${second}`)
} finally {
  await browser.close()
}
