// Context budget: counts tokens and trims what goes into a prompt so no prompt exceeds the model's context.
import type { GenerateRequest, Message } from "../llm/language-model.ts"
import { estimateTokens } from "../llm/scripted.ts"
import { NO_STEPS, renderFolded, renderStep } from "./render.ts"
import type { Step } from "./step.ts"

export interface ContextBudgetOptions {
  /** The model's context window in tokens (the LanguageModel's `info.contextTokens`). */
  readonly contextTokens: number
  /** Tokens kept free for the reply; prompts get `contextTokens - reserveTokens`. */
  readonly reserveTokens?: number | undefined
  /**
   * Token counter. The default estimates 4 characters a token until the server reports usage, then
   * the fewest characters a token any reply showed (see `calibrate`); plug gpt-tokenizer's
   * `countTokens` for exact counts.
   */
  readonly countTokens?: ((text: string) => number) | undefined
  /** Largest tool observation, in tokens, before it is cut (also capped to a quarter of the prompt room). */
  readonly maxObservationTokens?: number | undefined
}

export const budgetDefaults = {
  reserveTokens: 1024,
  charsPerToken: 4,
  countTokens: estimateTokens,
  maxObservationTokens: 1024
} as const

const TRUNCATED = " ...[truncated]"

/** Calibration ignores prompts shorter than this: the chat template's own tokens would dominate them. */
const MIN_CALIBRATION_CHARS = 400

export class ContextBudget {
  /** The model's whole context window, prompt and reply. */
  readonly contextTokens: number
  readonly promptTokens: number
  readonly count: (text: string) => number
  readonly maxObservationTokens: number
  /** Characters a token, for the default counter; lowered by what the server reports. */
  charsPerToken: number = budgetDefaults.charsPerToken
  /** Warnings already given for this task (a cut query is reported once, not on every call). */
  readonly warned = new Set<string>()

  constructor(options: ContextBudgetOptions) {
    const reserve = Math.min(
      options.reserveTokens ?? budgetDefaults.reserveTokens,
      Math.floor(options.contextTokens / 2)
    )
    this.contextTokens = options.contextTokens
    this.promptTokens = Math.max(1, options.contextTokens - reserve)
    this.count = options.countTokens ?? ((text) => Math.ceil(text.length / this.charsPerToken))
    this.maxObservationTokens = Math.min(
      options.maxObservationTokens ?? budgetDefaults.maxObservationTokens,
      Math.floor(this.promptTokens / 4)
    )
  }

  /**
   * Learn the model's characters a token from a reply's reported usage: `promptChars` characters of
   * messages became `promptTokens` tokens. The estimate only ever gets more cautious (the chat
   * template's tokens make the ratio low, which errs on the safe side). No effect with a custom counter.
   */
  calibrate(promptChars: number, promptTokens: number): void {
    if (promptTokens <= 0 || promptChars < MIN_CALIBRATION_CHARS) return
    this.charsPerToken = Math.max(1, Math.min(this.charsPerToken, promptChars / promptTokens))
  }

  /** Cut `text` to at most `maxTokens`, keeping its start (or its end, for the latest context). */
  truncate(text: string, maxTokens: number, keep: "start" | "end" = "start"): string {
    if (this.count(text) <= maxTokens) return text
    if (maxTokens <= this.count(TRUNCATED)) return ""
    // Shrink proportionally, then step down until the counter agrees: works for any tokenizer.
    let chars = Math.floor((text.length * maxTokens) / this.count(text))
    for (;;) {
      const cut =
        keep === "start" ? text.slice(0, chars) + TRUNCATED : `${TRUNCATED.trim()} ${text.slice(text.length - chars)}`
      if (this.count(cut) <= maxTokens || chars === 0) return cut
      chars = Math.floor(chars * 0.9)
    }
  }

  /**
   * An agent's own free text (a subtask, thought, hint, answer) cut to a quarter of the prompt room.
   * Such text reaches later prompts whole, so one runaway reply (a model that writes a megabyte)
   * would otherwise push every later prompt past the context window.
   */
  agentText(text: string): string {
    return this.truncate(text, Math.floor(this.promptTokens / 4))
  }

  /** A tool observation cut to the observation limit. */
  observation(text: string): string {
    return this.truncate(text, this.maxObservationTokens)
  }

  /**
   * The reply tokens a prompt of `text` leaves in the whole window, at least the reserve the budget keeps: what vLLM
   * allows a request that sets no max_tokens, as the Smurfs authors' client sent it.
   */
  replyRoom(text: string): number {
    return Math.max(this.contextTokens - this.promptTokens, this.contextTokens - this.count(text))
  }

  /** Tokens left for changing content once the fixed parts of a prompt are counted. */
  room(...fixed: ReadonlyArray<string>): number {
    return this.promptTokens - fixed.reduce((n, t) => n + this.count(t), 0)
  }

  /** Tokens of a message as sent: its text and the tool calls it carries. */
  messageTokens(message: Message): number {
    return (
      this.count(message.content) +
      (message.toolCalls && message.toolCalls.length > 0 ? this.count(toolCallsText(message.toolCalls)) : 0)
    )
  }

  /**
   * A conversation that fits the prompt beside `sentTokens` (the tools or schema sent with it): the
   * first `keep` messages (the task) stay whole; later texts (observations, thoughts) are cut, largest
   * first, keeping their start. A ReAct chain's conversation grows with every step; this bounds it.
   */
  conversation(messages: ReadonlyArray<Message>, keep: number, sentTokens: number): Array<Message> {
    const out = [...messages]
    for (;;) {
      const over = sentTokens + out.reduce((n, m) => n + this.messageTokens(m), 0) - this.promptTokens
      if (over <= 0) return out
      let largest = -1
      for (let i = keep; i < out.length; i++)
        if (largest < 0 || this.count(out[i]!.content) > this.count(out[largest]!.content)) largest = i
      const tokens = largest < 0 ? 0 : this.count(out[largest]!.content)
      if (tokens === 0) return out // only the task and tool calls left: nothing of ours to cut
      out[largest] = { ...out[largest]!, content: this.truncate(out[largest]!.content, Math.max(0, tokens - over)) }
    }
  }

  /**
   * Memory text for a prompt with `room` tokens to spare: every step in full when it fits, else the
   * oldest steps folded into a one-line-per-step summary (as few as needed), else the summary's end.
   */
  steps(steps: ReadonlyArray<Step>, room: number): string {
    if (steps.length === 0) return NO_STEPS
    for (let folded = 0; folded <= steps.length; folded++) {
      const parts = folded > 0 ? [renderFolded(steps.slice(0, folded))] : []
      for (let i = folded; i < steps.length; i++) parts.push(renderStep(steps[i]!, i))
      const text = parts.join("\n")
      if (this.count(text) <= room) return text
      if (folded === steps.length) return this.truncate(text, Math.max(0, room), "end")
    }
    return NO_STEPS
  }
}

/**
 * A message's tool calls as JSON, written once: a chain's conversation is measured again on every step,
 * and its messages (and their calls) are never changed once made.
 */
const toolCallsTexts = new WeakMap<object, string>()
const toolCallsText = (calls: NonNullable<Message["toolCalls"]>): string => {
  let text = toolCallsTexts.get(calls)
  if (text === undefined) toolCallsTexts.set(calls, (text = JSON.stringify(calls)))
  return text
}

/** The characters of a request as the server tokenizes them (messages with their tool calls, and the schema or tools it carries), for `calibrate`. */
export const requestChars = (request: GenerateRequest): number =>
  request.messages.reduce(
    (n, m) => n + m.content.length + (m.toolCalls && m.toolCalls.length > 0 ? toolCallsText(m.toolCalls).length : 0),
    0
  ) +
  (request.format ? jsonChars(request.format) : 0) +
  (request.tools && request.tools.length > 0 ? jsonChars(request.tools) : 0)

/**
 * A request's tools and format are built once and sent with every call of a task (a ToolBench task's
 * tools run to many kilobytes): their length is measured once. They are shared and never mutated.
 */
const jsonLengths = new WeakMap<object, number>()
const jsonChars = (value: object): number => {
  const known = jsonLengths.get(value)
  if (known !== undefined) return known
  const chars = JSON.stringify(value).length
  jsonLengths.set(value, chars)
  return chars
}
