// A self-contained HTML report of a comparison: the table and inline-SVG charts, no external assets.
import { judgeTextsLabel, type Row } from "./collect.ts"
import { missingWork } from "./missing.ts"
import { labelSummary, leadingReason, type TaskResult } from "./results.ts"
import { colorOf, escapeXml as esc, groupedBars, horizontalBars, methodColor, PALETTE, type Series } from "./svg.ts"
import { COLUMNS, cells, missNote } from "./table.ts"

/** A task in the report's task list, with the link to its trajectory page when there is one (a run's task; relative to the report). */
export type ReportTask = TaskResult & { readonly source: string; readonly href?: string | undefined }

const STYLE = `
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1f2430; background: #fafbfc; margin: 0; }
main { max-width: 1240px; margin: 0 auto; padding: 32px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 36px 0 8px; }
p.note { color: #5b6270; margin: 4px 0 16px; max-width: 70ch; }
section.chart { background: #fff; border: 1px solid #e3e6eb; border-radius: 8px; padding: 16px 16px 8px; margin: 12px 0; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: 13px; font-variant-numeric: tabular-nums; }
td .sub { display: block; font-size: 11px; color: #6b7280; }
th, td { padding: 6px 8px; vertical-align: top; border-bottom: 1px solid #e8eaee; text-align: left; }
td.num, td.keep { white-space: nowrap; }
th.num { white-space: normal; }
td .sub { white-space: nowrap; }
table.tasks td.reason { min-width: 18em; overflow-wrap: anywhere; }
.lab-S { color: #1f7a1f; } .lab-U { color: #b00020; } .lab-Q { color: #8a6d00; }
th { font-size: 12px; }
th { background: #f1f3f6; font-weight: 600; position: sticky; top: 0; }
td.num, th.num { text-align: right; }
tr:hover td { background: #f7f9fc; }
.table-wrap { overflow-x: auto; border: 1px solid #e3e6eb; border-radius: 8px; }
ul.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 6px 22px; padding: 0; margin: 6px 0 4px 8px; font-size: 13px; }
ul.legend li { display: flex; align-items: center; gap: 7px; }
i.dot { width: 9px; height: 9px; border-radius: 50%; display: inline-block; margin-right: 5px; }
ul.legend i { width: 12px; height: 12px; border-radius: 2px; display: inline-block; }
svg { display: block; }
svg text { font-family: inherit; fill: #39404d; }
svg .tick { font-size: 11px; fill: #6b7280; }
svg .axis { font-size: 12px; fill: #6b7280; }
svg .category { font-size: 12.5px; }
svg .value { font-size: 11px; fill: #39404d; }
svg .legend { font-size: 12.5px; }
svg .grid { stroke: #edf0f3; }
svg .baseline { stroke: #9aa3af; }
svg .whisker { stroke: #1f2430; stroke-width: 1.3; fill: none; }
`

/** A label naming a row by the parts (source, method, judge) that differ between the rows shown together. */
const namer = (rows: ReadonlyArray<Row>) => {
  // the profile and the judge texts are part of the name: rows that differ only in them never share a series
  const parts = (r: Row) => [
    r.source,
    r.profile ? `${r.method} (${r.profile})` : r.method,
    r.judge === "ToolEval"
      ? "ToolEval labels"
      : r.judge
        ? `judge ${r.judge}${r.judgeTexts ? ` (${judgeTextsLabel(r.judgeTexts)})` : ""}`
        : ""
  ]
  const varies = [0, 1, 2].map((i) => new Set(rows.map((r) => parts(r)[i])).size > 1)
  return (r: Row, always: ReadonlyArray<number> = [1]) =>
    parts(r)
      .filter((p, i) => p && (varies[i] || always.includes(i)))
      .join(" · ")
}

/** Series per (source, method, judge) over the groups, for one metric; a series takes its method's colour (the same in every report). */
const seriesOf = (
  rows: ReadonlyArray<Row>,
  groups: ReadonlyArray<string>,
  seriesName: (r: Row) => string,
  colors: Map<string, string>,
  value: (r: Row) => number | undefined,
  error?: (r: Row) => number | undefined
): Array<Series> => {
  const names = [...new Set(rows.map((r) => seriesName(r)))]
  return names
    .map((name) => {
      const mine = rows.filter((r) => seriesName(r) === name)
      // a method's colour comes from its name; a second series of the same method (another run or judge) takes the palette's next free colour
      const own = methodColor(mine[0]!.method)
      const taken = new Set(colors.values())
      const color =
        colors.get(name) ??
        colors.set(name, taken.has(own) ? (PALETTE.find((c) => !taken.has(c)) ?? colorOf(colors.size)) : own).get(name)
      const at = (g: string) => mine.find((r) => r.group === g)
      return {
        name,
        values: groups.map((g) => {
          const r = at(g)
          return r ? value(r) : undefined
        }),
        errors: error
          ? groups.map((g) => {
              const r = at(g)
              return r ? error(r) : undefined
            })
          : undefined,
        color
      }
    })
    .filter((s) => s.values.some((v) => v !== undefined))
}

const legend = (items: ReadonlyArray<{ name: string; color?: string | undefined }>) =>
  `<ul class="legend">${items.map((s, i) => `<li><i style="background:${s.color ?? colorOf(i)}"></i>${esc(s.name)}</li>`).join("")}</ul>`

const chart = (
  title: string,
  note: string,
  svg: string,
  items: ReadonlyArray<{ name: string; color?: string | undefined }>
) => `<h2>${esc(title)}</h2><p class="note">${esc(note)}</p><section class="chart">${svg}${legend(items)}</section>`

/** A table cell; the win cell puts its reference on a second, smaller line. */
const cellHtml = (text: string, column: number) => {
  const [rate, reference] = text.split(" vs ")
  return COLUMNS[column] === "win" && reference !== undefined
    ? `${esc(rate!)}<span class="sub">vs ${esc(reference)}</span>`
    : esc(text)
}

/** The whole report as one HTML document. */
/** The rows whose pass rates count calls nothing recorded or simulated as failures, named in the chart's caption. */
const missCaption = (rows: ReadonlyArray<Row>): string => {
  const missed = rows.filter((r) => missNote(r) !== "")
  return missed.length === 0
    ? ""
    : ` Tool calls with no recorded response and no simulator failed in: ${missed.map((r) => `${r.source} · ${r.method} · ${r.group}${missNote(r)}`).join("; ")}.`
}

/** The task list: one row per task and method, its labels and the judge's reason, linked to its trajectory page. */
const taskTable = (tasks: ReadonlyArray<ReportTask>): string => {
  const sources = new Set(tasks.map((t) => t.source)).size > 1
  const head = [
    ...(sources ? ["source"] : []),
    "method",
    "group",
    "task",
    "labels",
    "reason",
    "model calls",
    "tool calls",
    "tokens",
    "wall s",
    "missed calls"
  ]
  const num = (v: number | undefined, digits = 0) => (v === undefined ? "-" : v.toFixed(digits))
  const labels = (t: ReportTask) =>
    esc(labelSummary(t)).replace(/\b([SU])\b|\?/g, (m) => `<span class="lab-${m === "?" ? "Q" : m}">${m}</span>`)
  const body = tasks.map((t) => {
    const id = t.href ? `<a href="${esc(t.href)}">${esc(t.taskId)}</a>` : esc(t.taskId)
    const cellsOf = [
      ...(sources ? [esc(t.source)] : []),
      `<i class="dot" style="background:${methodColor(t.method)}"></i>${esc(t.method)}`,
      esc(t.group),
      id,
      labels(t),
      esc(leadingReason(t))
    ]
    const nums = [
      num(t.modelCalls),
      num(t.toolCalls),
      num(t.tokens),
      t.wallMs === undefined ? "-" : (t.wallMs / 1000).toFixed(1),
      num(t.missedToolCalls)
    ]
    return `<tr>${cellsOf.map((c, i) => `<td${i === cellsOf.length - 1 ? ' class="reason"' : ' class="keep"'}>${c}</td>`).join("")}${nums.map((n) => `<td class="num">${n}</td>`).join("")}</tr>`
  })
  return `<h2>Tasks</h2><p class="note">${esc("One row per task and method: each judge run's label (S Solved, U Unsolved, ? Unsure, - not judged) and the reason of the first run that did not say Solved. A task's id opens its trajectory page, every method side by side.")}</p><div class="table-wrap"><table class="tasks"><thead><tr>${head.map((h, i) => `<th${i >= head.length - 5 ? ' class="num"' : ""}>${esc(h)}</th>`).join("")}</tr></thead><tbody>${body.join("")}</tbody></table></div>`
}

export const renderHtml = (
  rows: ReadonlyArray<Row>,
  options: { title?: string; generatedAt?: string; tasks?: ReadonlyArray<ReportTask> | undefined } = {}
): string => {
  const title = options.title ?? "smurfs: run comparison"
  const groups = [...new Set(rows.map((r) => r.group))].sort()
  const numeric = (i: number) => i >= 5
  const table = `<div class="table-wrap"><table><thead><tr>${COLUMNS.map((c, i) => `<th${numeric(i) ? ' class="num"' : ""}>${esc(c)}</th>`).join("")}</tr></thead><tbody>${rows
    .map(
      (r) =>
        `<tr>${cells(r)
          .map(
            (c, i) =>
              `<td${numeric(i) ? ' class="num"' : COLUMNS[i] === "group" || COLUMNS[i] === "method" ? ' class="keep"' : ""}>${cellHtml(c, i)}</td>`
          )
          .join("")}</tr>`
    )
    .join("")}</tbody></table></div>`
  const sections: Array<string> = []
  const missing = missingWork(rows)
  const judged = rows.filter((r) => r.pass || r.win)
  const judgedName = namer(judged)
  const colors = new Map<string, string>()
  const pass = seriesOf(
    rows.filter((r) => r.pass),
    groups,
    judgedName,
    colors,
    (r) => r.pass?.mean,
    (r) => r.pass?.std
  )
  if (pass.length > 0)
    sections.push(
      chart(
        "Pass rate (SoPR) per method and group",
        `Mean over judge runs; whiskers show ± population standard deviation over runs. Solved = 1, Unsure = 0.5, Unsolved = 0.${missCaption(rows.filter((r) => r.pass))}`,
        groupedBars({ categories: groups, series: pass, max: 100, axis: "pass rate (%)" }),
        pass
      )
    )
  // one bar per reference: a method compared with two references is two series, never one hiding the other
  const winName = (r: Row) => `${judgedName(r)} vs ${r.win?.reference ?? ""}`
  // the win chart's own colours: a method keeps its colour there too
  const win = seriesOf(
    rows.filter((r) => r.win),
    groups,
    winName,
    new Map(),
    (r) => r.win?.rate
  )
  if (win.length > 0)
    sections.push(
      chart(
        "Win rate (SoWR) per method and group",
        "Share of the tasks both sides answered where the candidate won more rounds than its reference; one bar per reference.",
        groupedBars({ categories: groups, series: win, max: 100, axis: "win rate (%)" }),
        win
      )
    )
  const measured = rows.filter((r) => r.promptTokens !== undefined || r.modelCalls !== undefined)
  const costName = namer(measured)
  const label = (r: Row) => `${costName(r)} · ${r.group}`
  const unique = measured.filter((r, i) => measured.findIndex((x) => label(x) === label(r)) === i)
  if (unique.length > 0) {
    const tokens = ["prompt tokens", "completion tokens"]
    sections.push(
      chart(
        "Tokens per task",
        "Mean prompt and completion tokens per task.",
        horizontalBars({
          rows: unique.map((r) => ({ label: label(r), values: [r.promptTokens, r.completionTokens] })),
          names: tokens,
          stacked: true,
          axis: "tokens / task"
        }),
        tokens.map((name) => ({ name }))
      )
    )
    const calls = ["model calls", "tool calls"]
    sections.push(
      chart(
        "Model calls and tool calls per task",
        "Mean calls per task.",
        horizontalBars({
          rows: unique.map((r) => ({ label: label(r), values: [r.modelCalls, r.toolCalls] })),
          names: calls,
          stacked: false,
          axis: "calls / task"
        }),
        calls.map((name) => ({ name }))
      )
    )
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head>
<body><main>
<h1>${esc(title)}</h1>
<p class="note">${esc(`${rows.length} rows from ${new Set(rows.map((r) => r.source)).size} source(s)${options.generatedAt ? `, generated ${options.generatedAt}` : ""}. Pass rate and win rate follow StableToolBench's ToolEval; costs are means per task.`)}</p>
${table}
${missing.length > 0 ? `<h2>Missing work</h2><ul>${missing.map((m) => `<li>${esc(m)}</li>`).join("")}</ul>` : ""}
${sections.join("\n")}
${options.tasks && options.tasks.length > 0 ? taskTable(options.tasks) : ""}
</main></body></html>
`
}
