// The report of a comparison as one self-contained page that opens offline: the runs' table, statistics, inline-SVG
// charts, and every task with filters, sorting, search and its transcripts (methods side by side, labels, reasons,
// win rounds). One inline script (explorer-script.ts), allowed by its hash alone; every text from the data is escaped.
import { plural } from "../../src/plural.ts"
import { judgeTextsLabel, type Row } from "./collect.ts"
import { EXPLORER_SCRIPT, EXPLORER_SCRIPT_HASH } from "./explorer-script.ts"
import { guardLines } from "./guards.ts"
import { missingWork, winIncompleteNote } from "./missing.ts"
import { LABEL_FILTERS, labelSummary, leadingReason, type TaskResult } from "./results.ts"
import { intervalOf, intervalText, labelled, type ReportStatistics, renderStatistics } from "./statistics.ts"
import { colorOf, escapeXml as esc, groupedBars, horizontalBars, methodColor, PALETTE, type Series } from "./svg.ts"
import { missNote } from "./table.ts"
import { TRAJECTORY_STYLE } from "./transcript-style.ts"
import { type TaskVerdict, verdictSummary } from "./verdicts.ts"

export type { ReportStatistics } from "./statistics.ts"

/** A task in the report's task list. */
export type ReportTask = TaskResult & {
  /** The input it comes from (its base name). */
  readonly source: string
  /** The link to its own trajectory page, relative to the report, when there is one (a run's task). */
  readonly href?: string | undefined
  /** Its transcripts' key in `renderHtml`'s `transcripts` (the methods' columns of this task). */
  readonly transcript?: string | undefined
  /** Its win rounds against each reference. */
  readonly verdicts?: ReadonlyArray<TaskVerdict> | undefined
  /** How it ended: give_answer, give_up, error... */
  readonly finish?: string | undefined
}

const STYLE = `
:root { color-scheme: light; --line: #e3e6eb; --muted: #5b6270; }
* { box-sizing: border-box; }
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1f2430; background: #fafbfc; margin: 0; }
main { max-width: 1360px; margin: 0 auto; padding: 20px 20px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 18px; margin: 0 0 8px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
a { color: #2f5fa5; }
code { font-size: 12.5px; background: #f1f3f6; padding: 0 3px; border-radius: 3px; }
p.note { color: var(--muted); margin: 4px 0 12px; max-width: 80ch; }
nav.sections { position: sticky; top: 0; z-index: 2; background: #fafbfcf0; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: 4px 18px; padding: 8px 0; margin: 8px 0 16px; font-size: 14px; }
section.panel { margin: 0 0 28px; scroll-margin-top: 48px; }
section.chart { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 12px 6px; margin: 8px 0 16px; overflow-x: auto; }
section.chart svg { min-width: 620px; }
.table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; background: #fff; max-width: 100%; }
table { border-collapse: collapse; width: 100%; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 8px; vertical-align: top; border-bottom: 1px solid #eceef2; text-align: left; }
th { background: #f1f3f6; font-weight: 600; font-size: 12px; position: sticky; top: 0; }
td.num, th.num { text-align: right; }
td.num { white-space: nowrap; }
td .sub { display: block; font-size: 11px; color: #6b7280; white-space: normal; }
td.name { overflow-wrap: break-word; }
td.long { overflow-wrap: anywhere; min-width: 8em; }
tr:hover td { background: #f7f9fc; }
i.dot { width: 9px; height: 9px; border-radius: 50%; display: inline-block; margin-right: 5px; }
.lab-S, .won { color: #1f7a1f; } .lab-U, .lost { color: #b00020; } .lab-Q { color: #8a6d00; }
.muted { color: #6b7280; }
ul.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 6px 22px; padding: 0; margin: 6px 0 4px 8px; font-size: 13px; }
ul.legend li { display: flex; align-items: center; gap: 7px; }
ul.legend i { width: 12px; height: 12px; border-radius: 2px; display: inline-block; }
svg { display: block; }
svg text { font-family: inherit; fill: #39404d; }
svg .tick { font-size: 11px; fill: #6b7280; }
svg .axis { font-size: 12px; fill: #6b7280; }
svg .category { font-size: 12.5px; }
svg .value { font-size: 11px; fill: #39404d; }
svg .grid { stroke: #edf0f3; }
svg .baseline { stroke: #9aa3af; }
svg .whisker { stroke: #1f2430; stroke-width: 1.3; fill: none; }
form.filters { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: end; margin: 8px 0 10px; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
form.filters input, form.filters select, form.filters button { font: inherit; font-size: 13px; padding: 4px 6px; border: 1px solid #cfd4dc; border-radius: 5px; background: #fff; max-width: 100%; }
form.filters input[type=search] { width: 16em; }
form.filters input[type=number] { width: 8em; }
#f-count { font-size: 13px; color: var(--muted); padding-bottom: 6px; }
table.tasks th button { font: inherit; font-weight: 600; background: none; border: 0; padding: 0; cursor: pointer; color: inherit; text-align: inherit; }
table.tasks th[aria-sort=ascending] button::after { content: " ▲"; } table.tasks th[aria-sort=descending] button::after { content: " ▼"; }
table.tasks tr[data-transcript]:not([data-transcript=""]) { cursor: pointer; }
table.tasks td.reason { min-width: 16em; max-width: 36em; overflow-wrap: anywhere; }
table.tasks td.query { min-width: 12em; max-width: 24em; overflow-wrap: anywhere; }
dialog#task-view { width: min(1500px, 96vw); max-width: 96vw; height: 92vh; max-height: 92vh; padding: 0; border: 1px solid var(--line); border-radius: 10px; }
dialog#task-view::backdrop { background: #1f243066; }
dialog#task-view > header { display: flex; justify-content: space-between; align-items: center; gap: 12px; padding: 10px 14px; border-bottom: 1px solid var(--line); background: #fff; }
dialog#task-view > header h2 { margin: 0; font-size: 16px; overflow-wrap: anywhere; }
#task-view-body { padding: 12px 14px; overflow: auto; height: calc(92vh - 52px); background: #fafbfc; }
#task-view-close { font: inherit; padding: 4px 12px; border: 1px solid #cfd4dc; border-radius: 5px; background: #fff; cursor: pointer; }
table.tasks tr[hidden] { display: none !important; }
table.tasks th { white-space: nowrap; }
#task-view-body .cols { grid-template-columns: repeat(auto-fit, minmax(min(100%, 380px), 1fr)); }
@media (max-width: 640px) {
  main { padding: 12px 10px 32px; } h1 { font-size: 20px; }
  form.filters input[type=search] { width: 100%; } form.filters label { flex: 1 1 45%; }
  /* each row a card of "column: value" lines; the headings stay as a row of sort buttons */
  table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: 100%; }
  table.cards thead { display: block; }
  table.cards thead tr { display: flex; flex-wrap: wrap; gap: 4px 10px; padding: 6px 10px; background: #f1f3f6; }
  table.cards thead tr::before { content: "sort by"; color: var(--muted); font-size: 12px; padding-top: 1px; }
  table.cards td > span.v { flex: 1 1 auto; min-width: 0; overflow-wrap: anywhere; }
  table.cards thead th { position: static; padding: 0; border: 0; background: none; }
  table.runs.cards thead { display: none; }
  table.cards tbody tr { padding: 6px 0; border-bottom: 1px solid var(--line); }
  table.cards td { display: flex; gap: 10px; border: 0; padding: 1px 10px; text-align: left; white-space: normal; min-width: 0; max-width: none; }
  table.cards td::before { content: attr(data-label); flex: 0 0 7.5em; color: var(--muted); font-size: 12px; padding-top: 1px; }
  table.cards td .sub { display: inline; margin-left: 6px; }
  table.cards td.num { text-align: left; }
}
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
) => `<h3>${esc(title)}</h3><p class="note">${esc(note)}</p><section class="chart">${svg}${legend(items)}</section>`

/** The rows whose pass rates count calls nothing recorded or simulated as failures, named in the chart's caption. */
const missCaption = (rows: ReadonlyArray<Row>): string => {
  const noted = rows.filter((r) => missNote(r) !== "")
  return noted.length === 0
    ? ""
    : ` Tool calls with no recorded response and no simulator failed (missed), or a simulator answered them, in: ${noted.map((r) => `${r.source} · ${r.method} · ${r.group}${missNote(r)}`).join("; ")}.`
}

/** The runs' table: one row per source, method, group and judge; text cells wrap, numbers keep to one line. */
const runsTable = (rows: ReadonlyArray<Row>, stats: ReportStatistics | undefined): string => {
  const varies = (f: (r: Row) => string) => new Set(rows.map(f)).size > 1
  const showSource = varies((r) => r.source)
  const showModel = varies((r) => r.model)
  const hasInterval = rows.some((r) => intervalOf(stats, r, "pass") !== undefined)
  const num = (v: number | undefined, digits = 1) => (v === undefined ? "-" : v.toFixed(digits))
  const head: Array<[string, boolean]> = [
    ...(showSource ? [["source", false] as [string, boolean]] : []),
    ["method", false],
    ...(showModel ? [["model", false] as [string, boolean]] : []),
    ["group", false],
    ["judge", false],
    ["judged / N", true],
    ["pass %", true],
    ...(hasInterval ? [["pass interval", true] as [string, boolean]] : []),
    ["win %", true],
    ["model calls", true],
    ["tool calls", true],
    ["tokens", true],
    ["wall s", true]
  ]
  const body = rows.map((r) => {
    const interval = intervalOf(stats, r, "pass")
    const winNote = winIncompleteNote(r)
    const tokens =
      r.promptTokens === undefined && r.completionTokens === undefined
        ? "-"
        : `${num((r.promptTokens ?? 0) + (r.completionTokens ?? 0), 0)}<span class="sub">${num(r.promptTokens, 0)} + ${num(r.completionTokens, 0)}</span>`
    const cells = [
      ...(showSource ? [`<td class="long">${esc(r.source)}</td>`] : []),
      `<td class="name"><i class="dot" style="background:${methodColor(r.method)}"></i>${esc(r.method)}${r.profile ? `<span class="sub">${esc(r.profile)} profile</span>` : ""}</td>`,
      ...(showModel ? [`<td class="long">${esc(r.model || "-")}</td>`] : []),
      `<td class="name">${esc(r.group)}</td>`,
      `<td class="long">${esc(r.judge || "-")}${r.judgeTexts ? `<span class="sub">${esc(judgeTextsLabel(r.judgeTexts))}</span>` : ""}</td>`,
      `<td class="num">${r.judged}/${r.total}${r.errors > 0 ? `<span class="sub">${r.errors} failed</span>` : ""}</td>`,
      `<td class="num">${r.pass ? `${r.pass.mean.toFixed(1)} ± ${r.pass.std.toFixed(1)}` : "-"}${
        missNote(r)
          ? `<span class="sub">${esc(
              missNote(r)
                .trim()
                .replace(/^\(|\)$/g, "")
            )}</span>`
          : ""
      }${r.fac ? `<span class="sub">FAC ${r.fac.rate.toFixed(1)} (N=${r.fac.n})</span>` : ""}</td>`,
      ...(hasInterval ? [`<td class="num">${interval ? esc(intervalText(interval)) : "-"}</td>`] : []),
      `<td class="num">${r.win ? `${r.win.rate.toFixed(1)}<span class="sub">vs ${esc(r.win.reference)}, N=${r.win.n}</span>${winNote ? `<span class="sub">${esc(winNote)}</span>` : ""}` : "-"}</td>`,
      `<td class="num">${num(r.modelCalls)}</td>`,
      `<td class="num">${num(r.toolCalls)}</td>`,
      `<td class="num">${tokens}</td>`,
      `<td class="num">${r.wallMs === undefined ? "-" : (r.wallMs / 1000).toFixed(1)}</td>`
    ]
    return `<tr>${labelled(
      cells,
      head.map(([h]) => h)
    ).join("")}</tr>`
  })
  const models = [...new Set(rows.map((r) => r.model).filter(Boolean))]
  const sources = [...new Set(rows.map((r) => r.source))]
  const about = [
    showSource ? "" : `source ${sources[0]}`,
    showModel || models.length === 0 ? "" : `model ${models[0]}`
  ].filter(Boolean)
  return `<section id="runs" class="panel"><h2>Runs</h2><p class="note">${esc(
    `${about.length > 0 ? `${about.join(", ")}. ` : ""}Pass rate (SoPR) is the mean over judge runs ± their standard deviation, over the judged tasks; win rate (SoWR) is over the tasks both sides answered. Costs are means per task; tokens are prompt + completion.`
  )}</p><div class="table-wrap"><table class="runs cards"><thead><tr>${head.map(([h, n]) => `<th${n ? ' class="num"' : ""}>${esc(h)}</th>`).join("")}</tr></thead><tbody>${body.join("")}</tbody></table></div></section>`
}

/** A task's labels as the filter reads them: each judge run's label, `unjudged` or `error`. */
const labelKeys = (t: ReportTask) =>
  t.status === "error"
    ? "error"
    : t.labels.length === 0
      ? "unjudged"
      : [...new Set(t.labels.map((l) => l.label.toLowerCase()))].join(" ")

/** Solved 1, Unsure 0.5, Unsolved 0, averaged over the task's labels (for sorting); empty without labels. */
const labelScore = (t: ReportTask) =>
  t.labels.length === 0
    ? ""
    : String(
        t.labels.reduce((s, l) => s + (l.label === "Solved" ? 1 : l.label === "Unsure" ? 0.5 : 0), 0) / t.labels.length
      )

const options = (values: ReadonlyArray<string>, all: string) =>
  `<option value="">${esc(all)}</option>${values.map((v) => `<option value="${esc(v)}">${esc(v)}</option>`).join("")}`

/** The task list with its filters and the transcripts it opens; rows are the page's markup, the script only hides and orders them. */
const taskExplorer = (
  tasks: ReadonlyArray<ReportTask>,
  transcripts: ReadonlyMap<string, string>,
  budget: number
): string => {
  // transcripts go into the page up to the budget; beyond it a row opens the task's own page instead
  const embedded = new Set<string>()
  let size = 0
  for (const key of new Set(tasks.map((t) => t.transcript))) {
    const html = key === undefined ? undefined : transcripts.get(key)
    if (key === undefined || html === undefined || size + html.length > budget) continue
    embedded.add(key)
    size += html.length
  }
  const left = new Set(tasks.map((t) => t.transcript).filter((k) => k !== undefined && !embedded.has(k))).size
  const sources = new Set(tasks.map((t) => t.source)).size > 1
  const distinct = (f: (t: ReportTask) => string | undefined) =>
    [...new Set(tasks.map(f).filter((v): v is string => v !== undefined && v !== ""))].sort()
  const hasWins = tasks.some((t) => (t.verdicts?.length ?? 0) > 0)
  const filters = [
    `<label>search<input type="search" id="f-q" placeholder="id, query, reason" autocomplete="off"></label>`,
    `<label>method<select id="f-method">${options(
      distinct((t) => t.method),
      "every method"
    )}</select></label>`,
    `<label>group<select id="f-group">${options(
      distinct((t) => t.group),
      "every group"
    )}</select></label>`,
    `<label>label<select id="f-label">${options(
      LABEL_FILTERS.filter((l) => tasks.some((t) => labelKeys(t).split(" ").includes(l))),
      "any label"
    )}</select></label>`,
    `<label>finish<select id="f-finish">${options(
      distinct((t) => t.finish),
      "any finish"
    )}</select></label>`,
    ...(hasWins
      ? [
          `<label>win rounds<select id="f-win"><option value="">any</option><option value="won">some won</option><option value="lost">some lost</option><option value="none">none</option></select></label>`
        ]
      : []),
    `<label>tokens at most<input type="number" id="f-tokens" min="0" step="100" placeholder="any"></label>`,
    `<button type="button" id="f-reset" disabled>clear</button>`,
    `<span id="f-count">${tasks.length} tasks</span>`
  ]
  const columns: Array<[string, string, "text" | "num"]> = [
    ...(sources ? [["source", "source", "text"] as [string, string, "text" | "num"]] : []),
    ["method", "method", "text"],
    ["group", "group", "text"],
    ["task", "id", "text"],
    ["query", "query", "text"],
    ["labels", "score", "num"],
    ...(hasWins ? [["win rounds", "wins", "num"] as [string, string, "text" | "num"]] : []),
    ["finish", "finish", "text"],
    ["reason", "reason", "text"],
    ["model calls", "calls", "num"],
    ["tool calls", "tools", "num"],
    ["tokens", "tokens", "num"],
    ["wall s", "wall", "num"]
  ]
  const n = (v: number | undefined) => (v === undefined ? "" : String(v))
  const body = tasks.map((t) => {
    const verdicts = t.verdicts ?? []
    const won = verdicts.filter((v) => v.outcome === "won").length
    const winKeys =
      verdicts.length === 0 ? "none" : [won > 0 ? "won" : "", won < verdicts.length ? "lost" : ""].join(" ").trim()
    const query = t.query.length > 140 ? `${t.query.slice(0, 140)}…` : t.query
    const labels = esc(labelSummary(t)).replace(
      /\b([SU])\b|\?/g,
      (m) => `<span class="lab-${m === "?" ? "Q" : m}">${m}</span>`
    )
    const data: Record<string, string> = {
      method: t.method,
      group: t.group,
      id: t.taskId,
      source: t.source,
      query: t.query,
      labels: labelKeys(t),
      score: labelScore(t),
      finish: t.finish ?? "",
      win: winKeys,
      wins: verdicts.length === 0 ? "" : String(won / verdicts.length),
      reason: leadingReason(t),
      calls: n(t.modelCalls),
      tools: n(t.toolCalls),
      tokens: n(t.tokens),
      wall: n(t.wallMs),
      transcript: t.transcript !== undefined && embedded.has(t.transcript) ? t.transcript : "",
      title: `${sources ? `${t.source}: ` : ""}${t.group}/${t.taskId}`,
      text: [t.taskId, t.query, ...t.labels.map((l) => l.reason), ...verdicts.map((v) => v.reason)]
        .join("\n")
        .toLowerCase()
    }
    const attributes = Object.entries(data)
      .map(([k, v]) => ` data-${k}="${esc(v)}"`)
      .join("")
    const id = t.href ? `<a href="${esc(t.href)}">${esc(t.taskId)}</a>` : esc(t.taskId)
    const cells = [
      ...(sources ? [`<td class="long">${esc(t.source)}</td>`] : []),
      `<td class="name"><i class="dot" style="background:${methodColor(t.method)}"></i>${esc(t.method)}</td>`,
      `<td class="name">${esc(t.group)}</td>`,
      `<td class="name">${id}</td>`,
      `<td class="query">${esc(query)}</td>`,
      `<td class="num">${labels}</td>`,
      ...(hasWins ? [`<td class="num">${verdicts.length === 0 ? "-" : esc(verdictSummary(verdicts))}</td>`] : []),
      `<td>${esc(t.finish ?? "-")}</td>`,
      `<td class="reason">${esc(leadingReason(t))}</td>`,
      `<td class="num">${n(t.modelCalls) || "-"}</td>`,
      `<td class="num">${n(t.toolCalls) || "-"}</td>`,
      `<td class="num">${n(t.tokens) || "-"}</td>`,
      `<td class="num">${t.wallMs === undefined ? "-" : (t.wallMs / 1000).toFixed(1)}</td>`
    ]
    return `<tr${attributes}>${labelled(
      cells,
      columns.map(([label]) => label)
    ).join("")}</tr>`
  })
  const templates = [...transcripts]
    .filter(([key]) => embedded.has(key))
    .map(([key, html]) => `<template id="tr-${esc(key)}">${html}</template>`)
  return `<section id="tasks" class="panel"><h2>Tasks</h2><p class="note">${esc(
    "One row per task and method: each judge run's label (S Solved, U Unsolved, ? Unsure, - not judged), the win rounds against each reference (W won, L lost), how it finished and the reason of the first judge run that did not say Solved. Filter, search, sort by a column's heading; a row opens the task's transcripts, every method side by side."
  )}${left > 0 ? ` ${esc(`The transcripts of ${plural(left, "task")} did not fit in this page (${Math.round(budget / 1e6)} MB of transcripts): their rows open the task's own page.`)}` : ""}</p><form class="filters" role="search">${filters.join("")}</form><div class="table-wrap"><table class="tasks cards"><thead><tr>${columns
    .map(
      ([label, key, type]) =>
        `<th${type === "num" ? ' class="num"' : ""}><button type="button" data-sort="${key}" data-type="${type}">${esc(label)}</button></th>`
    )
    .join(
      ""
    )}</tr></thead><tbody>${body.join("")}</tbody></table></div></section><dialog id="task-view" aria-labelledby="task-view-title"><header><h2 id="task-view-title"></h2><button type="button" id="task-view-close">close</button></header><div id="task-view-body"></div></dialog>${templates.join("")}`
}

/** Everything the page may load: its own inline styles, the one script by its hash, nothing from the network. */
const CSP = `default-src 'none'; style-src 'unsafe-inline'; script-src '${EXPLORER_SCRIPT_HASH}'; img-src data:; base-uri 'none'; form-action 'none'`

/** Characters of transcripts a report holds at most (a browser opens a page of some 50 MB without trouble). */
export const TRANSCRIPT_BUDGET = 40_000_000

export interface HtmlOptions {
  readonly title?: string | undefined
  readonly generatedAt?: string | undefined
  /** Every task of the inputs, for the task list. */
  readonly tasks?: ReadonlyArray<ReportTask> | undefined
  /** Each task's transcripts (the methods' columns, escaped HTML), by `ReportTask.transcript`. */
  readonly transcripts?: ReadonlyMap<string, string> | undefined
  /** At most this many characters of transcripts go into the page (default TRANSCRIPT_BUDGET); the other tasks link to their own pages. */
  readonly transcriptBudget?: number | undefined
  /** Intervals, paired comparisons and further sections, when the comparison computes them. */
  readonly statistics?: ReportStatistics | undefined
}

/** The whole report as one HTML document. */
export const renderHtml = (rows: ReadonlyArray<Row>, options: HtmlOptions = {}): string => {
  const title = options.title ?? "smurfs: run comparison"
  const groups = [...new Set(rows.map((r) => r.group))].sort()
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
  const tasks = options.tasks ?? []
  const statsName = namer(rows.filter((r) => r.pass || r.win))
  // tasks a guard of ours ended, not the method (docs/fidelity.md, issue 32 §3), as compare prints them
  const guarded = guardLines(rows)
  const nav = [
    ["runs", "Runs"],
    ["statistics", "Statistics"],
    ...(missing.length > 0 ? [["missing", "Missing work"]] : []),
    ...(guarded.length > 0 ? [["guarded", "Ended by a guard"]] : []),
    ...(sections.length > 0 ? [["charts", "Charts"]] : []),
    ...(tasks.length > 0 ? [["tasks", `Tasks (${tasks.length})`]] : [])
  ]
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<title>${esc(title)}</title><style>${STYLE}${TRAJECTORY_STYLE}</style></head>
<body><main>
<h1>${esc(title)}</h1>
<p class="note">${esc(`${rows.length} rows from ${new Set(rows.map((r) => r.source)).size} source(s)${options.generatedAt ? `, generated ${options.generatedAt}` : ""}. Pass rate and win rate follow StableToolBench's ToolEval.`)}</p>
<nav class="sections">${nav.map(([id, label]) => `<a href="#${id}">${esc(label!)}</a>`).join("")}</nav>
${runsTable(rows, options.statistics)}
${renderStatistics(rows, options.statistics, (r) => `${statsName(r, [1, 2])} · ${r.group}`)}
${missing.length > 0 ? `<section id="missing" class="panel"><h2>Missing work</h2><ul>${missing.map((m) => `<li>${esc(m)}</li>`).join("")}</ul></section>` : ""}
${guarded.length > 0 ? `<section id="guarded" class="panel"><h2>Ended by a guard of ours, not the method</h2><p class="note">${esc("The references have no such bound (docs/fidelity.md): their code would have gone on with these tasks.")}</p><ul>${guarded.map((g) => `<li>${esc(g)}</li>`).join("")}</ul></section>` : ""}
${sections.length > 0 ? `<section id="charts" class="panel"><h2>Charts</h2>${sections.join("\n")}</section>` : ""}
${tasks.length > 0 ? taskExplorer(tasks, options.transcripts ?? new Map(), options.transcriptBudget ?? TRANSCRIPT_BUDGET) : ""}
</main><script>${EXPLORER_SCRIPT}</script></body></html>
`
}
