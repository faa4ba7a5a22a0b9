// The report's place for statistics: per-row intervals and paired comparisons in one data shape, and the section that shows them (or what is known without them).
import type { Row } from "./collect.ts"
import { escapeXml as esc } from "./svg.ts"

/** Cells named by their column, for the narrow layout where each row is a card of "column: value" lines. */
export const labelled = (cells: ReadonlyArray<string>, labels: ReadonlyArray<string>): Array<string> =>
  cells.map((c, i) =>
    c.replace(
      /^<td([^>]*)>([\s\S]*)<\/td>$/,
      (_, attributes: string, content: string) =>
        `<td data-label="${esc(labels[i] ?? "")}"${attributes}><span class="v">${content}</span></td>`
    )
  )

/** A row's identity within a comparison: every part that gives it a row of its own (see collectRows). */
export const rowKey = (r: Row): string =>
  [r.source, r.method, r.profile ?? "", r.group, r.judge, r.judgeTexts ?? "", r.win?.reference ?? ""].join("\u0000")

/** An interval of one row's rate (in %, as the rates are), e.g. a bootstrap over its tasks. */
export interface RowInterval {
  /** `rowKey` of the row it belongs to. */
  readonly row: string
  readonly metric: "pass" | "win"
  readonly low: number
  readonly high: number
  /** The confidence level, e.g. 0.95. */
  readonly level: number
  /** How it was computed, for the caption ("bootstrap over tasks, 10000 resamples"). */
  readonly method?: string | undefined
}

/** Two rows compared on the tasks both have: the difference of a rate (a - b, in points) with its interval and a verdict. */
export interface PairwiseComparison {
  readonly metric: "pass" | "win" | string
  readonly group: string
  /** `rowKey`s of the two rows. */
  readonly a: string
  readonly b: string
  /** Tasks both rows have. */
  readonly n: number
  readonly difference: number
  readonly low: number
  readonly high: number
  readonly level: number
  readonly pValue?: number | undefined
  /** In words: "a better", "no difference shown", ... */
  readonly verdict: string
}

/**
 * Statistics a caller computed over the rows (`compare`'s statistics): intervals show in the runs table and
 * here, pairs as a table here; `sections` are further HTML sections (judge agreement, cost per solved task)
 * made by renderers that escape their own data, shown at the end of the statistics.
 */
export interface ReportStatistics {
  readonly intervals?: ReadonlyArray<RowInterval> | undefined
  readonly pairs?: ReadonlyArray<PairwiseComparison> | undefined
  readonly sections?: ReadonlyArray<string> | undefined
}

const pct = (v: number | undefined, digits = 1) => (v === undefined ? "-" : v.toFixed(digits))

/** The interval of a row's metric, as "[lo, hi]"; undefined when there is none. */
export const intervalOf = (
  stats: ReportStatistics | undefined,
  row: Row,
  metric: "pass" | "win"
): RowInterval | undefined => stats?.intervals?.find((i) => i.row === rowKey(row) && i.metric === metric)

export const intervalText = (i: RowInterval): string => `[${i.low.toFixed(1)}, ${i.high.toFixed(1)}]`

/**
 * The statistics section: per row what the rates rest on (tasks judged, judge runs, spread over runs,
 * intervals when given), then the paired comparisons and the caller's further sections.
 */
export const renderStatistics = (
  rows: ReadonlyArray<Row>,
  stats: ReportStatistics | undefined,
  name: (r: Row) => string
): string => {
  const judged = rows.filter((r) => r.pass || r.win)
  const hasIntervals = (stats?.intervals?.length ?? 0) > 0
  const level = stats?.intervals?.[0]?.level
  const levelText = level !== undefined ? `${Math.round(level * 100)}% interval` : "interval"
  const head = [
    "row",
    "tasks judged",
    "judge runs",
    "pass %",
    "± std over runs",
    `pass ${levelText}`,
    "win %",
    "W / T / L",
    `win ${levelText}`
  ]
  const body = judged.map((r): Array<string> => {
    const p = intervalOf(stats, r, "pass"),
      w = intervalOf(stats, r, "win")
    return [
      `<td class="long">${esc(name(r))}</td>`,
      `<td class="num">${r.judged}/${r.total}</td>`,
      `<td class="num">${r.pass?.runs ?? "-"}</td>`,
      `<td class="num">${pct(r.pass?.mean)}</td>`,
      `<td class="num">${pct(r.pass?.std)}</td>`,
      `<td class="num">${p ? esc(intervalText(p)) : '<span class="muted">-</span>'}</td>`,
      `<td class="num">${r.win ? `${pct(r.win.rate)}<span class="sub">vs ${esc(r.win.reference)}, N=${r.win.n}</span>` : "-"}</td>`,
      `<td class="num">${r.win ? `${r.win.wins} / ${r.win.ties} / ${r.win.losses}` : "-"}</td>`,
      `<td class="num">${w ? esc(intervalText(w)) : '<span class="muted">-</span>'}</td>`
    ]
  })
  const perRow =
    judged.length === 0
      ? '<p class="note">No row is judged yet: run <code>smurfs eval --run &lt;dir&gt; --judge &lt;spec&gt;</code>.</p>'
      : `<div class="table-wrap"><table class="stats cards"><thead><tr>${head.map((h, i) => `<th${i > 0 ? ' class="num"' : ""}>${esc(h)}</th>`).join("")}</tr></thead><tbody>${body.map((b) => `<tr>${labelled(b, head).join("")}</tr>`).join("")}</tbody></table></div>`
  const byKey = new Map(rows.map((r) => [rowKey(r), r]))
  const rowName = (key: string) => {
    const r = byKey.get(key)
    return r ? name(r) : key.split("\u0000").filter(Boolean).join(" · ")
  }
  const pairs = stats?.pairs ?? []
  const pairTable =
    pairs.length === 0
      ? `<p class="note" id="pairs-empty">${esc(
          "No paired comparisons in this report. Paired differences (two methods on the tasks both answered, with an interval and a verdict) appear here when the comparison computes them."
        )}</p>`
      : `<div class="table-wrap"><table class="pairs"><thead><tr>${["group", "metric", "a", "b", "N", "a - b", "interval", "p", "verdict"].map((h, i) => `<th${i >= 4 && i <= 7 ? ' class="num"' : ""}>${esc(h)}</th>`).join("")}</tr></thead><tbody>${pairs
          .map(
            (p) =>
              `<tr><td>${esc(p.group)}</td><td>${esc(p.metric)}</td><td class="long">${esc(rowName(p.a))}</td><td class="long">${esc(rowName(p.b))}</td><td class="num">${p.n}</td><td class="num">${p.difference >= 0 ? "+" : ""}${p.difference.toFixed(1)}</td><td class="num">${esc(`[${p.low.toFixed(1)}, ${p.high.toFixed(1)}] (${Math.round(p.level * 100)}%)`)}</td><td class="num">${p.pValue === undefined ? "-" : p.pValue < 0.001 ? "&lt;0.001" : p.pValue.toFixed(3)}</td><td>${esc(p.verdict)}</td></tr>`
          )
          .join("")}</tbody></table></div>`
  const note = hasIntervals
    ? `Intervals: ${[...new Set(stats!.intervals!.map((i) => i.method).filter(Boolean))].join("; ") || "as computed by the comparison"}.`
    : "The ± std is the spread of the pass rate over judge runs (how much the judge varies), not an interval over tasks; the interval columns fill in when the comparison computes them."
  // the comparison's own sections show its pairs (compare's statistics): no second, empty table above them
  const sections = stats?.sections ?? []
  const pairPart = pairs.length === 0 && sections.length > 0 ? "" : `<h3>Paired comparisons</h3>${pairTable}`
  return `<section id="statistics" class="panel"><h2>Statistics</h2><p class="note">${esc(note)}</p>${perRow}${pairPart}${sections.join("\n")}</section>`
}
