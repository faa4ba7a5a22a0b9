// The comparison as a plain-text table for the terminal.
import { judgeTextsLabel, type Row } from "./collect.ts"
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

/** The share of tool calls that missed (nothing recorded or simulated), beside a pass rate; empty when none or unknown. */
export const missNote = (row: Row): string =>
  row.missRate === undefined || row.missedToolCalls === 0 ? "" : ` (${(100 * row.missRate).toFixed(1)}% calls missed)`

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

/** Left-aligned text columns, numbers right-aligned, separated by two spaces. */
export const renderTable = (rows: ReadonlyArray<Row>): string => {
  const body = rows.map(cells)
  const all = [[...COLUMNS], ...body]
  const widths = COLUMNS.map((_, i) => Math.max(...all.map((r) => r[i]!.length)))
  const numeric = (i: number) => i >= 5
  const line = (r: ReadonlyArray<string>) =>
    r
      .map((c, i) => (numeric(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [line(all[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n")
}
