// One task's trajectory as one self-contained HTML page (`show --html`, the pages `compare --html` links to): labels and reasons, each step collapsible with its full tool response and the prompt the model saw, methods side by side.

import type { TaskLabel } from "../../bench/report/results.ts"
import { methodColor } from "../../bench/report/svg.ts"
import { TRAJECTORY_STYLE } from "../../bench/report/transcript-style.ts"
import type { TaskVerdict } from "../../bench/report/verdicts.ts"
import { plural } from "../plural.ts"
import { dataOf, isKind, kindOf } from "../trace/events.ts"
import type { RunEvent, Totals } from "../trace/record.ts"
import { redactText, secretValues } from "../trace/redact.ts"
import { visibleText } from "../trace/visible-text.ts"
import { formatEvent } from "./live-view.ts"

/** One method's run of the task, as the page shows it. */
export interface TrajectoryView {
  /** The heading: method, group and id (or the trajectory file's name). */
  readonly label: string
  /** Colours the column (a method keeps its colour in every page and report). */
  readonly method?: string | undefined
  readonly query?: string | undefined
  readonly events: ReadonlyArray<RunEvent>
  readonly finalAnswer?: string | undefined
  readonly finishType?: string | undefined
  readonly totals?: Partial<Totals> | undefined
  /** Every judge run's label of this task (none when it was not judged). */
  readonly labels?: ReadonlyArray<TaskLabel> | undefined
  /** Every win-rate round of this method's answer against a reference (none when it was not compared). */
  readonly verdicts?: ReadonlyArray<TaskVerdict> | undefined
  /** A benchmark's own view of the task, as HTML it escaped itself (τ²: the conversation and the database against the gold state). */
  readonly benchmarkHtml?: string | undefined
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** Text from a record, as the page shows it: secrets redacted (a tool may have echoed a key), control characters made visible, then escaped. */
const shown = (text: string, secrets: ReadonlyArray<string>) => escapeHtml(redactText(visibleText(text), secrets))

/** A step's look, from the words the live view starts its first line with. */
const classOf = (line: string): string => {
  const t = line.trim()
  if (/^(Query|Plan|Subtask \d+|Answer):?/.test(t)) return "head"
  if (t.startsWith("call ")) return "call"
  if (t.startsWith("-> failed") || t.startsWith("Gave up") || / failed:/.test(t)) return "fail"
  if (t.startsWith("verifier:")) return "verdict"
  if (t.startsWith("backtrack") || t.startsWith("guardrail")) return "back"
  return "text"
}

const PAGE_STYLE = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; color: #1f2430; background: #fafbfc; margin: 0; }
main { max-width: 1500px; margin: 0 auto; padding: 20px 16px 40px; }
h1 { font-size: 20px; margin: 0 0 8px; overflow-wrap: anywhere; }
a { color: #2f5fa5; }
`

/** The judge runs' labels and reasons of one method's run. */
const labelsTable = (labels: ReadonlyArray<TaskLabel>, secrets: ReadonlyArray<string>): string => {
  if (labels.length === 0)
    return `<p class="muted">Not judged yet (\`smurfs eval --run &lt;dir&gt; --judge &lt;spec&gt;\` labels it).</p>`
  const judges = new Set(labels.map((l) => l.judge)).size > 1
  return `<table class="labels"><colgroup>${judges ? '<col class="narrow">' : ""}<col class="tiny"><col class="narrow"><col></colgroup><thead><tr>${judges ? "<th>judge</th>" : ""}<th>run</th><th>label</th><th>reason</th></tr></thead><tbody>${labels
    .map(
      (l) =>
        `<tr>${judges ? `<td>${shown(l.judge, secrets)}</td>` : ""}<td>${l.run}</td><td class="${l.label}">${l.label}</td><td>${shown(l.reason, secrets)}</td></tr>`
    )
    .join("")}</tbody></table>`
}

/** The win-rate rounds of one method's answer against each reference, with the judge's reasons. */
const verdictsTable = (verdicts: ReadonlyArray<TaskVerdict>, secrets: ReadonlyArray<string>): string => {
  if (verdicts.length === 0) return ""
  const judges = new Set(verdicts.map((v) => v.judge)).size > 1
  return `<h3>Win rounds</h3><table class="labels verdicts"><colgroup>${judges ? '<col class="narrow">' : ""}<col class="narrow"><col class="short"><col></colgroup><thead><tr>${judges ? "<th>judge</th>" : ""}<th>round</th><th>verdict</th><th>reason</th></tr></thead><tbody>${verdicts
    .map(
      (v) =>
        `<tr>${judges ? `<td>${shown(v.judge, secrets)}</td>` : ""}<td>${v.round} <span class="muted">vs ${shown(v.referenceMethod, secrets)}</span></td><td class="${v.outcome}">${v.outcome}${v.stage === "judge" ? "" : ` <span class="muted">(${shown(v.stage, secrets)})</span>`}</td><td>${shown(v.reason, secrets)}</td></tr>`
    )
    .join("")}</tbody></table>`
}

const pre = (text: string, secrets: ReadonlyArray<string>) => `<pre>${shown(text, secrets)}</pre>`

/** What a step holds beyond its line: a tool call's arguments and whole response; a model call's prompt and reply (recorded with --full-trace). */
const stepBody = (event: RunEvent, secrets: ReadonlyArray<string>): string => {
  if (isKind(event, "tool_call")) {
    const d = dataOf(event, "tool_call")
    return [
      `<div class="role">arguments</div>${pre(JSON.stringify(d.args ?? {}, null, 2), secrets)}`,
      `<div class="role">${d.ok ? "response" : "error"}${d.cached ? " (cached)" : ""}${d.missed ? " (no recording, no simulator)" : ""}</div>${pre(d.ok ? (d.content ?? "") : [d.error ?? "", d.content ?? ""].filter(Boolean).join("\n"), secrets)}`
    ].join("")
  }
  if (isKind(event, "model_call")) {
    const d = dataOf(event, "model_call")
    const messages = d.messages ?? []
    return [
      messages.length === 0
        ? ""
        : `<details class="prompt"><summary>the prompt the model saw (${plural(messages.length, "message")})</summary>${messages.map((m) => `<div class="role">${shown(m.role, secrets)}</div>${pre(m.content, secrets)}`).join("")}</details>`,
      d.reply !== undefined ? `<div class="role">reply</div>${pre(d.reply, secrets)}` : ""
    ].join("")
  }
  return ""
}

/** The steps of a run: each event the live view shows, collapsible, with what it holds in full; model calls when their prompt was kept. */
const steps = (events: ReadonlyArray<RunEvent>, secrets: ReadonlyArray<string>, hasQuery: boolean): string => {
  const out: Array<string> = []
  for (const event of events) {
    if (isKind(event, "model_call")) {
      const d = dataOf(event, "model_call")
      if (!d.messages?.length && d.reply === undefined) continue
      out.push(
        `<details class="step model"><summary>model call: ${shown(String(d.role ?? ""), secrets)}, ${plural((d.promptTokens ?? 0) + (d.completionTokens ?? 0), "token")}</summary>${stepBody(event, secrets)}</details>`
      )
      continue
    }
    // the header shows the query already
    if (hasQuery && isKind(event, "task_started")) continue
    const lines = formatEvent(event, { maxChars: 160 }).filter((l) => l.trim() !== "")
    if (lines.length === 0) continue
    const body = stepBody(event, secrets)
    // opened, a step shows its text whole (a thought, an answer); a tool call's "-> ok ..." line is its response cut short: the body has it whole
    const whole = formatEvent(event, { maxChars: Number.MAX_SAFE_INTEGER }).filter((l) => l.trim() !== "")
    const cut = whole.join("\n") !== lines.join("\n")
    const rest = isKind(event, "tool_call")
      ? ""
      : cut
        ? pre(whole.map((l) => l.trim()).join("\n"), secrets)
        : lines
            .slice(1)
            .map((l) => pre(l, secrets))
            .join("")
    const look = lines.some((l) => classOf(l) === "fail") ? "fail" : classOf(lines[0]!)
    out.push(
      `<details class="step ${look} ${escapeHtml(kindOf(event))}"><summary>${shown(lines[0]!.trim(), secrets)}</summary>${rest}${body || (rest ? "" : '<p class="muted">(nothing more recorded)</p>')}</details>`
    )
  }
  return out.join("\n")
}

const totalsLine = (t: Partial<Totals>) =>
  `${plural(t.modelCalls ?? 0, "model call")}, ${plural((t.promptTokens ?? 0) + (t.completionTokens ?? 0), "token")}, ${plural(t.toolCalls ?? 0, "tool call")}, ${plural(t.backtracks ?? 0, "backtrack")}, ${((t.wallMs ?? 0) / 1000).toFixed(1)} s`

const column = (v: TrajectoryView, secrets: ReadonlyArray<string>): string => {
  const answered = v.finishType === "give_answer" || (v.finalAnswer && !v.events.some((e) => kindOf(e) === "give_up"))
  return [
    `<section class="method" style="--method:${methodColor(v.method ?? v.label)}">`,
    `<h2>${shown(v.label, secrets)}</h2>`,
    v.query !== undefined ? `<div class="query"><b>Query:</b> ${shown(v.query, secrets)}</div>` : "",
    labelsTable(v.labels ?? [], secrets),
    verdictsTable(v.verdicts ?? [], secrets),
    `<div class="answer"><b>${answered ? "Answer" : `Finished: ${shown(v.finishType ?? "", secrets)}`}</b>${answered ? `: ${shown(v.finalAnswer ?? "", secrets)}` : ""}</div>`,
    v.totals ? `<p class="totals">${totalsLine(v.totals)}</p>` : "",
    v.benchmarkHtml ?? "",
    `<div class="steps">${steps(v.events, secrets, v.query !== undefined)}</div>`,
    "</section>"
  ].join("\n")
}

/** The methods' columns of one task (side by side on a wide screen, one under another on a narrow one), every text escaped. */
export const renderTrajectoryColumns = (views: ReadonlyArray<TrajectoryView>): string => {
  const secrets = secretValues()
  return `<div class="cols">${views.map((v) => column(v, secrets)).join("\n")}</div>`
}

/** The page: one column per method (side by side on a wide screen, one under another on a narrow one). */
export const renderTrajectoryPage = (
  views: ReadonlyArray<TrajectoryView>,
  options: { title?: string; back?: string } = {}
): string => {
  const secrets = secretValues()
  const title = options.title ?? "smurfs show"
  return [
    "<!doctype html>",
    `<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${shown(title, secrets)}</title><style>${PAGE_STYLE}${TRAJECTORY_STYLE}</style></head>`,
    "<body><main>",
    options.back !== undefined ? `<p><a href="${escapeHtml(options.back)}">&larr; the report</a></p>` : "",
    `<h1>${shown(title, secrets)}</h1>`,
    renderTrajectoryColumns(views),
    "</main></body></html>",
    ""
  ].join("\n")
}
