// A τ² conversation as the transcript pages show it (`compare --html`, `show --html`, `smurfs view`): every message in
// order, the agent's tool calls with their arguments, results and database writes, how it ended, the reward with its
// components, and the database against the gold state, field by field. Every text is escaped.
import { redactText, secretValues } from "../../../src/trace/redact.ts"
import { visibleText } from "../../../src/trace/visible-text.ts"
import { fieldDiff } from "./db-writes.ts"
import { type DbChange, type DbWrite, isSuccess, Tau2RecordData } from "./transcript.ts"

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const json = (value: unknown) => JSON.stringify(value, null, 2) ?? "null"

const STYLE = `
.tau2 .msg { border-left: 3px solid #c9d1dc; margin: 6px 0; padding: 4px 10px; white-space: pre-wrap; overflow-wrap: anywhere; }
.tau2 .msg.user { border-color: #8a63d2; background: #f6f2fd; }
.tau2 .msg.assistant { border-color: #2f5fa5; background: #f1f5fb; }
.tau2 .msg.tool { border-color: #7a8699; background: #f7f8fa; }
.tau2 .msg.tool.error { border-color: #c0392b; background: #fdf1f0; }
.tau2 .who { font-size: 12px; color: #5b6474; font-weight: 600; }
.tau2 .write, .tau2 .diff td { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
.tau2 table.diff { border-collapse: collapse; margin: 6px 0; }
.tau2 table.diff td, .tau2 table.diff th { border: 1px solid #dde2ea; padding: 2px 6px; vertical-align: top; text-align: left; }
.tau2 .gold { color: #1e7d45; } .tau2 .final { color: #b03a2e; }
.tau2 .reward.ok { color: #1e7d45; } .tau2 .reward.bad { color: #b03a2e; }
`

/** The fields a tool call's writes changed, as rows: table/key, field, and the value before and after. */
const diffRows = (writes: ReadonlyArray<DbWrite>, before: string, after: string, show: (t: string) => string) =>
  `<table class="diff"><thead><tr><th>entry</th><th>field</th><th>${before}</th><th>${after}</th></tr></thead><tbody>${writes
    .flatMap((w) =>
      fieldDiff(w.before, w.after).map(
        (f) =>
          `<tr><td>${show(`${w.table}/${w.key}`)}</td><td>${show(f.path || "(whole entry)")}</td><td class="gold">${show(json(f.before))}</td><td class="final">${show(json(f.after))}</td></tr>`
      )
    )
    .join("")}</tbody></table>`

/** Where the final database differs from the gold one: table/key, field, and each side's value. */
const changeRows = (changes: ReadonlyArray<DbChange>, show: (t: string) => string) =>
  `<table class="diff"><thead><tr><th>entry</th><th>field</th><th>gold</th><th>final</th></tr></thead><tbody>${changes
    .map(
      (c) =>
        `<tr><td>${show(c.path.slice(0, 2).join("/"))}</td><td>${show(c.path.slice(2).join(".") || "(whole entry)")}</td><td class="gold">${show(json(c.gold))}</td><td class="final">${show(json(c.actual))}</td></tr>`
    )
    .join("")}</tbody></table>`

/**
 * The conversation section of a record's page, or "" when the record is not a τ² conversation.
 */
export const conversationHtml = (record: { readonly benchmark?: unknown }): string => {
  const parsed = Tau2RecordData.safeParse(record.benchmark)
  if (!parsed.success) return ""
  const d = parsed.data
  const secrets = secretValues()
  const show = (text: string) => escapeHtml(redactText(visibleText(text), secrets))
  const messages = d.messages.map((m) => {
    if (m.role === "user") return `<div class="msg user"><div class="who">user</div>${show(m.content)}</div>`
    if (m.role === "assistant") {
      const calls = (m.toolCalls ?? [])
        .map((c) => `<details><summary>call ${show(c.name)}</summary><pre>${show(json(c.arguments))}</pre></details>`)
        .join("")
      return `<div class="msg assistant"><div class="who">agent</div>${m.content ? show(m.content) : ""}${calls}</div>`
    }
    const writes = (m.writes ?? []).length
    return `<div class="msg tool${m.error ? " error" : ""}"><div class="who">${show(m.name)} ${m.error ? "failed" : "returned"}${writes > 0 ? `, wrote ${writes} ${writes === 1 ? "entry" : "entries"}` : ""}</div><details><summary>${show(m.content.slice(0, 160))}</summary><pre>${show(m.content)}</pre></details>${writes > 0 ? diffRows(m.writes!, "before", "after", show) : ""}</div>`
  })
  const r = d.reward
  const parts = Object.entries(r.breakdown ?? {})
    .map(([k, v]) => `${show(k)} ${v}`)
    .join(", ")
  const gold =
    d.goldDiff === undefined
      ? "<p>No gold state (the task has no evaluation criteria).</p>"
      : d.goldDiff.length === 0
        ? `<p class="reward ok">The final database equals the gold state (hash ${show(d.dbHash ?? "")}).</p>`
        : `<p class="reward bad">The final database differs from the gold state in ${d.goldDiff.length} ${d.goldDiff.length === 1 ? "field" : "fields"} (gold hash ${show(d.goldHash ?? "")}, final ${show(d.dbHash ?? "")}):</p>${changeRows(d.goldDiff, show)}`
  return [
    `<style>${STYLE}</style>`,
    '<div class="tau2">',
    `<h3>Conversation</h3>`,
    `<p class="reward ${isSuccess(r.reward) ? "ok" : "bad"}"><b>Reward ${r.reward}</b>${parts ? ` (${parts})` : ""} · ended: ${show(d.termination)}${d.terminationDetail ? ` (${show(d.terminationDetail)})` : ""} · ${d.steps} steps, ${d.toolErrors} failed tool calls · user: ${show(d.userModel)}</p>`,
    (r.notes ?? []).length > 0 ? `<ul>${r.notes!.map((n) => `<li>${show(n)}</li>`).join("")}</ul>` : "",
    messages.join("\n"),
    "<h3>Database against the gold state</h3>",
    gold,
    "</div>"
  ].join("\n")
}
