// The comparison as a plain-text table for the terminal.
import { judgeTextsLabel, type Row } from "./collect.ts"
import type { RowStatistics } from "./comparison.ts"
import { winIncompleteNote } from "./missing.ts"

export const COLUMNS = [
  "source",
  "method",
  "model",
  "group",
  "judge",
  "judged/N",
  "pass ± std",
  "win",
  "model calls",
  "prompt tok",
  "compl tok",
  "tool calls",
  "wall s"
] as const

const num = (v: number | undefined, digits = 1) => (v === undefined ? "-" : v.toFixed(digits))

/**
 * The shares of tool calls that missed (nothing recorded or simulated) and that a simulator answered, beside a pass
 * rate; empty when none or unknown.
 */
export const missNote = (row: Row): string => {
  const notes = [
    ...(row.missRate === undefined || row.missedToolCalls === 0
      ? []
      : [`${(100 * row.missRate).toFixed(1)}% calls missed`]),
    ...(row.simulatedRate === undefined || row.simulatedToolCalls === 0
      ? []
      : [`${(100 * row.simulatedRate).toFixed(1)}% simulated`])
  ]
  return notes.length === 0 ? "" : ` (${notes.join(", ")})`
}

/** The cells of one row, in COLUMNS order. */
export const cells = (row: Row): Array<string> => [
  row.source,
  row.profile ? `${row.method} (${row.profile})` : row.method,
  row.model || "-",
  row.group,
  (row.judge || "-") + (row.judgeTexts ? ` (${judgeTextsLabel(row.judgeTexts)})` : ""),
  // every task of the row counts in N, so that missing work (unjudged, failed, not run) shows
  `${row.judged}/${row.total}`,
  // a pass rate where unrecorded calls failed is never shown without their share
  (row.pass ? `${row.pass.mean.toFixed(1)} ± ${row.pass.std.toFixed(1)}${missNote(row)}` : "-") +
    (row.fac ? ` · FAC ${row.fac.rate.toFixed(1)} (N=${row.fac.n})` : ""),
  // a win rate over missing rounds or tasks says so beside its N (the Missing work section names them)
  row.win
    ? `${row.win.rate.toFixed(1)} vs ${row.win.reference} (N=${row.win.n})${winIncompleteNote(row) ? ` · ${winIncompleteNote(row)}` : ""}`
    : "-",
  num(row.modelCalls),
  num(row.promptTokens, 0),
  num(row.completionTokens, 0),
  num(row.toolCalls),
  row.wallMs === undefined ? "-" : (row.wallMs / 1000).toFixed(1)
]

/**
 * The terminal table's columns: model calls per task and per solved task, wall time per task; the other costs, with
 * intervals, are in the cost section below it (`renderStatistics`).
 */
export const TERMINAL_COLUMNS = [
  "source",
  "method",
  "model",
  "group",
  "judge",
  "judged/N",
  "pass ± std [95% CI]",
  "pass^k",
  "win",
  "calls/task /solved",
  "wall s"
] as const

const interval = (low: number, high: number, digits = 1) =>
  `[${low.toFixed(digits)}, ${Number.isFinite(high) ? high.toFixed(digits) : "∞"}]`

/** The terminal cells of one row, in TERMINAL_COLUMNS order; intervals, pass^k and cost per solved task from `stats`. */
export const terminalCells = (row: Row, stats?: RowStatistics): Array<string> => {
  const full = cells(row)
  const pass = stats?.pass
  const passK = stats?.passK?.at(-1)
  const perSolved = stats?.cost.modelCalls?.perSolved
  return [
    ...full.slice(0, 6),
    row.pass
      ? `${row.pass.mean.toFixed(1)} ± ${row.pass.std.toFixed(1)}${pass ? ` ${interval(pass.low, pass.high)}` : ""}${missNote(row)}` +
        (row.fac ? ` · FAC ${row.fac.rate.toFixed(1)} (N=${row.fac.n})` : "")
      : "-",
    passK ? `${passK.passHat.estimate.toFixed(1)} (k=${passK.k})` : "-",
    full[7]!,
    `${full[8]!}${perSolved ? ` / ${perSolved.estimate.toFixed(1)}` : ""}`,
    full[12]!
  ]
}

/** Left-aligned text columns, numbers right-aligned, separated by two spaces; a column no row fills is left out. */
export const renderTable = (rows: ReadonlyArray<Row>, stats?: ReadonlyArray<RowStatistics>): string => {
  const body = rows.map((r, i) => terminalCells(r, stats?.[i]))
  // pass^k only when some row has several agent runs per task
  const shown = TERMINAL_COLUMNS.map((c, i) => c !== "pass^k" || body.some((r) => r[i] !== "-"))
  const keep = <A>(r: ReadonlyArray<A>) => r.filter((_, i) => shown[i])
  // without statistics (eval's summary) there is no interval to name
  const head = TERMINAL_COLUMNS.map((c) => (c === "pass ± std [95% CI]" && stats === undefined ? "pass ± std" : c))
  const all = [keep(head), ...body.map(keep)]
  const widths = all[0]!.map((_, i) => Math.max(...all.map((r) => r[i]!.length)))
  const numeric = (i: number) => i >= 5
  const line = (r: ReadonlyArray<string>) =>
    r
      .map((c, i) => (numeric(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [line(all[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...all.slice(1).map(line)].join("\n")
}
