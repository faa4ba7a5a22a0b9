// A τ² conversation as `smurfs show` prints it in a terminal: the messages in order with the agent's tool calls, their
// results cut short and the entries they wrote, then how it ended, the reward and the fields that differ from the gold
// state. Text from the record: control characters are shown by the caller (visibleText), never obeyed.
import { isSuccess, Tau2RecordData } from "./transcript.ts"

const cut = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** The conversation's lines, or none when the record is not a τ² conversation; `full` keeps results whole. */
export const conversationLines = (record: { readonly benchmark?: unknown }, full = false): Array<string> => {
  const parsed = Tau2RecordData.safeParse(record.benchmark)
  if (!parsed.success) return []
  const d = parsed.data
  const max = full ? Number.MAX_SAFE_INTEGER : 160
  const lines = ["Conversation:"]
  for (const m of d.messages) {
    if (m.role === "user") lines.push(`  user: ${cut(m.content, max)}`)
    else if (m.role === "assistant") {
      if (m.content) lines.push(`  agent: ${cut(m.content, max)}`)
      for (const c of m.toolCalls ?? []) lines.push(`  agent calls ${c.name} ${cut(JSON.stringify(c.arguments), max)}`)
    } else {
      lines.push(`    -> ${m.error ? "failed: " : ""}${cut(m.content, max)}`)
      for (const w of m.writes ?? []) lines.push(`    wrote ${w.table}/${w.key}`)
    }
  }
  const parts = Object.entries(d.reward.breakdown ?? {}).map(([k, v]) => `${k} ${v}`)
  lines.push(
    `Reward ${d.reward.reward}${parts.length > 0 ? ` (${parts.join(", ")})` : ""}${isSuccess(d.reward.reward) ? "" : ": not solved"}; ended: ${d.termination}${d.terminationDetail ? ` (${d.terminationDetail})` : ""}`
  )
  for (const note of d.reward.notes ?? []) lines.push(`  ${note}`)
  if (d.goldDiff !== undefined)
    lines.push(
      d.goldDiff.length === 0
        ? "Database: equals the gold state"
        : `Database: ${d.goldDiff.length} ${d.goldDiff.length === 1 ? "field differs" : "fields differ"} from the gold state`,
      ...d.goldDiff.map(
        (c) =>
          `  ${c.path.join(".")}: gold ${cut(JSON.stringify(c.gold), max)}, final ${cut(JSON.stringify(c.actual), max)}`
      )
    )
  return lines
}
