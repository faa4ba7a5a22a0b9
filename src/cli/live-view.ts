// The live view of `smurfs run`: one readable line (or a few) per run event, as the events arrive.

import { styleText } from "node:util"
import { plural } from "../plural.ts"
import { dataOf, isKind, kindOf, type RunEvent } from "../trace/events.ts"
import { redactText, secretValues } from "../trace/redact.ts"
import { visibleText, visibleValue } from "../trace/visible-text.ts"

/**
 * What a backtrack event says, by who sent it: Smurfs pops a step (fromDepth, toDepth, tool), DFSDT leaves a
 * node (reason, depth), ReAct restarts its chain (reason, attempt).
 */
const backtrackText = (d: Readonly<Record<string, unknown>>): string => {
  const reason = d["reason"] === undefined ? "" : ` (${String(d["reason"]).replace(/_/g, " ")})`
  if (d["fromDepth"] !== undefined)
    return `from depth ${String(d["fromDepth"])} to ${String(d["toDepth"])}; ${String(d["tool"])} excluded there`
  if (d["depth"] !== undefined) return `from depth ${String(d["depth"])}${reason}`
  if (d["attempt"] !== undefined) return `after attempt ${String(d["attempt"])}${reason}`
  return reason.trim() || "(no details)"
}

export interface LiveViewOptions {
  /** Color the output (on when the stream is a terminal and NO_COLOR is unset). */
  readonly color?: boolean | undefined
  /** Longest tool result, thought or answer shown, in characters; the trajectory keeps them whole. */
  readonly maxChars?: number | undefined
  /** Prefix each line of a subtask with its number (subtasks of a graph plan interleave). */
  readonly subtaskTags?: boolean | undefined
}

type Style = Parameters<typeof styleText>[0]

const oneLine = (value: unknown, max: number): string => {
  const text = (typeof value === "string" ? value : (JSON.stringify(value) ?? "")).replace(/\s+/g, " ").trim()
  return text.length > max ? `${text.slice(0, max - 3)}...` : text
}

/** The lines an event shows as; empty for events the view leaves out (model calls, the final answer). */
export const formatEvent = (event: RunEvent, options: LiveViewOptions = {}): Array<string> => {
  const lines = eventLines(event, options)
  // a sub-agent's lines are indented under the call of its tool and carry its name
  const agent = event.agent !== undefined ? `${"  ".repeat(event.agentdepth ?? 1)}${event.agent} > ` : ""
  const tag =
    options.subtaskTags && event.subtask !== undefined && !isKind(event, "subtask_started")
      ? `[${event.subtask + 1}] `
      : ""
  return agent || tag ? lines.map((l) => (l.length > 0 ? `${agent}${tag}${l}` : l)) : lines
}

const eventLines = (event: RunEvent, options: LiveViewOptions): Array<string> => {
  const max = options.maxChars ?? 160
  const paint = (style: Style, text: string) => (options.color ? styleText(style, text) : text)
  const short = (v: unknown) => oneLine(v, max)
  switch (kindOf(event)) {
    case "task_started": {
      const d = dataOf(event, "task_started")
      return [
        paint("bold", `Query: ${String(d.query)}`),
        paint("dim", `model ${String(d.model)}, ${plural(d.tools?.length ?? 0, "tool")}`)
      ]
    }
    case "plan": {
      const d = dataOf(event, "plan")
      const subtasks = d.subtasks ?? []
      const deps = d.dependsOn
      const after = (i: number) =>
        deps?.[i]?.length ? paint("dim", ` (after ${deps[i]!.map((x) => x + 1).join(", ")})`) : ""
      return [
        paint(
          "bold",
          d.planner === false
            ? "Plan (planner off):"
            : deps
              ? "Plan (independent subtasks run at the same time):"
              : "Plan:"
        ),
        ...subtasks.map((s, i) => `  ${i + 1}. ${s}${after(i)}`)
      ]
    }
    case "subtask_started": {
      const d = dataOf(event, "subtask_started")
      return ["", paint(["bold", "cyan"], `Subtask ${Number(d.index) + 1}: ${String(d.subtask)}`)]
    }
    case "retrieval": {
      const d = dataOf(event, "retrieval")
      const names = (d.tools ?? []).map((t) => String(t.name))
      return [
        `  ${paint("dim", `tools retrieved for the ${d.scope === "task" ? "task" : "subtask"} (${String(d.mode)}, top ${String(d.k)}):`)} ${short(names.join(", "))}`
      ]
    }
    case "thought":
      return [`  ${paint("dim", "thought:")} ${short(dataOf(event, "thought").thought)}`]
    case "tool_call": {
      const d = dataOf(event, "tool_call")
      const result = d.ok
        ? paint("green", `ok ${short(d.content)}`)
        : paint("red", `failed: ${short(d.error ?? d.content)}`)
      return [`  ${paint("yellow", "call")} ${String(d.tool)} ${oneLine(d.args, max)}`, `    -> ${result}`]
    }
    case "answer":
      return [`  ${paint("dim", "answer:")} ${short(dataOf(event, "answer").answer)}`]
    case "verdict": {
      const d = dataOf(event, "verdict")
      return d.status === "solved"
        ? [`  ${paint("green", "verifier: solved")} (${short(d.reason)})`]
        : // a verdict without a reason (ours) carries its hint as the reason: said once
          [
            `  ${paint("yellow", "verifier: pending")} (${short(d.reason)})${d.hint && d.hint !== d.reason ? ` hint: ${short(d.hint)}` : ""}`
          ]
    }
    case "backtrack": {
      const d = dataOf(event, "backtrack")
      return [`  ${paint("magenta", "backtrack")} ${backtrackText(d)}`]
    }
    case "guardrail": {
      const d = dataOf(event, "guardrail")
      // a guardrail event arrives once its call has ended, so it can say whether the model recovered
      const outcome =
        d.recovered === true
          ? paint("green", " (recovered)")
          : d.recovered === false
            ? paint("red", " (not recovered)")
            : ""
      return [
        `  ${paint("magenta", `guardrail ${String(d.guardrail)}`)} (${String(d.role)}): ${short(d.error)}${outcome}`
      ]
    }
    case "error": {
      const d = dataOf(event, "error")
      // a retrieval that found no tool and fell back is a warning: the run goes on with the fallback's tools
      if (d.tag === "NoToolRetrieved") return [`  ${paint("yellow", "warning")}: ${short(d.error ?? d.message)}`]
      // ReAct and DFSDT record a failed model call by its tag and message, without a role
      return [`  ${paint("red", `${d.role ?? "model call"} failed`)}: ${short(d.error ?? d.message)}`]
    }
    case "ask_user": {
      const d = dataOf(event, "ask_user")
      return [
        `  ${paint("yellow", "asked the person")}: ${short(d.question)} -> ${d.reply !== undefined ? short(d.reply) : paint("red", String(d.error))}`
      ]
    }
    case "plan_invalid":
      return [
        `  ${paint("magenta", "plan")}: ${short(dataOf(event, "plan_invalid").error)}; running the subtasks one after another`
      ]
    case "subtask_answered": {
      const d = dataOf(event, "subtask_answered")
      if (d.available === false)
        return [`  ${paint("red", `subtask ${Number(d.index) + 1} unavailable`)}: ${short(d.reason)}`]
      return [
        `  ${paint("bold", "=")} ${short(d.answer) || "(no answer)"}${d.source === "step_limit" ? paint("dim", " (step limit: answered from memory)") : ""}`
      ]
    }
    case "give_up":
      return ["", paint("red", `Gave up: ${String(dataOf(event, "give_up").reason)}`)]
    default:
      return []
  }
}

/**
 * A listener for `smurfs({ onEvent })` that writes each event's lines, with secrets redacted (a tool or
 * model may echo a key) and control characters from the data made visible (an answer may hold ESC
 * sequences); the view's own colors stay.
 */
export const liveView = (write: (line: string) => void, options: LiveViewOptions = {}) => {
  const secrets = secretValues()
  let subtaskTags = options.subtaskTags
  return (event: RunEvent): void => {
    if (isKind(event, "plan") && event.agent === undefined)
      subtaskTags = options.subtaskTags ?? dataOf(event, "plan").dependsOn !== undefined
    // most events (model calls) show nothing: only the shown ones pay for the copy
    if (formatEvent(event, { ...options, subtaskTags }).length === 0) return
    const shown = {
      ...event,
      data: visibleValue(event.data),
      ...(event.agent !== undefined ? { agent: visibleText(event.agent) } : {})
    } as RunEvent
    for (const line of formatEvent(shown, { ...options, subtaskTags })) write(redactText(line, secrets))
  }
}
