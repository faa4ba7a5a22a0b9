import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { passLabelsPath } from "../../bench/eval/labels.ts"
import { fakeRecord, writeFakeRun, writeJson } from "../../bench/eval/test-fixtures.ts"
import { methodColor } from "../../bench/report/svg.ts"
import { captureConsole } from "../../test/capture-console.ts"
import { renderRecorded, run as show } from "./commands/show.ts"
import { ExitCode } from "./exit-codes.ts"
import { renderTrajectoryPage } from "./trajectory-page.ts"

let out: Array<string>, err: Array<string>
beforeEach(() => void ({ out, err } = captureConsole()))
afterEach(() => vi.restoreAllMocks())

describe("the trajectory page", () => {
  it("escapes everything from the record: labels, reasons, tool responses, the query", () => {
    const record = fakeRecord({
      taskId: "1",
      method: "react",
      query: "<img src=x onerror=alert(1)>",
      calls: [{ tool: "t", ok: true, content: "</pre><script>alert(2)</script>" }]
    })
    const page = renderTrajectoryPage([
      {
        label: "react G1/1",
        method: "react",
        query: record.query,
        events: record.events,
        finalAnswer: "a & b",
        finishType: "give_answer",
        labels: [{ judge: "j", run: 0, label: "Unsolved", reason: "<b>bold</b> claim" }]
      }
    ])
    expect(page).not.toMatch(/<script>|<img|<b>bold/)
    expect(page).toContain("&lt;script&gt;alert(2)&lt;/script&gt;")
    expect(page).toContain("&lt;b&gt;bold&lt;/b&gt; claim")
    expect(page).toContain('class="Unsolved"')
    expect(page).toContain(`--method:${methodColor("react")}`)
  })

  it("keeps a step's line short and shows its text whole when opened (a long thought)", () => {
    const thought = `${"think it through, ".repeat(20)}THE-END`
    const page = renderTrajectoryPage([
      {
        label: "smurfs G1/1",
        method: "smurfs",
        events: [
          {
            specversion: "1.0",
            id: "e",
            source: "s",
            type: "dev.smurfs.thought",
            time: "t",
            subject: "1",
            data: { thought }
          }
        ]
      }
    ])
    const step = page.slice(page.indexOf('<details class="step'))
    expect(step.slice(0, step.indexOf("</summary>"))).not.toContain("THE-END")
    expect(step).toContain("THE-END")
  })
})

describe("smurfs show", () => {
  it("prints a react task's query (ReAct records no task_started) and the judges' labels with their reasons", async () => {
    const dir = await writeFakeRun([
      { taskId: "1", method: "react", query: "Which city is warmer?" },
      { taskId: "1", method: "smurfs" }
    ])
    await writeJson(passLabelsPath(dir, "ollama:judge", "react", "G1_instruction", "1"), {
      taskId: "1",
      method: "react",
      group: "G1_instruction",
      judge: "ollama:judge",
      runs: { "0": { label: "Unsolved", reason: "no city named", stage: "answer" } }
    })
    expect(await show([dir, "1", "--method", "react"]), err.join("\n")).toBe(ExitCode.Ok)
    const text = out.join("\n")
    expect(text.split("\n")[0]).toBe("Query: Which city is warmer?")
    expect(text).toContain("ollama-judge run 0: Unsolved (no city named)")
    // a record that has task_started keeps its own Query line, once
    const lines = renderRecorded({
      label: "x",
      query: "q",
      events: [
        {
          specversion: "1.0",
          id: "e",
          source: "s",
          type: "dev.smurfs.task_started",
          time: "t",
          subject: "1",
          data: { query: "q", method: "smurfs", model: "m", tools: [] }
        }
      ]
    })
    expect(lines.filter((l) => l.startsWith("Query:"))).toEqual(["Query: q"])
  })

  it("--method smurfs,react writes one page with both methods, in the order asked", async () => {
    const dir = await writeFakeRun([
      { taskId: "1", method: "react" },
      { taskId: "1", method: "smurfs" },
      { taskId: "1", method: "dfsdt" }
    ])
    const html = join(dir, "page.html")
    expect(await show([dir, "1", "--method", "smurfs,react", "--html", html]), err.join("\n")).toBe(ExitCode.Ok)
    const page = readFileSync(html, "utf8")
    const headings = [...page.matchAll(/<h2>([^<]+)<\/h2>/g)].map((m) => m[1])
    expect(headings).toEqual(["smurfs G1_instruction/1", "react G1_instruction/1"])
  })
})
