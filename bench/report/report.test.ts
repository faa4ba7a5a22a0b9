import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { DATA_EXAMPLE, lacks, skipNote } from "../../test/data.ts"
import { passLabelsPath, winVerdictsPath } from "../eval/labels.ts"
import { fakeRecord, writeFakeRun, writeJson } from "../eval/test-fixtures.ts"
import { runConfigPath, taskRecordPath } from "../run-format.ts"
import { collectRows } from "./collect.ts"
import { compareStatistics } from "./comparison.ts"

import { EXPLORER_SCRIPT, EXPLORER_SCRIPT_HASH } from "./explorer-script.ts"
import { renderHtml } from "./html.ts"
import { missingWork } from "./missing.ts"
import { methodColor, PALETTE } from "./svg.ts"
import { renderTable } from "./table.ts"

const EXAMPLE = DATA_EXAMPLE.path

/** A run of two methods with known costs, and pass labels of one judge. */
const syntheticRun = async () => {
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
    {
      taskId: "2",
      method: "smurfs",
      modelCalls: 10,
      promptTokens: 2000,
      completionTokens: 250,
      wallMs: 5000,
      calls: []
    },
    {
      taskId: "1",
      method: "react",
      modelCalls: 3,
      promptTokens: 4000,
      completionTokens: 90,
      wallMs: 1000,
      calls: [
        { tool: "a", ok: true, content: "x" },
        { tool: "b", ok: false, content: "" }
      ]
    }
  ])
  const label = (method: string, taskId: string, labels: Array<"Solved" | "Unsolved" | "Unsure">) =>
    writeJson(passLabelsPath(run, "ollama:judge", method, "G1_instruction", taskId), {
      taskId,
      method,
      group: "G1_instruction",
      judge: "ollama:judge",
      runs: Object.fromEntries(labels.map((l, r) => [String(r), { label: l, reason: "", stage: "answer" }]))
    })
  // smurfs: run 0 (1 + 0.5)/2 = 0.75, run 1 (1 + 1)/2 = 1 -> mean 87.5, std 12.5
  await label("smurfs", "1", ["Solved", "Solved"])
  await label("smurfs", "2", ["Unsure", "Solved"])
  // react: (0)/1 and (1)/1 -> mean 50, std 50
  await label("react", "1", ["Unsolved", "Solved"])
  return run
}

describe("compare rows and table", () => {
  it("renders one row per method and group with pass ± std and mean costs", async () => {
    const rows = collectRows([await syntheticRun()])
    const smurfs = rows.find((r) => r.method === "smurfs")!
    expect(smurfs).toMatchObject({
      judge: "ollama-judge",
      n: 2,
      judged: 2,
      total: 2,
      errors: 0,
      modelCalls: 8,
      promptTokens: 1600,
      completionTokens: 200,
      toolCalls: 0.5,
      wallMs: 4000
    })
    expect(smurfs.pass!.mean).toBeCloseTo(87.5, 10)
    expect(smurfs.pass!.std).toBeCloseTo(12.5, 10)
    const table = renderTable(rows, compareStatistics(rows).rows)
    const lines = table.split("\n")
    // prompt and completion tokens and tool calls are in the cost section below the table, with intervals
    expect(lines[0]).toMatch(
      /^source\s+method\s+model\s+group\s+judge\s+judged\/N\s+pass ± std \[95% CI\]\s+win\s+calls\/task \/solved\s+wall s$/
    )
    // smurfs: 6 + 10 calls over 1 + 0.75 solved tasks = 9.1 per solved task; task 2's rounds (Unsure, Solved) make
    // the interval's low end fall below 87.5, task 1's never do
    const smurfsLine = lines.find((l) => / smurfs /.test(l))!
    expect(smurfsLine).toMatch(
      /G1_instruction\s+ollama-judge\s+2\/2\s+87\.5 ± 12\.5 \[\d+\.\d, 100\.0\]\s+-\s+8\.0 \/ 9\.1\s+4\.0$/
    )
    const low = Number(/\[(\d+\.\d),/.exec(smurfsLine)![1])
    expect(low).toBeGreaterThanOrEqual(50)
    expect(low).toBeLessThan(87.5)
    // react: 3 calls for 0.5 solved tasks
    expect(lines.find((l) => / react /.test(l))).toMatch(
      /1\/1\s+50\.0 ± 50\.0 \[0\.0, 100\.0\]\s+-\s+3\.0 \/ 6\.0\s+1\.0$/
    )
    // without statistics (eval's table) the row reads as before, without an interval
    expect(renderTable(rows)).toMatch(/87\.5 ± 12\.5\s+-\s+8\.0\s+4\.0/)
    expect(renderTable(rows).split("\n")[0]).toMatch(/judged\/N\s+pass ± std\s+win/)
  })

  it.skipIf(lacks(DATA_EXAMPLE))(
    `shows ToolEval's published labels of a StableToolBench folder beside the costs of its predictions${skipNote(DATA_EXAMPLE)}`,
    () => {
      const rows = collectRows([EXAMPLE])
      expect(rows.map((r) => [r.method, r.judge, r.n, Number(r.pass!.mean.toFixed(2)), r.win?.rate])).toEqual([
        ["virtual_chatgpt_cot", "ToolEval", 3, 66.67, undefined],
        ["virtual_chatgpt_dfs", "ToolEval", 3, 100, 100]
      ])
      expect(rows[0]!.toolCalls).toBeGreaterThan(0)
    }
  )

  it("says what a directory should contain when it is not a run", () => {
    expect(() => collectRows([fileURLToPath(new URL(".", import.meta.url))])).toThrow(/not a run directory/)
  })
})

describe("HTML report", () => {
  let html = ""
  beforeAll(async () => {
    html = renderHtml(
      [...collectRows([await syntheticRun()]), ...(lacks(DATA_EXAMPLE) ? [] : collectRows([EXAMPLE]))],
      { generatedAt: "2026-01-01" }
    )
  })

  it("is self-contained: no external scripts, styles, images or fonts; its one inline script is the only one its policy allows", () => {
    expect(html).not.toMatch(/https?:\/\//)
    expect(html).not.toMatch(/<(link|img|iframe)\b/i)
    expect(html).not.toMatch(/url\(/)
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
    expect(scripts).toHaveLength(1)
    expect(scripts[0]![1]).toBe("")
    expect(scripts[0]![2]).toBe(EXPLORER_SCRIPT)
    const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1]
    expect(policy).toContain("default-src 'none'")
    expect(policy).toContain(`script-src '${EXPLORER_SCRIPT_HASH}'`)
    expect(EXPLORER_SCRIPT_HASH).toBe(`sha256-${createHash("sha256").update(scripts[0]![2]!).digest("base64")}`)
  })

  it.skipIf(lacks(DATA_EXAMPLE))(
    `includes the table and the pass, win, token and call charts as inline SVG${skipNote(DATA_EXAMPLE)}`,
    () => {
      expect(html).toContain('<table class="runs')
      for (const title of [
        "Pass rate (SoPR) per method and group",
        "Win rate (SoWR) per method and group",
        "Tokens per task",
        "Model calls and tool calls per task"
      ])
        expect(html).toContain(title)
      expect((html.match(/<svg /g) ?? []).length).toBe(4)
      // the smurfs pass bar carries its value and its ± std whisker
      expect(html).toMatch(/smurfs · judge ollama-judge · G1_instruction: 87\.5/)
      expect(html).toContain('class="whisker"')
    }
  )

  it("escapes text from the runs", async () => {
    const rows = collectRows([await writeFakeRun([{ taskId: "1", method: "m<script>", promptTokens: 1 }])])
    expect(renderHtml(rows)).not.toContain("m<script>")
  })
})

describe("compare never hides missing work", () => {
  /** 3 answered tasks, 1 the model server failed, 5 planned; the judge labelled 2 of the answered. */
  const partialRun = async () => {
    const run = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }, { taskId: "3" }])
    await writeJson(taskRecordPath(run, "smurfs", "G1_instruction", "4"), {
      ...fakeRecord({ taskId: "4", finalAnswer: "" }),
      finishType: "error",
      error: "timed out",
      errorTag: "Timeout"
    })
    const config = JSON.parse(readFileSync(runConfigPath(run), "utf8"))
    await writeJson(runConfigPath(run), { ...config, taskCounts: { G1_instruction: 5 } })
    for (const taskId of ["1", "2"])
      await writeJson(passLabelsPath(run, "ollama:judge", "smurfs", "G1_instruction", taskId), {
        taskId,
        method: "smurfs",
        group: "G1_instruction",
        judge: "ollama:judge",
        runs: { "0": { label: "Solved", reason: "", stage: "answer" } }
      })
    return run
  }

  it("shows judged/total, rates only the judged tasks and names what is missing", async () => {
    const rows = collectRows([await partialRun()])
    expect(rows).toHaveLength(1)
    // an unjudged task is not an Unsolved one: 2 Solved of 2 judged is 100, not 2 of 3 (66.7) or 2 of 5 (40)
    expect(rows[0]).toMatchObject({ n: 3, judged: 2, total: 5, errors: 1 })
    expect(rows[0]!.pass!.mean).toBe(100)
    expect(renderTable(rows)).toMatch(/ollama-judge\s+2\/5\s+100\.0 ± 0\.0/)
    expect(missingWork(rows)).toEqual([
      expect.stringMatching(
        /smurfs G1_instruction \(judge ollama-judge\): 1 of 3 answered tasks not judged yet .*; 1 failed because of the model server .*--resume.*; 1 not run yet/
      )
    ])
    expect(renderHtml(rows)).toContain("Missing work")
  })

  it("gives the win rate over the tasks both sides have, with N, and one bar per reference", async () => {
    const run = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }, { taskId: "3" }])
    const verdict = (reference: string, taskId: string, winner: "candidate" | "reference", stage = "judge") =>
      writeJson(winVerdictsPath(run, "ollama:judge", reference, "smurfs", "G1_instruction", taskId), {
        taskId,
        method: "smurfs",
        group: "G1_instruction",
        judge: "ollama:judge",
        reference: { source: reference, method: "react" },
        rounds: { "0": { winner, order: ["candidate", "reference"], stage, reason: "" } }
      })
    await verdict("ref-a", "1", "candidate")
    await verdict("ref-a", "2", "reference")
    // the reference has no answer for task 3: decided without the judge, not a comparison
    await verdict("ref-a", "3", "candidate", "missing")
    await verdict("ref-b", "1", "candidate")
    const rows = collectRows([run])
    const a = rows.find((r) => r.win?.reference === "ref-a")!
    const b = rows.find((r) => r.win?.reference === "ref-b")!
    expect(a.win).toMatchObject({ n: 2, wins: 1, rate: 50 })
    expect(b.win).toMatchObject({ n: 1, wins: 1, rate: 100 })
    const table = renderTable(rows)
    expect(table).toContain("50.0 vs ref-a (N=2)")
    expect(table).toContain("100.0 vs ref-b (N=1)")
    const html = renderHtml(rows)
    const winChart = html.slice(html.indexOf("Win rate (SoWR)"), html.indexOf("Tokens per task"))
    expect(winChart).toMatch(/<rect[^>]*><title>smurfs vs ref-a · G1_instruction: 50<\/title>/)
    expect(winChart).toMatch(/<rect[^>]*><title>smurfs vs ref-b · G1_instruction: 100<\/title>/)
  })
})

describe("method colours", () => {
  it("come from the method's name, not from the order methods come in", async () => {
    expect(methodColor("smurfs")).toBe(PALETTE[0])
    expect(methodColor("react")).toBe(PALETTE[1])
    expect(methodColor("dfsdt")).toBe(PALETTE[2])
    // any other name: always the same colour, never one of the three
    expect(methodColor("virtual_chatgpt_cot")).toBe(methodColor("virtual_chatgpt_cot"))
    expect([PALETTE[0], PALETTE[1], PALETTE[2]]).not.toContain(methodColor("virtual_chatgpt_cot"))
    // a run of react alone draws react in react's colour (the first series used to take the first colour)
    const run = await writeFakeRun([{ taskId: "1", method: "react" }])
    await writeJson(passLabelsPath(run, "j", "react", "G1_instruction", "1"), {
      taskId: "1",
      method: "react",
      group: "G1_instruction",
      judge: "j",
      runs: { "0": { label: "Solved", reason: "", stage: "answer" } }
    })
    expect(renderHtml(collectRows([run]))).toContain(`<li><i style="background:${PALETTE[1]}"></i>react</li>`)
  })
})

describe("a win rate over missing rounds or tasks says so, and every missing decision is listed", () => {
  const J = "ollama:judge"
  type Winner = "candidate" | "reference"
  const verdict = (run: string, taskId: string, winners: ReadonlyArray<Winner>, extra: object = {}, stage = "judge") =>
    writeJson(winVerdictsPath(run, J, "ref-a", "smurfs", "G1_instruction", taskId), {
      taskId,
      method: "smurfs",
      group: "G1_instruction",
      judge: J,
      reference: { source: "ref-a", method: "react" },
      k: 3,
      rounds: Object.fromEntries(
        winners.map((winner, r) => [String(r), { winner, order: ["candidate", "reference"], stage, reason: "" }])
      ),
      ...extra
    })
  const passLabel = (run: string, taskId: string, runs: number, extra: object = {}) =>
    writeJson(passLabelsPath(run, J, "smurfs", "G1_instruction", taskId), {
      taskId,
      method: "smurfs",
      group: "G1_instruction",
      judge: J,
      k: 3,
      runs: Object.fromEntries(
        Array.from({ length: runs }, (_, r) => [String(r), { label: "Solved", reason: "", stage: "answer" }])
      ),
      ...extra
    })
  const tasks = (...ids: Array<string>) => ids.map((taskId) => ({ taskId }))

  it("marks a task of 1 of 3 rounds and a task of 0 rounds, and names an unjudged run beside a judged one", async () => {
    const run = await writeFakeRun(tasks("1", "2", "3", "4", "5"))
    for (const id of ["1", "2", "3", "4", "5"]) await passLabel(run, id, id === "2" ? 1 : 3)
    await verdict(run, "1", ["candidate", "candidate", "candidate"])
    await verdict(run, "2", ["candidate"])
    // task 3: no round at all
    await verdict(run, "4", ["reference", "reference", "reference"])
    // task 5: the reference has no answer, decided without the judge (not missing work)
    await verdict(run, "5", ["candidate", "candidate", "candidate"], {}, "missing")
    const unjudged = await writeFakeRun(tasks("1", "2"))
    const rows = collectRows([run, unjudged])
    const judged = rows.find((r) => r.win)!
    expect(judged.win).toMatchObject({
      n: 3,
      wins: 2,
      incomplete: { k: 3, partial: [{ taskId: "2", rounds: 1 }], unjudged: ["3"] }
    })
    expect(judged.partialPass).toEqual({ k: 3, tasks: [{ taskId: "2", runs: 1 }] })
    const table = renderTable(rows)
    expect(table).toContain("66.7 vs ref-a (N=3) · incomplete: 1 task with fewer than 3 rounds, 1 task unjudged")
    const missing = missingWork(rows)
    expect(missing).toEqual([
      expect.stringMatching(
        /smurfs G1_instruction \(judge ollama-judge\): judge runs missing: task 2 has 1 of 3 .*; win rounds vs ref-a missing: task 2 has 1 of 3 .*; 1 answered task has no win round vs ref-a \(3; not in the win rate's N/
      ),
      expect.stringMatching(
        new RegExp(
          `^${unjudged.split("/").pop()} smurfs G1_instruction: 2 answered tasks not judged at all, while other rows are \\(judge ollama-judge;`
        )
      )
    ])
    const html = renderHtml(rows)
    expect(html).toContain("incomplete: 1 task with fewer than 3 rounds, 1 task unjudged")
    expect(html).toContain("1 answered task has no win round vs ref-a (3;")
    expect(html).toContain("not judged at all")
  })

  it("leaves a complete win rate as it was", async () => {
    const run = await writeFakeRun(tasks("1", "2"))
    for (const id of ["1", "2"]) await passLabel(run, id, 3)
    await verdict(run, "1", ["candidate", "candidate", "reference"])
    await verdict(run, "2", ["reference", "reference", "candidate"])
    const rows = collectRows([run])
    expect(rows).toHaveLength(1)
    expect(rows[0]!.win).toEqual({ rate: 50, wins: 1, ties: 0, losses: 1, n: 2, reference: "ref-a" })
    expect(rows[0]!.partialPass).toBe(undefined)
    expect(renderTable(rows)).toMatch(/50\.0 vs ref-a \(N=2\)\s/)
    expect(missingWork(rows)).toEqual([])
  })

  it("never puts labels of two judge texts in one row", async () => {
    const run = await writeFakeRun(tasks("1", "2"))
    // the pass labels were redone with ToolEval's texts; the win rounds left from before are ours
    for (const id of ["1", "2"]) await passLabel(run, id, 3, { prompts: "stabletoolbench:/stb" })
    for (const id of ["1", "2"]) await verdict(run, id, ["candidate", "candidate", "candidate"], { prompts: "smurfs" })
    const rows = collectRows([run])
    expect(rows.map((r) => [r.judgeTexts, r.judged, r.pass !== undefined, r.win !== undefined])).toEqual([
      ["ToolEval", 2, true, false],
      ["ours", 0, false, true]
    ])
    const table = renderTable(rows)
    expect(table).toMatch(/\(ToolEval texts\)\s+2\/2\s+100\.0 ± 0\.0\s+-/)
    expect(table).toMatch(/\(our texts\)\s+0\/2\s+-\s+100\.0 vs ref-a \(N=2\)/)
    expect(missingWork(rows)).toEqual([
      expect.stringMatching(/\(judge ollama-judge, our texts\): 2 of 2 answered tasks not judged yet \(1, 2\)/)
    ])
  })

  it("counts only labels made from answers of the run's profile, and shows the profile", async () => {
    const run = await writeFakeRun(tasks("1", "2"))
    const config = JSON.parse(readFileSync(runConfigPath(run), "utf8"))
    await writeJson(runConfigPath(run), { ...config, options: { ...config.options, profile: { name: "reference" } } })
    // task 1's labels judged a reference-profile answer; task 2's (no profile: improved) judged other answers
    await passLabel(run, "1", 3, { profile: "reference" })
    await passLabel(run, "2", 3)
    const rows = collectRows([run])
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ profile: "reference", judged: 1, unjudgedTasks: ["2"] })
    expect(renderTable(rows)).toMatch(/smurfs \(reference\)/)
    expect(missingWork(rows)).toEqual([
      expect.stringMatching(
        /smurfs \(reference\) G1_instruction \(judge ollama-judge\): 1 of 2 answered tasks not judged yet \(2\)/
      )
    ])
  })
})
