import { readFileSync } from "node:fs"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { passLabelsPath } from "../../../bench/eval/labels.ts"
import { writeFakeRun, writeJson } from "../../../bench/eval/test-fixtures.ts"
import { collectResults } from "../../../bench/report/results.ts"
import { runConfigPath } from "../../../bench/run-format.ts"
import { captureConsole } from "../../../test/capture-console.ts"
import { ExitCode } from "../exit-codes.ts"
import { run } from "./results.ts"

let out: Array<string>, err: Array<string>
beforeEach(() => void ({ out, err } = captureConsole()))
afterEach(() => vi.restoreAllMocks())

/** Two methods, two groups; one judge labelled three tasks with K = 2, one task is unjudged. */
const judgedRun = async () => {
  const run = await writeFakeRun([
    {
      taskId: "1",
      method: "smurfs",
      modelCalls: 6,
      promptTokens: 1200,
      completionTokens: 150,
      wallMs: 3000,
      calls: [{ tool: "a", ok: true, content: "x" }]
    },
    { taskId: "2", method: "smurfs", group: "G2_category", modelCalls: 9, calls: [] },
    { taskId: "1", method: "react", modelCalls: 3, calls: [{ tool: "b", ok: false, content: "" }] },
    { taskId: "7", method: "react" }
  ])
  const label = (
    method: string,
    group: string,
    taskId: string,
    runs: Array<["Solved" | "Unsolved" | "Unsure", string]>
  ) =>
    writeJson(passLabelsPath(run, "ollama:judge", method, group, taskId), {
      taskId,
      method,
      group,
      judge: "ollama:judge",
      runs: Object.fromEntries(runs.map(([label, reason], r) => [String(r), { label, reason, stage: "answer" }]))
    })
  await label("smurfs", "G1_instruction", "1", [
    ["Solved", "found the weather"],
    ["Solved", "ok"]
  ])
  await label("smurfs", "G2_category", "2", [
    ["Solved", "fine"],
    ["Unsolved", "the answer names no \u001b[31mcity\u001b[0m"]
  ])
  await label("react", "G1_instruction", "1", [
    ["Unsure", "cannot tell"],
    ["Unsolved", "tool b failed"]
  ])
  return run
}

describe("collectResults", () => {
  it("shows only labels made from answers of the run's profile", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }])
    const config = JSON.parse(readFileSync(runConfigPath(dir), "utf8"))
    await writeJson(runConfigPath(dir), { ...config, options: { ...config.options, profile: { name: "reference" } } })
    const label = (taskId: string, extra: object) =>
      writeJson(passLabelsPath(dir, "j", "smurfs", "G1_instruction", taskId), {
        taskId,
        method: "smurfs",
        group: "G1_instruction",
        judge: "j",
        runs: { "0": { label: "Solved", reason: "", stage: "answer" } },
        ...extra
      })
    await label("1", { profile: "reference" })
    // no profile: made from an improved run's answers, not these
    await label("2", {})
    expect(collectResults(dir).map((t) => [t.taskId, t.labels.length])).toEqual([
      ["1", 1],
      ["2", 0]
    ])
  })

  it("lists every task with each judge run's label and reason, its costs, and filters by method, group and label", async () => {
    const dir = await judgedRun()
    const all = collectResults(dir)
    expect(all.map((t) => [t.method, t.group, t.taskId, t.labels.map((l) => l.label).join(",")])).toEqual([
      ["react", "G1_instruction", "1", "Unsure,Unsolved"],
      ["react", "G1_instruction", "7", ""],
      ["smurfs", "G1_instruction", "1", "Solved,Solved"],
      ["smurfs", "G2_category", "2", "Solved,Unsolved"]
    ])
    expect(all[2]).toMatchObject({
      modelCalls: 6,
      toolCalls: 1,
      tokens: 1350,
      wallMs: 3000,
      labels: [{ judge: "ollama-judge", run: 0, reason: "found the weather" }, { run: 1 }]
    })
    expect(collectResults(dir, { labels: ["unsolved"] }).map((t) => `${t.method}/${t.taskId}`)).toEqual([
      "react/1",
      "smurfs/2"
    ])
    expect(collectResults(dir, { labels: ["unjudged"] }).map((t) => `${t.method}/${t.taskId}`)).toEqual(["react/7"])
    expect(collectResults(dir, { methods: ["smurfs"], groups: ["G2_category"] }).map((t) => t.taskId)).toEqual(["2"])
    expect(collectResults(dir, { judge: "other" }).every((t) => t.labels.length === 0)).toBe(true)
    expect(collectResults(dir, { judge: "ollama:judge" }).filter((t) => t.labels.length > 0)).toHaveLength(3)
  })

  it("refuses a label file that does not validate, by name", async () => {
    const dir = await judgedRun()
    await writeJson(passLabelsPath(dir, "ollama:judge", "react", "G1_instruction", "7"), {
      taskId: "7",
      method: "react",
      group: "G1_instruction",
      judge: "j",
      runs: { "1e9": { label: "Solved", reason: "", stage: "rule" } }
    })
    expect(() => collectResults(dir)).toThrow(/7\.json.*1e9/)
  })
})

describe("smurfs results", () => {
  it("prints one row per task with its labels, costs and the first reason that was not Solved, control characters made visible", async () => {
    const dir = await judgedRun()
    expect(await run([dir])).toBe(ExitCode.Ok)
    const lines = out.join("\n").split("\n")
    expect(lines[0]).toMatch(/^method\s+group\s+id\s+labels\s+calls\s+tokens\s+wall s\s+misses\s+reason$/)
    expect(lines.find((l) => l.startsWith("smurfs  G1_instruction"))).toMatch(
      /\s1\s+S S\s+6\/1\s+1350\s+3\.0\s+-\s+found the weather$/
    )
    const failed = lines.find((l) => l.includes("G2_category"))!
    expect(failed).toMatch(/S U .*the answer names no .*city/)
    expect(failed).not.toContain("\u001b")
    expect(lines.find((l) => /^react\s+G1_instruction\s+7\s/.test(l))).toMatch(/\s-\s/)
    expect(err.join("\n")).toContain("4 tasks, 3 judged")
  })

  it("filters by --label and --method, prints JSON with every reason whole", async () => {
    const dir = await judgedRun()
    expect(await run([dir, "--label", "unsolved", "--method", "react", "--json"])).toBe(ExitCode.Ok)
    const { tasks } = JSON.parse(out.join("\n")) as {
      tasks: Array<{ taskId: string; labels: Array<{ reason: string }> }>
    }
    expect(tasks.map((t) => t.taskId)).toEqual(["1"])
    expect(tasks[0]!.labels.map((l) => l.reason)).toEqual(["cannot tell", "tool b failed"])
  })

  it("says what is wrong: a missing directory is bad input, an unknown label or no directory is usage", async () => {
    expect(await run(["/nonexistent/run"])).toBe(ExitCode.BadInput)
    expect(err.join("\n")).toMatch(/smurfs results: \/nonexistent\/run does not exist/)
    expect(await run([await judgedRun(), "--label", "passed"])).toBe(ExitCode.Usage)
    expect(err.join("\n")).toMatch(/--label passed: give one of solved, unsolved/)
    expect(await run([])).toBe(ExitCode.Usage)
  })
})
