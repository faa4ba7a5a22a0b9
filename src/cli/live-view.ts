// The live view of `smurfs run`: one readable line (or a few) per run event, as the events arrive.
import { styleText } from "node:util"
import type { RunEvent } from "../trace/events.ts"
import { redactText, secretValues } from "../trace/redact.ts"
import { kindOf } from "../trace/events.ts"

export interface LiveViewOptions {
  /** Color the output (on when the stream is a terminal and NO_COLOR is unset). */
  readonly color?: boolean | undefined
  /** Longest tool result, thought or answer shown, in characters; the trajectory keeps them whole. */
  readonly maxChars?: number | undefined
}

type Style = Parameters<typeof styleText>[0]

const oneLine = (value: unknown, max: number): string => {
  const text = (typeof value === "string" ? value : JSON.stringify(value) ?? "").replace(/\s+/g, " ").trim()
  return text.length > max ? `${text.slice(0, max - 3)}...` : text
}

/** The lines an event shows as; empty for events the view leaves out (model calls, the final answer). */
export const formatEvent = (event: RunEvent, options: LiveViewOptions = {}): Array<string> => {
  const max = options.maxChars ?? 160
  const paint = (style: Style, text: string) => (options.color ? styleText(style, text) : text)
  const d = event.data as Record<string, unknown>
  const short = (v: unknown) => oneLine(v, max)
  switch (kindOf(event)) {
    case "task_started":
      return [paint("bold", `Query: ${String(d["query"])}`), paint("dim", `model ${String(d["model"])}, ${(d["tools"] as unknown[] | undefined)?.length ?? 0} tools`)]
    case "plan": {
      const subtasks = (d["subtasks"] as string[] | undefined) ?? []
      return [paint("bold", d["planner"] === false ? "Plan (planner off):" : "Plan:"), ...subtasks.map((s, i) => `  ${i + 1}. ${s}`)]
    }
    case "subtask_started":
      return ["", paint(["bold", "cyan"], `Subtask ${Number(d["index"]) + 1}: ${String(d["subtask"])}`)]
    case "thought":
      return [`  ${paint("dim", "thought:")} ${short(d["thought"])}`]
    case "tool_call": {
      const result = d["ok"] ? paint("green", `ok ${short(d["content"])}`) : paint("red", `failed: ${short(d["error"] ?? d["content"])}`)
      return [`  ${paint("yellow", "call")} ${String(d["tool"])} ${oneLine(d["args"], max)}`, `    -> ${result}`]
    }
    case "answer":
      return [`  ${paint("dim", "answer:")} ${short(d["answer"])}`]
    case "verdict":
      return d["status"] === "solved"
        ? [`  ${paint("green", "verifier: solved")} (${short(d["reason"])})`]
        : [`  ${paint("yellow", "verifier: pending")} (${short(d["reason"])})${d["hint"] ? ` hint: ${short(d["hint"])}` : ""}`]
    case "backtrack":
      return [`  ${paint("magenta", "backtrack")} from depth ${String(d["fromDepth"])} to ${String(d["toDepth"])}; ${String(d["tool"])} excluded there`]
    case "guardrail": {
      // a guardrail event arrives once its call has ended, so it can say whether the model recovered
      const outcome = d["recovered"] === true ? paint("green", " (recovered)") : d["recovered"] === false ? paint("red", " (not recovered)") : ""
      return [`  ${paint("magenta", `guardrail ${String(d["guardrail"])}`)} (${String(d["role"])}): ${short(d["error"])}${outcome}`]
    }
    case "error":
      return [`  ${paint("red", `${String(d["role"])} failed`)}: ${short(d["error"])}`]
    case "subtask_answered":
      return [`  ${paint("bold", "=")} ${short(d["answer"]) || "(no answer)"}${d["source"] === "step_limit" ? paint("dim", " (step limit: answered from memory)") : ""}`]
    case "give_up":
      return ["", paint("red", `Gave up: ${String(d["reason"])}`)]
    default:
      return []
  }
}

/** A listener for `smurfs({ onEvent })` that writes each event's lines, with secrets redacted (a tool or model may echo a key). */
export const liveView = (write: (line: string) => void, options: LiveViewOptions = {}) => {
  const secrets = secretValues()
  return (event: RunEvent): void => {
    for (const line of formatEvent(event, options)) write(redactText(line, secrets))
  }
}
