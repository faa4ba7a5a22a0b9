// The HTML report and the trajectory pages in a real headless Chromium, at a desktop and a phone width.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { passLabelsPath } from "../../bench/eval/labels.ts"
import { writeFakeRun, writeJson } from "../../bench/eval/test-fixtures.ts"
import { taskRecordPath } from "../../bench/run-format.ts"
import { run as compare } from "../../src/cli/commands/compare.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { captureConsole } from "../capture-console.ts"

const CHROMIUM = process.env["CHROMIUM"] ?? "/usr/bin/chromium"
const missing = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (install Debian's chromium or set CHROMIUM)`
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

const LONG_RESPONSE = `{"forecast": "${"sunny and warm, ".repeat(60)}END-OF-RESPONSE"}`
const PROMPT = "You are a careful planner. <b>not a tag</b> Split the query into subtasks."

/** A judged run: smurfs and react on the same two tasks; smurfs' task 1 recorded with --full-trace (its prompt kept). */
const judgedRun = async () => {
  const dir = await writeFakeRun([
    {
      taskId: "1",
      method: "smurfs",
      query: "What is the weather in Paris?",
      calls: [{ tool: "weather_forecast", ok: true, content: LONG_RESPONSE, args: { city: "Paris" } }]
    },
    {
      taskId: "1",
      method: "react",
      query: "What is the weather in Paris?",
      calls: [{ tool: "weather_forecast", ok: false, content: "" }]
    },
    { taskId: "2", method: "smurfs" },
    { taskId: "2", method: "react" }
  ])
  const file = taskRecordPath(dir, "smurfs", "G1_instruction", "1")
  const record = JSON.parse(readFileSync(file, "utf8"))
  record.events.unshift({
    specversion: "1.0",
    id: "m0",
    source: "smurfs",
    type: "dev.smurfs.model_call",
    time: "2026-01-01T00:00:00.000Z",
    subject: "1",
    data: {
      role: "planner",
      model: "m",
      promptTokens: 20,
      completionTokens: 5,
      durationMs: 3,
      attempt: 1,
      ok: true,
      messages: [{ role: "system", content: PROMPT }],
      reply: "1. look up the weather"
    }
  })
  writeFileSync(file, JSON.stringify(record))
  for (const [method, taskId, label, reason] of [
    ["smurfs", "1", "Solved", "gives the forecast"],
    ["react", "1", "Unsolved", "the tool failed and the answer says nothing"],
    ["smurfs", "2", "Unsure", "vague"]
  ] as const)
    await writeJson(passLabelsPath(dir, "ollama:judge", method, "G1_instruction", taskId), {
      taskId,
      method,
      group: "G1_instruction",
      judge: "ollama:judge",
      runs: { "0": { label, reason, stage: "answer" } }
    })
  return dir
}

let browser: Browser
let report: string
const shots = mkdtempSync(join(tmpdir(), "smurfs-shots-"))

beforeAll(async () => {
  if (missing) return
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  report = join(mkdtempSync(join(tmpdir(), "smurfs-report-")), "report.html")
  const { err } = captureConsole()
  const code = await compare([await judgedRun(), "--html", report])
  vi.restoreAllMocks()
  expect(code, err.join("\n")).toBe(ExitCode.Ok)
})
afterAll(async () => browser?.close())
afterEach(() => vi.restoreAllMocks())

const open = async (width: number, url: string): Promise<Page> => {
  const page = await browser.newPage({ viewport: { width, height: 900 } })
  await page.goto(url)
  return page
}
/** The page's whole width: more than the viewport's means it scrolls sideways. */
const overflow = (page: Page) => page.evaluate("document.documentElement.scrollWidth") as Promise<number>

describe.skipIf(missing !== undefined)(
  `the report and the trajectory pages in Chromium${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    it.each([1400, 400])(
      "at %i px: the report fits the width, lists the tasks with their labels and links to each task's page",
      async (width) => {
        const page = await open(width, pathToFileURL(report).href)
        expect(await overflow(page)).toBeLessThanOrEqual(width)
        const rows = page.locator("table.tasks tbody tr")
        expect(await rows.count()).toBe(4)
        await expect
          .poll(() => page.locator("table.tasks").innerText())
          .toContain("the tool failed and the answer says nothing")
        expect(
          (await page.screenshot({ path: join(shots, `report-${width}.png`), fullPage: true })).length
        ).toBeGreaterThan(10_000)
        // the link from the report opens the trajectory page, both methods on it
        await page.locator("table.tasks a", { hasText: "1" }).first().click()
        await page.waitForURL(/report-tasks\/1\/G1_instruction\/1\.html$/)
        expect(await page.locator("section.method h2").allInnerTexts()).toEqual([
          "react G1_instruction/1",
          "smurfs G1_instruction/1"
        ])
        await page.close()
      }
    )

    it.each([1400, 400])(
      "at %i px: the trajectory page shows labels and reasons, methods side by side (stacked when narrow), steps that open on click",
      async (width) => {
        const url = pathToFileURL(join(report, "..", "report-tasks", "1", "G1_instruction", "1.html")).href
        const page = await open(width, url)
        expect(await overflow(page)).toBeLessThanOrEqual(width)
        const [react, smurfs] = await page.locator("section.method").all()
        const a = (await react!.boundingBox())!,
          b = (await smurfs!.boundingBox())!
        if (width === 1400)
          expect(b.x).toBeGreaterThan(a.x + a.width - 1) // side by side
        else expect(b.y).toBeGreaterThan(a.y + a.height - 1) // one under the other
        expect(await smurfs!.locator("table.labels").innerText()).toMatch(/0\s+Solved\s+gives the forecast/)
        expect(await react!.locator("table.labels").innerText()).toMatch(/Unsolved\s+the tool failed/)
        // the tool call's step is closed; a click opens it and shows the whole response
        const step = smurfs!.locator("details.step.tool_call")
        const response = step.locator("pre", { hasText: "END-OF-RESPONSE" })
        expect(await response.isVisible()).toBe(false)
        await step.locator("summary").click()
        expect(await response.isVisible()).toBe(true)
        expect(await overflow(page)).toBeLessThanOrEqual(width)
        // the prompt the model saw, on demand, as text (its markup escaped)
        const model = smurfs!.locator("details.step.model")
        await model.locator("> summary").click()
        const prompt = model.locator("details.prompt")
        expect(await prompt.locator("pre", { hasText: "careful planner" }).isVisible()).toBe(false)
        await prompt.locator("summary").click()
        expect(await prompt.locator("pre", { hasText: "careful planner" }).innerText()).toContain("<b>not a tag</b>")
        expect(await page.locator("section.method b", { hasText: "not a tag" }).count()).toBe(0)
        expect(
          (await page.screenshot({ path: join(shots, `trajectory-${width}.png`), fullPage: true })).length
        ).toBeGreaterThan(10_000)
        // and back to the report
        await page.locator("a", { hasText: "the report" }).click()
        await page.waitForURL(/report\.html$/)
        await page.close()
      }
    )
  }
)
