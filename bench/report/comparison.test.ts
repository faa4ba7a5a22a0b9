import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { AnswerStatus } from "../eval/labels.ts"
import { passLabelsPath } from "../eval/labels.ts"
import { writeJson } from "../eval/test-fixtures.ts"
import { runOf } from "../run-format.ts"
import { collectRows, type Row } from "./collect.ts"
import { compareStatistics, majorityLabel } from "./comparison.ts"
import { byTaskAndRun, type RowSamples } from "./samples.ts"
import { renderStatisticsHtml } from "./statistics-html.ts"
import { renderStatistics } from "./statistics-text.ts"
import { renderTable } from "./table.ts"

// Reference values were printed by Debian bookworm's python3 (scikit-learn 1.2.1, statsmodels 0.13.5, numpy); the
// call is in the comment beside each.

const S: AnswerStatus = "Solved"
const U: AnswerStatus = "Unsolved"

/** A row over `tasks` tasks: each task's runs, each run's judge labels; every run costs `calls` model calls. */
const rowOf = (
  method: string,
  labels: (task: number) => ReadonlyArray<ReadonlyArray<AnswerStatus | undefined>>,
  o: { tasks?: number; judge?: string; group?: string; calls?: number; k?: number } = {}
): Row => {
  const tasks = o.tasks ?? 20
  const samples: RowSamples = {
    k: o.k ?? labels(0)[0]!.length,
    tasks: Array.from({ length: tasks }, (_, t) => ({
      taskId: String(t),
      runs: labels(t).map((l, run) => ({
        run,
        labels: l,
        cost: { modelCalls: o.calls ?? 4, promptTokens: 100, completionTokens: 10, toolCalls: 1, wallMs: 1000 }
      }))
    }))
  }
  return {
    source: "run",
    method,
    model: "m",
    group: o.group ?? "G1_instruction",
    judge: o.judge ?? "j",
    n: tasks,
    judged: tasks,
    total: tasks,
    errors: 0,
    samples
  }
}

/** Three agent runs of three judge rounds: all Solved for the first `solved` tasks, all Unsolved after. */
const solvedFirst = (solved: number) => (t: number) =>
  Array.from({ length: 3 }, () => Array.from({ length: 3 }, () => (t < solved ? S : U)))

describe("comparison statistics", () => {
  const a = rowOf("a", solvedFirst(15))
  const b = rowOf("b", solvedFirst(5), { calls: 2 })
  const c = rowOf("c", solvedFirst(5))
  const otherJudge = rowOf("a", solvedFirst(15), { judge: "other" })
  const stats = compareStatistics([a, b, c, otherJudge], { seed: 1, resamples: 1000 })

  it("pairs rows of one group and judge on the same tasks, with the difference, verdict, McNemar and noise floor", () => {
    // a-b, a-c, b-c for judge j; the other judge's row is never paired with j's
    expect(stats.pairs.map((p) => `${p.nameA} ${p.nameB} ${p.judge}`)).toEqual([
      "run/a run/b j",
      "run/a run/c j",
      "run/b run/c j"
    ])
    const ab = stats.pairs[0]!
    expect(ab.tasks).toBe(20)
    expect(ab.difference.estimate).toBe(50)
    expect(ab.verdict).toBe("a")
    expect(ab.verdictText).toBe("run/a ahead")
    // statsmodels.stats.contingency_tables.mcnemar([[5, 10], [0, 5]], exact=True).pvalue -> 0.001953125
    expect(ab.mcnemar).toEqual({ both: 5, onlyA: 10, onlyB: 0, neither: 5, p: 0.001953125 })
    // d = 10 ones and 10 zeros: numpy.std(d, ddof=1) -> 0.512989176042577; ceil(((1.96 + 0.8416) * sd / 0.5) ** 2) -> 9;
    // (1.96 + 0.8416) * sd / sqrt(20) -> 0.3213638644071522
    expect(ab.noiseFloor.sd).toBeCloseTo(51.2989176042577, 10)
    expect(ab.noiseFloor.tasksNeeded).toBe(9)
    expect(ab.noiseFloor.detectable).toBeCloseTo(32.13638644071522, 10)
    const bc = stats.pairs[2]!
    expect(bc).toMatchObject({
      verdict: "tied",
      verdictText: "tied (the interval covers 0)",
      difference: { estimate: 0, low: 0, high: 0 }
    })
    expect(bc.mcnemar.p).toBe(1)
    expect(bc.noiseFloor.tasksNeeded).toBeUndefined()
  })

  it("gives each row its interval, pass@k and pass^k over its runs, and cost per solved task", () => {
    const row = stats.rows[0]!
    expect(row).toMatchObject({ tasks: 20, runs: 3, rounds: 3 })
    expect(row.pass!.estimate).toBe(75)
    expect(row.pass!.low).toBeLessThan(75)
    expect(row.pass!.high).toBeGreaterThan(75)
    // every task solved in all 3 runs or in none: pass@k = pass^k = 75 for every k
    expect(row.passK!.map((p) => [p.k, p.passAt.estimate, p.passHat.estimate])).toEqual([
      [1, 75, 75],
      [2, 75, 75],
      [3, 75, 75]
    ])
    // b: 2 calls per task, 5 of 20 solved -> 8 calls per solved task
    expect(stats.rows[1]!.cost.modelCalls!.perTask.estimate).toBe(2)
    expect(stats.rows[1]!.cost.modelCalls!.perSolved!.estimate).toBe(8)
    expect(stats.rows[1]!.cost.wallSeconds!.perSolved!.estimate).toBe(4)
  })

  it("reports its progress row by row and pair by pair", () => {
    const heard: Array<string> = []
    compareStatistics([a, b, c], { seed: 1, resamples: 100 }, (done, total) => heard.push(`${done}/${total}`))
    // 3 rows and 3 pairs
    expect(heard).toEqual(["1/6", "2/6", "3/6", "4/6", "5/6", "6/6"])
  })

  it("gives the same bytes for the same labels and seed, and other bytes for another seed", () => {
    const again = compareStatistics([a, b, c, otherJudge], { seed: 1, resamples: 1000 })
    expect(JSON.stringify(again)).toBe(JSON.stringify(stats))
    // a row's interval does not depend on the rows beside it
    expect(compareStatistics([b, a], { seed: 1, resamples: 1000 }).rows[1]!.pass).toEqual(stats.rows[0]!.pass)
    const noisy = rowOf("n", (t) => [[t % 2 ? S : U, t % 3 ? S : U]])
    expect(JSON.stringify(compareStatistics([noisy], { seed: 2, resamples: 500 }).rows)).not.toBe(
      JSON.stringify(compareStatistics([noisy], { seed: 3, resamples: 500 }).rows)
    )
  })

  it("prints the pairs, pass^k, costs and agreement below the table, and pass^k in the table when runs > 1", () => {
    const text = renderStatistics([a, b, c, otherJudge], stats)
    expect(text).toMatch(/run\/a − run\/b = \+50\.0 \[\d+\.\d, \d+\.\d\] on 20 tasks: run\/a ahead/)
    expect(text).toContain("McNemar p = 0.002 (10 tasks only A, 0 only B); noise floor 32.1 points at 20 tasks")
    expect(text).toContain("a 50.0-point difference needs 9 tasks")
    expect(text).toMatch(/pass\^2 75\.0 \[/)
    expect(text).toMatch(/run\/b \(G1_instruction, j\) per task\s+2\.0 \[2\.0, 2\.0\]/)
    expect(renderTable([a], stats.rows)).toMatch(/pass\^k[\s\S]*75\.0 \(k=3\)/)
    const html = renderStatisticsHtml([a, b, c, otherJudge], stats)
    expect(html).toContain("run/a ahead")
    expect(html).toContain("Cost against pass rate")
  })
})

describe("win rates against a reference", () => {
  it("get an interval per row and a paired difference with McNemar's test for rows of the same reference", () => {
    const withWins = (row: Row, won: number, reference = "ref"): Row => ({
      ...row,
      win: { rate: (100 * won) / 20, wins: won, ties: 0, losses: 20 - won, n: 20, reference },
      samples: {
        ...row.samples!,
        win: Array.from({ length: 20 }, (_, t) => ({
          taskId: String(t),
          runs: [{ run: 0, rounds: t < won ? [1, 1, 1] : [0, 0, 0] }]
        }))
      }
    })
    const a = withWins(rowOf("a", solvedFirst(10)), 15)
    const b = withWins(rowOf("b", solvedFirst(10)), 5)
    const other = withWins(rowOf("c", solvedFirst(10)), 5, "another")
    const stats = compareStatistics([a, b, other], { seed: 1, resamples: 1000 })
    expect(stats.rows[0]!.win).toMatchObject({ estimate: 75, reference: "ref", tasks: 20 })
    const wins = stats.pairs.filter((p) => p.kind === "win")
    // c's win rate is against another reference: never paired with a's or b's
    expect(wins).toHaveLength(1)
    expect(wins[0]).toMatchObject({ reference: "ref", nameA: "run/a", nameB: "run/b", verdict: "a" })
    expect(wins[0]!.difference.estimate).toBe(50)
    // statsmodels.stats.contingency_tables.mcnemar([[5, 10], [0, 5]], exact=True).pvalue -> 0.001953125
    expect(wins[0]!.mcnemar).toEqual({ both: 5, onlyA: 10, onlyB: 0, neither: 5, p: 0.001953125 })
    // the pass rates are the same, so their pair is tied
    expect(stats.pairs.find((p) => p.kind === "pass" && p.nameB === "run/b")!.verdict).toBe("tied")
  })
})

describe("judge agreement", () => {
  // j1 rounds: t0 (S,S) t1 (U,U) t2 (S,U) t3 (U,U); j2 rounds: t0 (S,S) t1 (U,S) t2 (S,S) t3 (U,U)
  const j1 = [
    [S, S],
    [U, U],
    [S, U],
    [U, U]
  ] as const
  const j2 = [
    [S, S],
    [U, S],
    [S, S],
    [U, U]
  ] as const
  const rows = [
    rowOf("m", (t) => [j1[t]!], { tasks: 4, judge: "j1" }),
    rowOf("m", (t) => [j2[t]!], { tasks: 4, judge: "j2" })
  ]
  const agreement = compareStatistics(rows, { seed: 1, resamples: 100 }).agreement

  it("between a judge's rounds: Cohen's kappa for two, Krippendorff's alpha", () => {
    // sklearn.metrics.cohen_kappa_score(["S", "U", "S", "U"], ["S", "U", "U", "U"]) -> 0.5
    // alpha by hand: n_S = 3, n_U = 5, one disagreeing unit (2 ordered pairs) -> 1 - 7 * 2 / (64 - 9 - 25) = 8/15
    const first = agreement.rounds.find((r) => r.judge === "j1")!
    expect(first).toMatchObject({ rounds: 2, answers: 4 })
    expect(first.kappa).toBeCloseTo(0.5, 12)
    expect(first.alpha).toBeCloseTo(8 / 15, 12)
  })

  it("between judges, each by its rounds' majority (a split is Unsure)", () => {
    // majorities j1: S U ? U; j2: S ? S U
    // sklearn.metrics.cohen_kappa_score(["S", "U", "?", "U"], ["S", "?", "S", "U"]) -> 0.2727272727272727
    expect(agreement.judges).toHaveLength(1)
    expect(agreement.judges[0]).toMatchObject({ a: "j1", b: "j2", answers: 4, observed: 0.5 })
    expect(agreement.judges[0]!.kappa).toBeCloseTo(0.2727272727272727, 12)
    expect(majorityLabel([S, U])).toBe("Unsure")
    expect(majorityLabel([S, U, S])).toBe("Solved")
    expect(majorityLabel([undefined])).toBeUndefined()
  })

  it("counts ToolEval's published labels as a judge of the same answers", async () => {
    // a StableToolBench folder: converted predictions of 4 tasks, ToolEval's labels and a local judge's labels of them
    const dir = mkdtempSync(join(tmpdir(), "smurfs-agreement-"))
    const answer = { method: "react", total_steps: 1, final_answer: "done", answer_details: [] }
    const ids = ["1", "2", "3", "4"]
    mkdirSync(join(dir, "model_predictions_converted", "react"), { recursive: true })
    writeFileSync(
      join(dir, "model_predictions_converted", "react", "G1_instruction.json"),
      JSON.stringify(Object.fromEntries(ids.map((id) => [id, { query: `q${id}`, available_tools: [], answer }])))
    )
    const published = ["Solved", "Unsolved", "Solved", "Unsolved"]
    mkdirSync(join(dir, "pass_rate_results"), { recursive: true })
    writeFileSync(
      join(dir, "pass_rate_results", "G1_instruction_react.json"),
      JSON.stringify(
        Object.fromEntries(ids.map((id, i) => [id, { is_solved: { "0": `AnswerStatus.${published[i]}` } }]))
      )
    )
    const local = [S, U, U, U]
    for (const [i, id] of ids.entries())
      await writeJson(passLabelsPath(dir, "local", "react", "G1_instruction", id), {
        taskId: id,
        method: "react",
        group: "G1_instruction",
        judge: "local",
        runs: { "0": { label: local[i], reason: "", stage: "answer" } }
      })
    const found = collectRows([dir])
    expect(found.map((r) => r.judge).sort()).toEqual(["ToolEval", "local"])
    const judges = compareStatistics(found, { seed: 1, resamples: 100 }).agreement.judges
    // sklearn.metrics.cohen_kappa_score(["S", "U", "S", "U"], ["S", "U", "U", "U"]) -> 0.5
    expect(judges).toHaveLength(1)
    expect(judges[0]).toMatchObject({ a: "ToolEval", b: "local", answers: 4, kappa: 0.5 })
  })
})

describe("agent runs", () => {
  it("are read from a record's `run` (or a label file's `agentRun`), 0 when absent", () => {
    expect(runOf({ run: 2 })).toBe(2)
    expect(runOf({ agentRun: 1 })).toBe(1)
    expect(runOf({})).toBe(0)
    expect(runOf({ run: -1 })).toBe(0)
    expect(runOf({ run: "1" })).toBe(0)
  })

  it("group by task, runs in order", () => {
    const grouped = byTaskAndRun(
      [{ id: "b", run: 1 }, { id: "a" }, { id: "b", run: 0 }, { id: "a", run: 2 }],
      (x) => x.id,
      runOf
    )
    expect(grouped.map((t) => [t.taskId, t.runs.map((r) => r.run)])).toEqual([
      ["b", [0, 1]],
      ["a", [0, 2]]
    ])
  })
})
