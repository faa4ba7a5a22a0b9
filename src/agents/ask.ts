// One agent call: render its template, fit the changing parts into the context budget, ask for a typed object.
import { Effect } from "effect"
import type { z } from "zod"
import type { Message } from "../llm/language-model.ts"
import { generateObject, type ObjectRequest } from "../llm/structured.ts"
import type { ContextBudget } from "../memory/context-budget.ts"
import type { BudgetExhausted } from "./errors.ts"
import { renderTemplate } from "./prompt-template.ts"
import type { GuardrailOptions } from "./smurfs-options.ts"

/** What every agent call needs from its pipeline. */
export interface AgentContext {
  readonly budget: ContextBudget
  readonly guardrails: GuardrailOptions
  /** Fails once the task's model-call budget is spent; checked before each agent call. */
  readonly charge: Effect.Effect<void, BudgetExhausted>
}

export interface AskRequest<A> {
  readonly role: string
  /** Template name in prompts/. */
  readonly template: string
  readonly values: Readonly<Record<string, string | number>>
  /** Placeholders whose text is trimmed to the tokens the rest of the prompt leaves; they share the room equally. */
  readonly fit?: Readonly<Record<string, (room: number) => string>> | undefined
  readonly schema: z.ZodType<A>
  readonly check?: ObjectRequest<A>["check"]
  /**
   * Cut every string of the reply to the budget's agent-text limit (default on). Off for tool
   * arguments, which go to the tool exactly as the model wrote them.
   */
  readonly clipText?: boolean | undefined
  /**
   * A tool's response for this agent to read. It goes to the model as data, never as instructions:
   * an assistant message with the call, then a `tool` message whose text is the fitted placeholder
   * `response` (a key of `fit`), before the user part.
   */
  readonly toolResult?: { readonly tool: string; readonly args: Record<string, unknown>; readonly response: string } | undefined
}

/** A copy of a parsed reply with each string passed through `clip`. */
const clipStrings = <A>(value: A, clip: (text: string) => string): A => {
  const walk = (v: unknown): unknown =>
    typeof v === "string" ? clip(v) : Array.isArray(v) ? v.map(walk) : v !== null && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)])) : v
  return walk(value) as A
}

/** Render a template's system and user parts with the fitted parts trimmed to the budget. */
export const renderFitted = (budget: ContextBudget, template: string, values: AskRequest<unknown>["values"], fit: AskRequest<unknown>["fit"] = {}) => {
  const keys = Object.keys(fit)
  const blank = renderTemplate(template, { ...values, ...Object.fromEntries(keys.map((k) => [k, ""])) })
  const share = Math.floor(budget.room(blank.system, blank.user) / Math.max(1, keys.length))
  const fitted = Object.fromEntries(keys.map((k) => [k, fit[k]!(share)]))
  return { ...renderTemplate(template, { ...values, ...fitted }), fitted }
}

const TOOL_CALL_ID = "call_0"

/** The call and its response as the two messages a chat model expects for tool results. */
const toolResultMessages = (result: NonNullable<AskRequest<unknown>["toolResult"]>, content: string): Array<Message> => [
  { role: "assistant", content: "", toolCalls: [{ id: TOOL_CALL_ID, name: result.tool, arguments: result.args }] },
  { role: "tool", content, toolCallId: TOOL_CALL_ID, toolName: result.tool }
]

export const ask = <A>(ctx: AgentContext, request: AskRequest<A>) =>
  Effect.gen(function* () {
    yield* ctx.charge
    const prompt = renderFitted(ctx.budget, request.template, request.values, request.fit)
    const result = yield* generateObject({
      role: request.role,
      schema: request.schema,
      check: request.check,
      maxReflections: ctx.guardrails.format ? ctx.guardrails.maxReflections : 0,
      messages: [
        { role: "system", content: prompt.system },
        ...(request.toolResult ? toolResultMessages(request.toolResult, prompt.fitted[request.toolResult.response] ?? "") : []),
        { role: "user", content: prompt.user }
      ]
    })
    return request.clipText === false ? result.value : clipStrings(result.value, (text) => ctx.budget.agentText(text))
  })
