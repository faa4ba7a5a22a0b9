// The HTML report and the trajectory pages in a real headless Chromium, at a desktop and a phone width.
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { passLabelsPath, winVerdictsPath } from "../../bench/eval/labels.ts"
import { writeFakeRun, writeJson } from "../../bench/eval/test-fixtures.ts"
import { taskRecordPath } from "../../bench/run-format.ts"
import { run as compare } from "../../src/cli/commands/compare.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { captureConsole } from "../capture-console.ts"
import { bin } from "../cli/spawn.ts"
import { HOSTILE_QUERY } from "./demo-run.ts"

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
    { taskId: "2", method: "smurfs", query: HOSTILE_QUERY, finishType: "give_up", finalAnswer: "" },
    { taskId: "2", method: "react", query: HOSTILE_QUERY, promptTokens: 90_000 }
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
  for (const [taskId, winner, reason] of [
    ["1", "candidate", "smurfs gives the forecast, react has no answer"],
    ["2", "reference", "react's answer is <b>better</b>"]
  ] as const)
    await writeJson(winVerdictsPath(dir, "ollama:judge", "run-react", "smurfs", "G1_instruction", taskId), {
      taskId,
      method: "smurfs",
      group: "G1_instruction",
      judge: "ollama:judge",
      reference: { source: "run", method: "react" },
      rounds: { "0": { winner, order: ["candidate", "reference"], stage: "judge", reason } }
    })
  return dir
}

let browser: Browser
let report: string
let run: string
const shots = mkdtempSync(join(tmpdir(), "smurfs-shots-"))

beforeAll(async () => {
  if (missing) return
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  report = join(mkdtempSync(join(tmpdir(), "smurfs-report-")), "report.html")
  const { err } = captureConsole()
  run = await judgedRun()
  const code = await compare([run, "--html", report])
  vi.restoreAllMocks()
  expect(code, err.join("\n")).toBe(ExitCode.Ok)
})
afterAll(async () => {
  await browser?.close()
  // the screenshots stay for a person to look at; the run and the report go
  if (run) rmSync(run, { recursive: true, force: true })
  if (report) rmSync(join(report, ".."), { recursive: true, force: true })
})
afterEach(() => vi.restoreAllMocks())

/** Messages the page logged: a script error or a refused script (the content policy) shows here. */
const problems: Array<string> = []
const open = async (width: number, url: string): Promise<Page> => {
  const page = await browser.newPage({ viewport: { width, height: 900 } })
  page.on("pageerror", (e) => problems.push(`${url}: ${e.message}`))
  page.on("console", (m) => void (m.type() === "error" && problems.push(`${url}: ${m.text()}`)))
  await page.goto(url)
  return page
}
afterEach(() => {
  expect(problems.splice(0)).toEqual([])
})

/** The task rows the filters leave, as "method id". */
const visibleTasks = (page: Page) =>
  page
    .locator("table.tasks tbody tr:visible")
    .evaluateAll((rows) =>
      rows.map(
        (r) =>
          `${(r as unknown as { dataset: Record<string, string> }).dataset["method"]} ${(r as unknown as { dataset: Record<string, string> }).dataset["id"]}`
      )
    )
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
        // a task's row opens its transcripts in the page: both methods, side by side when wide, with labels and win rounds
        await page.locator("table.tasks tbody tr", { hasText: "What is the weather" }).first().click()
        const dialog = page.locator("dialog#task-view")
        await expect.poll(() => dialog.isVisible()).toBe(true)
        expect(await dialog.locator("section.method h2").allInnerTexts()).toEqual([
          "react G1_instruction/1",
          "smurfs G1_instruction/1"
        ])
        const [left, right] = await dialog.locator("section.method").all()
        const a = (await left!.boundingBox())!,
          b = (await right!.boundingBox())!
        if (width === 1400) expect(b.x).toBeGreaterThan(a.x + a.width - 1)
        else expect(b.y).toBeGreaterThan(a.y + a.height - 1)
        expect(await right!.locator("table.verdicts").innerText()).toMatch(
          /0 vs react\s+won\s+smurfs gives the forecast/
        )
        expect(page.url()).toMatch(/#task=t\d+$/)
        expect((await page.screenshot({ path: join(shots, `report-task-${width}.png`) })).length).toBeGreaterThan(
          10_000
        )
        await dialog.locator("#task-view-close").click()
        await expect.poll(() => dialog.isVisible()).toBe(false)
        // the id is also a link to the task's own page, written beside the report
        const href = await page.locator("table.tasks a", { hasText: "1" }).first().getAttribute("href")
        expect(href).toBe("report-tasks/1/G1_instruction/1.html")
        expect(existsSync(join(report, "..", href!))).toBe(true)
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
        expect(await smurfs!.locator("table.labels").first().innerText()).toMatch(/0\s+Solved\s+gives the forecast/)
        expect(await react!.locator("table.labels").first().innerText()).toMatch(/Unsolved\s+the tool failed/)
        // the task page has the win rounds too
        expect(await smurfs!.locator("table.verdicts").innerText()).toMatch(/0 vs react\s+won/)
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

    it("at 1400 px nothing overflows: the page, the runs' table and the task list fit without scrolling sideways", async () => {
      const page = await open(1400, pathToFileURL(report).href)
      expect(await overflow(page)).toBeLessThanOrEqual(1400)
      const wraps = await page
        .locator(".table-wrap")
        .evaluateAll((boxes) => boxes.map((b) => [b.querySelector("table")?.className, b.scrollWidth - b.clientWidth]))
      for (const [table, extra] of wraps) expect(extra, `table ${table}`).toBeLessThanOrEqual(0)
      await page.close()
    })

    it.each([1400, 400])(
      "at %i px: filtering by label, finish, win rounds, tokens and search narrows the tasks; sorting orders them",
      async (width) => {
        const page = await open(width, pathToFileURL(report).href)
        expect(await visibleTasks(page)).toEqual(["react 1", "smurfs 1", "react 2", "smurfs 2"])
        await page.selectOption("#f-label", "unsolved")
        expect(await visibleTasks(page)).toEqual(["react 1"])
        expect(await page.locator("#f-count").innerText()).toBe("1 of 4 tasks")
        await page.selectOption("#f-label", "unjudged")
        expect(await visibleTasks(page)).toEqual(["react 2"])
        await page.selectOption("#f-label", "")
        await page.selectOption("#f-finish", "give_up")
        expect(await visibleTasks(page)).toEqual(["smurfs 2"])
        await page.selectOption("#f-finish", "")
        await page.selectOption("#f-win", "lost")
        expect(await visibleTasks(page)).toEqual(["smurfs 2"])
        await page.selectOption("#f-win", "")
        await page.fill("#f-tokens", "5000")
        expect(await visibleTasks(page)).toEqual(["react 1", "smurfs 1", "smurfs 2"])
        await page.locator("#f-reset").click()
        await page.fill("#f-q", "SAYS NOTHING")
        expect(await visibleTasks(page)).toEqual(["react 1"])
        await page.fill("#f-q", "")
        await page.locator("table.tasks th button", { hasText: "tokens" }).click()
        await page.locator("table.tasks th button", { hasText: "tokens" }).click()
        expect((await visibleTasks(page))[0]).toBe("react 2")
        expect(await overflow(page)).toBeLessThanOrEqual(width)
        expect(
          (await page.screenshot({ path: join(shots, `report-filtered-${width}.png`), fullPage: true })).length
        ).toBeGreaterThan(10_000)
        await page.close()
      }
    )

    it("a task's text stays text: markup in a query runs nothing and shows as written, in the list and the transcripts", async () => {
      const page = await open(1400, pathToFileURL(report).href)
      const title = await page.title()
      await page.locator("table.tasks tbody tr", { hasText: "Find flights" }).first().click()
      await expect.poll(() => page.locator("dialog#task-view").isVisible()).toBe(true)
      expect(await page.locator("dialog#task-view .query").first().innerText()).toContain("<script>document.title")
      expect(await page.locator("img").count()).toBe(0)
      expect(await page.locator("script").count()).toBe(1)
      expect(await page.title()).toBe(title)
      await page.close()
    })

    it("smurfs view serves the report on 127.0.0.1, its filters work there, and Ctrl-C stops it", async () => {
      const child = spawn(process.execPath, [bin, "view", run, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] })
      let stdout = "",
        stderr = ""
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      try {
        await expect.poll(() => stdout, { timeout: 60_000 }).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\n/)
        const url = stdout.trim()
        const page = await open(1400, url)
        await page.selectOption("#f-label", "unsolved")
        expect(await visibleTasks(page)).toEqual(["react 1"])
        // the task's own page is served too, and links back
        const href = await page.locator("table.tasks a").first().getAttribute("href")
        const response = await page.goto(new URL(href!, url).href)
        expect(response?.status()).toBe(200)
        expect(await page.locator("section.method h2").count()).toBe(2)
        await page.locator("a", { hasText: "the report" }).click()
        await page.waitForURL(/\/index\.html$/)
        await page.close()
        child.kill("SIGINT")
        expect(await exited).toBe(0)
        expect(stderr).toContain("smurfs view: stopped")
      } finally {
        child.kill("SIGKILL")
      }
    }, 120_000)
  }
)
