// The comparison's statistics as one HTML section (intervals, paired differences, cost per solved task, judge
// agreement, cost against pass rate): kept apart from the rest of the report so that either can change alone.
import type { Row } from "./collect.ts"
import { COST_MEASURES, type Statistics } from "./comparison.ts"
import { type ReportStatistics, rowKey } from "./statistics.ts"
import { formatInterval, formatP } from "./statistics-text.ts"
import { escapeXml as esc, methodColor } from "./svg.ts"

const table = (head: ReadonlyArray<string>, body: ReadonlyArray<ReadonlyArray<string>>, numericFrom: number) =>
  `<div class="table-wrap"><table><thead><tr>${head.map((h, i) => `<th${i >= numericFrom ? ' class="num"' : ""}>${esc(h)}</th>`).join("")}</tr></thead><tbody>${body
    .map((r) => `<tr>${r.map((c, i) => `<td${i >= numericFrom ? ' class="num"' : ""}>${esc(c)}</td>`).join("")}</tr>`)
    .join("")}</tbody></table></div>`

const fixed = (v: number | undefined, digits = 3) => (v === undefined || !Number.isFinite(v) ? "-" : v.toFixed(digits))

/**
 * Cost against pass rate, one point per row (model calls per task on x, pass rate on y), each with its two 95%
 * intervals as whiskers: a row up and to the left buys more for less.
 */
export const costScatter = (rows: ReadonlyArray<Row>, statistics: Statistics): string => {
  const points = statistics.rows.flatMap((s) => {
    const cost = s.cost.modelCalls?.perTask
    return s.pass && cost && Number.isFinite(cost.estimate)
      ? [{ name: `${s.name} · ${rows[s.row]!.group}`, method: rows[s.row]!.method, pass: s.pass, cost }]
      : []
  })
  const unique = points.filter((p, i) => points.findIndex((q) => q.name === p.name) === i)
  if (unique.length === 0) return ""
  const width = 1000,
    height = 360,
    left = 60,
    right = 20,
    top = 16,
    bottom = 44
  const maxX = Math.max(1, ...unique.map((p) => (Number.isFinite(p.cost.high) ? p.cost.high : p.cost.estimate))) * 1.05
  const x = (v: number) => left + ((width - left - right) * Math.min(v, maxX)) / maxX
  const y = (v: number) => top + ((height - top - bottom) * (100 - Math.max(0, Math.min(100, v)))) / 100
  const body: Array<string> = []
  for (const v of [0, 25, 50, 75, 100])
    body.push(
      `<line x1="${left}" x2="${width - right}" y1="${y(v)}" y2="${y(v)}" stroke="#e8eaee"/><text class="tick" x="${left - 8}" y="${y(v) + 4}" text-anchor="end">${v}</text>`
    )
  for (let i = 0; i <= 4; i++) {
    const v = (maxX * i) / 4
    body.push(`<text class="tick" x="${x(v)}" y="${height - bottom + 16}" text-anchor="middle">${v.toFixed(1)}</text>`)
  }
  body.push(
    `<text class="axis" x="${(left + width - right) / 2}" y="${height - 6}" text-anchor="middle">model calls per task</text>`,
    `<text class="axis" x="14" y="${(top + height - bottom) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(top + height - bottom) / 2})">pass rate (%)</text>`
  )
  for (const p of unique) {
    const color = methodColor(p.method)
    const cx = x(p.cost.estimate)
    const cy = y(p.pass.estimate)
    body.push(
      `<g><title>${esc(`${p.name}: pass ${formatInterval(p.pass)}, model calls per task ${formatInterval(p.cost)}`)}</title>`,
      `<line x1="${cx}" x2="${cx}" y1="${y(p.pass.low)}" y2="${y(p.pass.high)}" stroke="${color}"/>`,
      `<line x1="${x(p.cost.low)}" x2="${x(p.cost.high)}" y1="${cy}" y2="${cy}" stroke="${color}"/>`,
      `<circle cx="${cx}" cy="${cy}" r="5" fill="${color}"/>`,
      `<text class="value" x="${cx + 8}" y="${cy - 6}">${esc(p.name)}</text></g>`
    )
  }
  return `<section class="chart"><h3>Cost against pass rate</h3><svg viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="cost against pass rate" preserveAspectRatio="xMinYMin meet">${body.join("")}</svg></section>`
}

/** The statistics section of the HTML report. */
export const renderStatisticsHtml = (rows: ReadonlyArray<Row>, statistics: Statistics, heading = true): string => {
  const parts: Array<string> = [
    `${heading ? "<h2>Statistics</h2>" : "<h3>Intervals, pairs, costs and agreement</h3>"}<p class="note">${esc(`95% intervals by bootstrap over tasks (runs and judge rounds resampled within each task), seed ${statistics.seed}, ${statistics.resamples} resamples: the same labels and seed give the same numbers. See docs/benchmark.md for how to read them.`)}</p>`
  ]
  const perRow = statistics.rows.filter((s) => s.pass || s.win)
  if (perRow.length > 0)
    parts.push(
      table(
        [
          "row",
          "group",
          "judge",
          "tasks × runs × rounds",
          "pass [95% CI]",
          "judge std",
          "pass@k",
          "pass^k",
          "win [95% CI]"
        ],
        perRow.map((s) => {
          const row = rows[s.row]!
          const last = s.passK?.at(-1)
          return [
            s.name,
            row.group,
            row.judge,
            `${s.tasks} × ${s.runs} × ${s.rounds}`,
            formatInterval(s.pass),
            fixed(s.pass?.judgeStd, 1),
            last ? `k=${last.k}: ${formatInterval(last.passAt)}` : "-",
            last ? `k=${last.k}: ${formatInterval(last.passHat)}` : "-",
            s.win ? `${formatInterval(s.win)} vs ${s.win.reference}` : "-"
          ]
        }),
        3
      )
    )
  if (statistics.pairs.length > 0)
    parts.push(
      `<h3>Paired differences</h3><p class="note">${esc("A − B in points over the tasks both rows have, with its 95% paired-bootstrap interval; the verdict says tied when the interval covers 0. McNemar's exact test compares the tasks each row solves by majority. Noise floor: the difference these tasks resolve with 80% power (2.80·sd/√n); tasks needed: for a true difference of this size, (2.80·sd/d)².")}</p>`,
      table(
        [
          "group",
          "judge",
          "rate",
          "A",
          "B",
          "tasks",
          "A − B [95% CI]",
          "verdict",
          "McNemar p",
          "noise floor",
          "tasks needed"
        ],
        statistics.pairs.map((p) => [
          p.group,
          p.judge,
          p.kind === "win" ? `win vs ${p.reference}` : "pass",
          p.nameA,
          p.nameB,
          String(p.tasks),
          formatInterval(p.difference),
          p.verdictText,
          formatP(p.mcnemar.p),
          fixed(p.noiseFloor.detectable, 1),
          p.noiseFloor.tasksNeeded === undefined ? "-" : String(p.noiseFloor.tasksNeeded)
        ]),
        5
      )
    )
  const costed = statistics.rows.filter(
    (s, i) =>
      Object.keys(s.cost).length > 0 &&
      statistics.rows.findIndex((t) => t.name === s.name && rows[t.row]!.group === rows[i]!.group) === i
  )
  const measures = COST_MEASURES.filter((m) => costed.some((s) => s.cost[m.name] !== undefined))
  if (costed.length > 0)
    parts.push(
      `<h3>Cost per task and per solved task</h3><p class="note">${esc("Per solved task = sum of costs / tasks solved (Unsure counts half); ∞: some resamples solved nothing.")}</p>`,
      table(
        ["row", "group", "", ...measures.map((m) => m.label)],
        costed.flatMap((s) => {
          const digits = (name: string) => (name.endsWith("Tokens") ? 0 : 1)
          const row = rows[s.row]!
          return [
            [
              s.name,
              row.group,
              "per task",
              ...measures.map((m) => formatInterval(s.cost[m.name]?.perTask, digits(m.name)))
            ],
            ["", "", "per solved", ...measures.map((m) => formatInterval(s.cost[m.name]?.perSolved, digits(m.name)))]
          ]
        }),
        3
      ),
      costScatter(rows, statistics)
    )
  const a = statistics.agreement
  const agreement = [
    ...a.rounds.map((r) => [r.judge, `${r.rounds} rounds`, String(r.answers), fixed(r.kappa), fixed(r.alpha)]),
    ...a.judges.map((j) => [`${j.a} vs ${j.b}`, "majority labels", String(j.answers), fixed(j.kappa), "-"]),
    ...(a.all ? [[a.all.judges.join(", "), "majority labels", String(a.all.units), "-", fixed(a.all.alpha)]] : [])
  ]
  if (agreement.length > 0)
    parts.push(
      `<h3>Judge agreement</h3><p class="note">${esc("Cohen's κ for two raters, Krippendorff's α (nominal) for any number: 1 always agree, 0 as by chance. ToolEval's published labels count as a judge.")}</p>`,
      table(["judges", "raters", "answers", "Cohen's κ", "Krippendorff's α"], agreement, 2)
    )
  return `<section class="statistics">${parts.join("\n")}</section>`
}

/**
 * The comparison's statistics in the report's shape (`ReportStatistics`): each row's pass and win intervals for
 * the runs table, and the rest (pass^k, paired differences, costs, agreement) as one section of the report's
 * statistics.
 */
export const reportStatisticsOf = (rows: ReadonlyArray<Row>, statistics: Statistics): ReportStatistics => {
  const method = `bootstrap over tasks, ${statistics.resamples} resamples, seed ${statistics.seed}`
  const intervals = statistics.rows.flatMap((s) => {
    const row = rows[s.row]
    if (row === undefined) return []
    return [
      ...(s.pass
        ? [{ row: rowKey(row), metric: "pass" as const, low: s.pass.low, high: s.pass.high, level: 0.95, method }]
        : []),
      ...(s.win
        ? [{ row: rowKey(row), metric: "win" as const, low: s.win.low, high: s.win.high, level: 0.95, method }]
        : [])
    ]
  })
  return { intervals, sections: [renderStatisticsHtml(rows, statistics, false)] }
}
