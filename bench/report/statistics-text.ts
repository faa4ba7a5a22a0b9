// The comparison's statistics as plain text below the terminal table: per-row intervals and pass^k, paired
// differences with verdicts, cost per task and per solved task, judge agreement.
import { plural } from "../../src/plural.ts"
import { judgeTextsLabel, type Row } from "./collect.ts"
import { COST_MEASURES, type PairStatistics, type RowStatistics, type Statistics } from "./comparison.ts"
import type { Interval } from "./stats.ts"

const fixed = (v: number | undefined, digits = 1): string =>
  v === undefined || Number.isNaN(v) ? "-" : Number.isFinite(v) ? v.toFixed(digits) : v > 0 ? "∞" : "-∞"

/** "62.5 [50.0, 75.0]"; an end at infinity is written ∞. */
export const formatInterval = (i: Interval | undefined, digits = 1): string =>
  i === undefined ? "-" : `${fixed(i.estimate, digits)} [${fixed(i.low, digits)}, ${fixed(i.high, digits)}]`

const signed = (i: Interval): string =>
  `${i.estimate > 0 ? "+" : ""}${fixed(i.estimate)} [${fixed(i.low)}, ${fixed(i.high)}]`

/** A p-value with three decimals, or "<0.001". */
export const formatP = (p: number): string => (p < 0.001 ? "<0.001" : p.toFixed(3))

const where = (row: Row) =>
  `${row.group}, ${row.judge || "unjudged"}${row.judgeTexts ? ` (${judgeTextsLabel(row.judgeTexts)})` : ""}`

const rowLine = (row: Row, s: RowStatistics): string | undefined => {
  const parts: Array<string> = []
  if (s.pass)
    parts.push(
      `pass ${formatInterval(s.pass)} on ${plural(s.tasks, "task")} × ${plural(s.runs, "run")} × ${plural(s.rounds, "judge round")}`
    )
  if (s.passK && s.passK.length > 1) {
    const ks = s.passK.filter((p) => p.k > 1)
    parts.push(ks.map((p) => `pass@${p.k} ${formatInterval(p.passAt)}`).join(", "))
    // pass^1 too: τ²'s tables start there (the chance one run succeeds)
    parts.push(s.passK.map((p) => `pass^${p.k} ${formatInterval(p.passHat)}`).join(", "))
  }
  if (s.win) parts.push(`win ${formatInterval(s.win)} vs ${s.win.reference} on ${plural(s.win.tasks, "task")}`)
  return parts.length === 0 ? undefined : `  ${s.name} (${where(row)}): ${parts.join("; ")}`
}

const pairLine = (p: PairStatistics): string => {
  const what = p.kind === "win" ? `win vs ${p.reference}` : "pass"
  const floor = p.noiseFloor
  const needed =
    floor.tasksNeeded === undefined
      ? "no difference to resolve"
      : `a ${fixed(Math.abs(p.difference.estimate))}-point difference needs ${plural(floor.tasksNeeded, "task")}`
  return [
    `  ${p.group}, ${p.judge}, ${what}: ${p.nameA} − ${p.nameB} = ${signed(p.difference)} on ${plural(p.tasks, "task")}${p.unpaired > 0 ? ` (${p.unpaired} unpaired left out)` : ""}: ${p.verdictText}`,
    `      McNemar p = ${formatP(p.mcnemar.p)} (${plural(p.mcnemar.onlyA, "task")} only A, ${p.mcnemar.onlyB} only B); noise floor ${fixed(floor.detectable)} points at ${plural(floor.n, "task")}; ${needed}`
  ].join("\n")
}

/** Aligned columns, the first left-aligned, the rest right-aligned. */
const columns = (lines: ReadonlyArray<ReadonlyArray<string>>): Array<string> => {
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)))
  return lines.map((l) =>
    l
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd()
  )
}

const costLines = (rows: ReadonlyArray<Row>, stats: ReadonlyArray<RowStatistics>): Array<string> => {
  const measures = COST_MEASURES.filter((m) => stats.some((s) => s.cost[m.name] !== undefined))
  if (measures.length === 0) return []
  const seen = new Set<string>()
  const body: Array<Array<string>> = []
  stats.forEach((s, i) => {
    const key = `${s.name}\u0000${where(rows[i]!)}`
    if (seen.has(key) || Object.keys(s.cost).length === 0) return
    seen.add(key)
    const digits = (name: string) => (name.endsWith("Tokens") ? 0 : 1)
    body.push([
      `${s.name} (${where(rows[i]!)}) per task`,
      ...measures.map((m) => formatInterval(s.cost[m.name]?.perTask, digits(m.name)))
    ])
    body.push(["  per solved task", ...measures.map((m) => formatInterval(s.cost[m.name]?.perSolved, digits(m.name)))])
  })
  return columns([["", ...measures.map((m) => m.label)], ...body]).map((l) => `  ${l}`)
}

/** Everything below the table; empty when there is nothing to say. */
export const renderStatistics = (rows: ReadonlyArray<Row>, statistics: Statistics): string => {
  const out: Array<string> = []
  const perRow = statistics.rows.flatMap((s, i) => {
    const line = rowLine(rows[i]!, s)
    return line === undefined ? [] : [line]
  })
  const unique = [...new Set(perRow)]
  if (unique.length > 0)
    out.push(
      `Pass rates with 95% intervals (bootstrap over tasks, runs and judge rounds resampled within each task; seed ${statistics.seed}, ${statistics.resamples} resamples):`,
      ...unique
    )
  if (statistics.pairs.length > 0)
    out.push(
      "",
      "Paired differences A − B in points on the tasks both rows have (95% paired bootstrap; McNemar's exact test on each task's majority; noise floor = 2.80·sd/√n, the difference these tasks resolve with 80% power; tasks needed = (2.80·sd/d)²):",
      ...statistics.pairs.map(pairLine)
    )
  const cost = costLines(rows, statistics.rows)
  if (cost.length > 0)
    out.push(
      "",
      "Cost per task and per solved task (sum of costs / tasks solved, Unsure counting half; 95% intervals, ∞: a resample solved nothing):",
      ...cost
    )
  const a = statistics.agreement
  const agreement = [
    ...a.rounds.map(
      (r) =>
        `  ${r.judge}: ${r.rounds} judge rounds on ${r.answers} answers: Krippendorff's α = ${fixed(r.alpha, 3)}${r.kappa !== undefined ? `, Cohen's κ = ${fixed(r.kappa, 3)}` : ""}`
    ),
    ...a.judges.map(
      (j) =>
        `  ${j.a} vs ${j.b} on ${j.answers} answers (each judge's majority label): Cohen's κ = ${fixed(j.kappa, 3)}, same label ${fixed(100 * j.observed)}%`
    ),
    ...(a.all
      ? [`  all ${a.all.judges.length} judges on ${a.all.units} answers: Krippendorff's α = ${fixed(a.all.alpha, 3)}`]
      : [])
  ]
  if (agreement.length > 0)
    out.push(
      "",
      "Judge agreement (1 = always agree, 0 = as by chance; ToolEval's published labels count as a judge):",
      ...agreement
    )
  return out.join("\n")
}
