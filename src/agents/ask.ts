// One agent call: render its template, fit the changing parts into the context budget, ask for a typed object.
import * as Effect from "effect/Effect"
import type { z } from "zod"
import { LanguageModel, type Message } from "../llm/language-model.ts"
import { generateObject, jsonSchemaOf, type ObjectRequest } from "../llm/structured.ts"
import { splitThinking } from "../llm/thinking.ts"
import type { ContextBudget } from "../memory/context-budget.ts"
import { fenceFor } from "../text/fenced-data.ts"
import { jsonShape } from "../text/json-shape.ts"
import { loadTemplate, renderTemplate } from "../text/prompt-template.ts"
import { emit } from "../trace/events.ts"
import type { BudgetExhausted } from "./errors.ts"
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
  /**
   * Values the template gets as text in their structured form (a list as an array), carried on the
   * request beside the rendered values for readers that are not a model (the simulated model).
   */
  readonly data?: Readonly<Record<string, unknown>> | undefined
  /**
   * Values rendered as they are and never cut for room (a short list the request cannot do without, such as the
   * tools a choice may name), where `values` may be cut when the prompt leaves too little room for the fitted parts.
   */
  readonly fixed?: Readonly<Record<string, string>> | undefined
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
   * `response` (a key of `fit`), before the user part. A model without a tool role (`supportsTools`
   * false) gets it at the start of the user message instead, fenced and labelled as data.
   */
  readonly toolResult?:
    | { readonly tool: string; readonly args: Record<string, unknown>; readonly response: string }
    | undefined
  /**
   * The prefix this request shares with the other requests of its task or subtask (`taskContext`,
   * `subtaskContext`): its first template's system part is the system message and their user parts start the
   * user message, so that a server's prefix cache reuses them; the request's own template (user text only)
   * ends the user message. Its values and fitted parts are the request's too. A tool's call and response come
   * between the shared user message and the request's own (a model without a tool role reads them inline,
   * before the whole user text).
   */
  readonly context?: SharedContext | undefined
  /**
   * The exchange this request continues (an earlier agent of the same step, `askTurn`): its messages, the
   * model's last reply as an assistant message (carrying the call when there is a `toolResult`, whose response
   * follows as a `tool` message), then this request's own template as a new user message. A server's cache
   * holds that exchange, reply included, so only the new end is computed. The exchange's `context` is its
   * prefix (this request's is not used); its values still reach the last message, for readers that are not a
   * model. The whole exchange is fitted to the budget (`renderExchange`).
   */
  readonly follows?: Turn | undefined
}

/** A prefix shared by several agents' requests: templates and the values they are rendered from. */
export interface SharedContext {
  /** The first template's system part is the system message; the user parts, in order, start the user message. */
  readonly template: string | ReadonlyArray<string>
  readonly values: Readonly<Record<string, string | number>>
  readonly fit: Readonly<Record<string, (room: number) => string>>
}

/** A copy of a parsed reply with each string passed through `clip`. */
export const clipStrings = <A>(value: A, clip: (text: string) => string): A => {
  const walk = (v: unknown): unknown =>
    typeof v === "string"
      ? clip(v)
      : Array.isArray(v)
        ? v.map(walk)
        : v !== null && typeof v === "object"
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
          : v
  return walk(value) as A
}

/** A plain value cut so that its prompt fits the context (a 100 KB query, say). */
export interface ContextCut {
  readonly key: string
  /** The whole value's length: names the value across estimates (a calibrated budget counts its tokens anew). */
  readonly fromChars: number
  readonly fromTokens: number
  readonly toTokens: number
}

/**
 * Cut the plain string values (none of `exclude`) of a prompt, largest first, until `room(kept)` (the
 * prompt tokens the rendered prompt leaves) is at least `wanted`. Every Smurfs prompt built from a value
 * the caller does not control (the query) goes through here; a ReAct/DFSDT chain never cuts its query
 * and cuts its tools' descriptions instead (`makeChain`).
 */
export const cutValues = (
  budget: ContextBudget,
  values: AskRequest<unknown>["values"],
  room: (kept: Readonly<Record<string, string | number>>) => number,
  wanted: number,
  exclude: ReadonlyArray<string> = []
) => {
  const kept: Record<string, string | number> = { ...values }
  const cuts: Array<ContextCut> = []
  for (let over = wanted - room(kept); over > 0; over = wanted - room(kept)) {
    const largest = Object.entries(kept)
      .filter((e): e is [string, string] => typeof e[1] === "string" && !exclude.includes(e[0]))
      .map(([key, text]) => ({ key, text, tokens: budget.count(text) }))
      .sort((a, b) => b.tokens - a.tokens)[0]
    if (!largest || largest.tokens === 0) break // the template alone is too long: nothing of ours to cut
    const toTokens = Math.max(0, largest.tokens - over)
    kept[largest.key] = budget.truncate(largest.text, toTokens)
    const earlier = cuts.findIndex((c) => c.key === largest.key)
    const from = earlier >= 0 ? cuts[earlier]! : { fromChars: largest.text.length, fromTokens: largest.tokens }
    const cut = { key: largest.key, fromChars: from.fromChars, fromTokens: from.fromTokens, toTokens }
    if (earlier >= 0) cuts[earlier] = cut
    else cuts.push(cut)
  }
  return { kept, cuts }
}

/**
 * One `context` guardrail warning per task and cut value: every later prompt cuts the same text the
 * same way, or a little shorter once a reply calibrated the budget, which is not news to the user.
 */
export const warnCuts = (budget: ContextBudget, role: string, cuts: ReadonlyArray<ContextCut>): Effect.Effect<void> =>
  // asked on every request; nearly always nothing was cut
  cuts.length === 0
    ? Effect.void
    : Effect.forEach(
        cuts.filter((cut) => {
          const key = `${cut.key}:${cut.fromChars}`
          if (budget.warned.has(key)) return false
          budget.warned.add(key)
          return true
        }),
        (cut) => {
          const warning = `the ${cut.key} (about ${cut.fromTokens} tokens) does not fit the model's context of ${budget.promptTokens} prompt tokens; it was cut to ${cut.toTokens} tokens. Give a shorter ${cut.key} or a larger context (--num-ctx).`
          return emit("guardrail", { guardrail: "context", role, error: warning, attempt: 1, recovered: true })
        },
        { discard: true }
      )

/** One request of an exchange: its template, the values it is rendered from and the parts fitted to the room. */
interface Part {
  readonly template: string
  readonly values: AskRequest<unknown>["values"]
  readonly fit: NonNullable<AskRequest<unknown>["fit"]>
  /** Parts of the fixed text (the reply's JSON shape): rendered, never cut. */
  readonly statics: Readonly<Record<string, string>>
  readonly toolResult?: AskRequest<unknown>["toolResult"]
}

/**
 * An exchange so far: the prefix it starts with and each request with the model's reply (without thinking, as
 * chat templates keep earlier turns). A later agent of the same step continues it (`AskRequest.follows`).
 */
export interface Turn {
  readonly context: SharedContext | undefined
  readonly parts: ReadonlyArray<Part & { readonly reply: string }>
}

/**
 * Render an exchange's messages with the fitted parts (the prefix's, then each request's) trimmed to share the
 * room the rest leaves, so that the whole exchange fits the budget: while it fits, every request renders its
 * predecessors exactly as they were sent. The last request's plain values too long for the prompt (the query
 * itself can be) are cut too, largest first, so that the fixed parts leave a quarter of the prompt for the
 * fitted ones: no prompt exceeds the context. `inline` puts a tool's response in the user message (a model
 * without a tool role).
 */
const renderExchange = (
  budget: ContextBudget,
  context: SharedContext | undefined,
  parts: ReadonlyArray<Part & { readonly reply?: string }>,
  inline: boolean
) => {
  const last = parts.length - 1
  /** The fitted parts; with `replies`, the earlier replies too (when the exchange would not fit otherwise). */
  const fitsOf = (replies: boolean) => [
    ...Object.entries(context?.fit ?? {}).map(([key, fit]) => ({ key, part: -1, fit })),
    ...parts.flatMap((p, part) => [
      ...Object.entries(p.fit).map(([key, fit]) => ({ key, part, fit })),
      ...(replies && part < last
        ? [{ key: REPLY, part, fit: (room: number) => budget.truncate(p.reply ?? "", room) }]
        : [])
    ])
  ]
  const renderWith = (fits: ReturnType<typeof fitsOf>) => {
    const build = (lastValues: Readonly<Record<string, string | number>>, fitted: ReadonlyArray<string>) => {
      const fittedOf = (part: number) =>
        Object.fromEntries(fits.flatMap((f, j) => (f.part === part ? [[f.key, fitted[j]!]] : [])))
      const valuesOf = (i: number) => (i === last ? lastValues : parts[i]!.values)
      const shared = { ...valuesOf(0), ...fittedOf(-1) }
      const names =
        context === undefined ? [] : typeof context.template === "string" ? [context.template] : context.template
      const prefix = names.map((name) => renderTemplate(name, shared))
      const messages: Array<Message> = []
      parts.forEach((p, i) => {
        const own = renderTemplate(p.template, { ...shared, ...valuesOf(i), ...p.statics, ...fittedOf(i) })
        const tool = p.toolResult
        const response = tool ? (fittedOf(i)[tool.response] ?? "") : ""
        const asMessages = tool !== undefined && !inline
        let user = own.user
        if (i === 0) {
          const sharedUser = prefix
            .map((r) => r.user)
            .filter((u) => u.length > 0)
            .join("\n\n")
          messages.push({ role: "system", content: context === undefined ? own.system : (prefix[0]?.system ?? "") })
          // with a shared prefix, a tool's call and response come after it (the subtask and memory), before the request's own end
          if (context !== undefined && asMessages) messages.push({ role: "user", content: sharedUser })
          else if (context !== undefined) user = `${sharedUser}\n\n${own.user}`
          if (asMessages) messages.push(...toolResultMessages(tool, response))
        } else {
          // the previous reply as the server holds it; a tool's call goes on it (a chat template expects it on an assistant message)
          const reply = fittedOf(i - 1)[REPLY] ?? parts[i - 1]!.reply ?? ""
          messages.push(
            ...(asMessages
              ? toolResultMessages(tool, response).map((m, k) => (k === 0 ? { ...m, content: reply } : m))
              : [{ role: "assistant" as const, content: reply }])
          )
        }
        messages.push({
          role: "user",
          content: tool && inline ? `${inlineToolResult(tool, response)}\n\n${user}` : user
        })
      })
      const { [REPLY]: _, ...own } = fittedOf(last)
      return { messages, fitted: { ...(last === 0 ? fittedOf(-1) : {}), ...own } }
    }
    const blanks = fits.map(() => "")
    const { kept, cuts } = cutValues(
      budget,
      parts[last]!.values,
      (k) => roomOf(build(k, blanks).messages),
      fits.length > 0 ? Math.floor(budget.promptTokens / 4) : 0,
      fits.map((f) => f.key)
    )
    const share = Math.floor(roomOf(build(kept, blanks).messages) / Math.max(1, fits.length))
    const rendered = build(
      kept,
      fits.map((f) => f.fit(Math.max(0, share)))
    )
    return { ...rendered, kept, cuts }
  }
  const roomOf = (messages: ReadonlyArray<Message>) =>
    budget.promptTokens - messages.reduce((n, m) => n + budget.messageTokens(m), 0)
  const whole = renderWith(fitsOf(false))
  // replies as they were sent while they fit (a server's cache holds them), else cut with the other fitted parts
  return last > 0 && roomOf(whole.messages) < 0 ? renderWith(fitsOf(true)) : whole
}

/** The key of an earlier reply among the fitted parts (no placeholder can be named so). */
const REPLY = "\u0000reply"

const TOOL_CALL_ID = "call_0"

/** The call and its response as the two messages a chat model expects for tool results. */
const toolResultMessages = (
  result: NonNullable<AskRequest<unknown>["toolResult"]>,
  content: string
): Array<Message> => [
  { role: "assistant", content: "", toolCalls: [{ id: TOOL_CALL_ID, name: result.tool, arguments: result.args }] },
  { role: "tool", content, toolCallId: TOOL_CALL_ID, toolName: result.tool }
]

/**
 * The response inside the user message, fenced and labelled as data, for a model whose chat template
 * has no tool role (a `tool` message would be dropped or garbled there, and the answer made up).
 */
const inlineToolResult = (result: NonNullable<AskRequest<unknown>["toolResult"]>, content: string): string =>
  renderTemplate("tool-response-inline", {
    tool: result.tool,
    args: JSON.stringify(result.args),
    fence: fenceFor(content),
    response: content
  }).user

/** `{{format}}`, when the template shows the reply's JSON shape: rendered from the reply's schema and the template's example wording. */
const formatOf = (template: string, schema: z.ZodType): Record<string, string> => {
  const { system, user, examples } = loadTemplate(template)
  return `${system}\n${user}`.includes("{{format}}") ? { format: jsonShape(jsonSchemaOf(schema), examples) } : {}
}

/**
 * A request's messages as `askTurn` sends them (the prefix, the exchange it continues, its own end, fitted to the
 * budget, with the values on the last message), for an agent that sends them itself (native tool calling), and
 * the exchange a later agent continues once the reply is known (`turnWith`, the reply without thinking).
 */
export const renderRequest = (
  ctx: AgentContext,
  request: Omit<AskRequest<unknown>, "schema" | "check" | "clipText"> & { readonly schema?: z.ZodType | undefined }
) =>
  Effect.gen(function* () {
    const follows = request.follows
    const context = follows ? follows.context : request.context
    const part: Part = {
      template: request.template,
      // the first request renders the prefix too: its values are cut together with the request's own
      values: follows ? request.values : { ...context?.values, ...request.values },
      fit: request.fit ?? {},
      statics: { ...(request.schema ? formatOf(request.template, request.schema) : {}), ...request.fixed },
      toolResult: request.toolResult
    }
    const { info } = yield* LanguageModel
    const inline = request.toolResult !== undefined && !info.supportsTools
    const earlier = follows?.parts ?? []
    const prompt = renderExchange(ctx.budget, context, [...earlier, part], inline)
    yield* warnCuts(ctx.budget, request.role, prompt.cuts)
    const messages = prompt.messages
    const end = messages.length - 1
    messages[end] = {
      ...messages[end]!,
      values: { ...(follows ? context?.values : {}), ...prompt.kept, ...prompt.fitted, ...request.data }
    }
    // the reply as the next agent of the exchange reads it: a huge one is cut, as the agents' own text is
    const turnWith = (reply: string): Turn => ({
      context,
      parts: [...earlier, { ...part, values: prompt.kept, reply: ctx.budget.agentText(splitThinking(reply).text) }]
    })
    return { messages: messages as ReadonlyArray<Message>, turnWith }
  })

/** One agent call; its value and the exchange (requests and replies) a later agent of the step may continue (`follows`). */
export const askTurn = <A>(ctx: AgentContext, request: AskRequest<A>) =>
  Effect.gen(function* () {
    yield* ctx.charge
    const { messages, turnWith } = yield* renderRequest(ctx, request)
    const result = yield* generateObject({
      role: request.role,
      schema: request.schema,
      check: request.check,
      maxReflections: ctx.guardrails.format ? ctx.guardrails.maxReflections : 0,
      messages
    })
    const value =
      request.clipText === false ? result.value : clipStrings(result.value, (text) => ctx.budget.agentText(text))
    return { value, turn: turnWith(result.response.text) }
  })

export const ask = <A>(ctx: AgentContext, request: AskRequest<A>) => Effect.map(askTurn(ctx, request), (r) => r.value)
