// A seeded model that mixes valid replies with bad ones of known kinds, and keeps a ledger of what it sent.
import { type GenerateRequest, LanguageModel } from "../../src/llm/language-model.ts"
import { makeScriptedModel } from "../../src/llm/scripted.ts"
import { pick } from "../eval/rng.ts"
import { schemaValueOf } from "../sim/schema-value.ts"

/** The roles of the Smurfs pipeline, each of which gets bad replies. */
export const SMURFS_ROLES = [
  "planner",
  "executor.thought",
  "executor.choose",
  "executor.args",
  "answerer.step",
  "answerer.subtask",
  "answerer.final",
  "verifier"
] as const

/**
 * The kinds of bad replies. `extra_keys` is a valid reply with keys the schema does not have: tolerated
 * (zod drops them) except for tool arguments, where the extra-parameter guardrail drops them.
 * `huge_valid` is a valid reply whose text is a megabyte: no guardrail is due, but it must not push
 * any later prompt past the context window.
 */
export const BAD_KINDS = [
  "random_text",
  "truncated_json",
  "wrong_types",
  "extra_keys",
  "missing_keys",
  "unknown_tool",
  "empty",
  "huge",
  "huge_valid",
  "tool_call_instead"
] as const
export type BadKind = (typeof BAD_KINDS)[number]

export interface BadReplyOptions {
  /** Probability that a reply is bad. */
  readonly badRate: number
  /** Length of a `huge` reply in characters (1 MB by default). */
  readonly hugeChars: number
}

export const BAD_REPLY_DEFAULTS: BadReplyOptions = { badRate: 0.45, hugeChars: 1_000_000 }

/** One bad reply the model sent, and the guardrail that must catch it (undefined when it is tolerated). */
export interface SentFault {
  readonly role: string
  readonly kind: BadKind
  readonly guardrail: string | undefined
}

/** What the model sent: every bad reply in order, and the number of valid ones. */
export interface Ledger {
  readonly faults: Array<SentFault>
  good: number
}

const WORDS = [
  "the",
  "tool",
  "answer",
  "is",
  "probably",
  "maybe",
  "let",
  "me",
  "think",
  "about",
  "it",
  "step",
  "by",
  "result",
  "unclear",
  "sorry",
  "value"
]

/** Prose with no brace or bracket, so that no JSON can be read out of it. */
const prose = (rng: () => number, words: number): string =>
  Array.from({ length: words }, () => pick(WORDS, rng)).join(" ")

const hugeText = (chars: number): string => "lorem ipsum dolor sit amet ".repeat(Math.ceil(chars / 27)).slice(0, chars)

type Schema = Record<string, unknown>
const propertiesOf = (format: Schema | undefined): Schema => (format?.["properties"] as Schema | undefined) ?? {}
const requiredOf = (format: Schema | undefined): ReadonlyArray<string> =>
  (format?.["required"] as ReadonlyArray<string> | undefined) ?? []

/** Meaningful values for the demo tools' parameters, so that some calls succeed; anything else comes from the schema. */
const DEMO_VALUES: Readonly<Record<string, ReadonlyArray<unknown>>> = {
  expression: ["2 + 3 * 4", "sqrt(16) / 4", "12 / 100 * 29032"],
  subject: ["France", "Mount Everest", "speed of light"],
  attribute: ["capital", "height", "population"],
  value: [10, 100],
  amount: [5, 250],
  from: ["km", "USD"],
  to: ["mi", "EUR"],
  start: ["2024-01-01"],
  end: ["2024-03-01"]
}

const textOf = (request: GenerateRequest): string => request.messages.map((m) => m.content).join("\n")

/** A valid reply for the request's role (and, for a tool choice or arguments, for its JSON Schema). */
export const goodReply = (request: GenerateRequest, rng: () => number): Record<string, unknown> => {
  switch (request.role) {
    case "planner": {
      const query = /Question:\s*(.+)/.exec(textOf(request))?.[1]?.trim() ?? "the query"
      return {
        subtasks: Array.from({ length: 1 + Math.floor(rng() * 2) }, (_, i) => `Part ${i + 1} of: ${query.slice(0, 80)}`)
      }
    }
    case "executor.thought":
      return { thought: `Call a tool to get the missing information (${prose(rng, 4)}).` }
    case "executor.choose": {
      const allowed = (propertiesOf(request.format)["tool"] as Schema | undefined)?.["enum"] as
        | ReadonlyArray<string>
        | undefined
      return { tool: allowed && allowed.length > 0 ? pick(allowed, rng) : "calculator" }
    }
    case "executor.args":
      return schemaValueOf(request.format ?? {}, (path) => {
        const choices = path.length === 1 ? DEMO_VALUES[path[0]!] : undefined
        return choices ? pick(choices, rng) : undefined
      }) as Record<string, unknown>
    case "verifier":
      return rng() < 0.6
        ? { status: "solved", reason: "the answer covers the subtask" }
        : { status: "pending", reason: "a value is missing", hint: "try another tool" }
    default:
      return { answer: `The answer is ${Math.floor(rng() * 1000)}.` }
  }
}

/** The kinds of bad reply that make sense for a role. */
export const kindsFor = (role: string): ReadonlyArray<BadKind> =>
  BAD_KINDS.filter((k) => k !== "unknown_tool" || role === "executor.choose")

/** For tool arguments: every declared parameter with a value of the wrong type. */
const wrongTypedArgs = (format: Schema | undefined): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(propertiesOf(format)).map(([key, schema]) => [
      key,
      (schema as Schema)["type"] === "string" ? 12345 : "not a number"
    ])
  )

/**
 * A bad reply of `kind` for the request, and the guardrail that must catch it. The classification
 * follows generateObject and the executor's checks: unreadable JSON is `format`, a reply of the wrong
 * shape is `schema`, and tool arguments have their own guardrails.
 */
export const badReply = (
  request: GenerateRequest,
  kind: BadKind,
  rng: () => number,
  options: BadReplyOptions = BAD_REPLY_DEFAULTS
): { reply: string | object; guardrail: string | undefined } => {
  const args = request.role === "executor.args"
  const good = goodReply(request, rng)
  switch (kind) {
    case "random_text":
      return { reply: prose(rng, 5 + Math.floor(rng() * 30)), guardrail: "format" }
    case "truncated_json": {
      // Cut off by the token limit just before its closing brackets: no reading of it parses, and the
      // local repair closes them again (the cut removes none of the values), with no model call spent.
      const text = JSON.stringify(good).replace(/[}\]"]+$/, (closers) => (closers.startsWith('"') ? '"' : ""))
      return { reply: text, guardrail: "repair" }
    }
    case "empty":
      return { reply: pick(["", "   ", "\n"], rng), guardrail: "format" }
    case "huge":
      return { reply: hugeText(options.hugeChars), guardrail: "format" }
    case "huge_valid": {
      // every string of a valid reply (the first subtask of a plan) becomes a megabyte of text
      const big = hugeText(options.hugeChars)
      const grow = (v: unknown): unknown =>
        typeof v === "string" ? big : Array.isArray(v) ? v.map((x, i) => (i === 0 ? grow(x) : x)) : v
      return {
        reply: Object.fromEntries(
          Object.entries(good).map(([k, v]) => [k, k === "status" || k === "tool" ? v : grow(v)])
        ),
        guardrail: undefined
      }
    }
    case "tool_call_instead":
      // A native tool call where JSON text was asked for: the text is empty.
      return { reply: { toolCalls: [{ name: "calculator", arguments: { expression: "1+1" } }] }, guardrail: "format" }
    case "wrong_types":
      if (args)
        return Object.keys(propertiesOf(request.format)).length > 0
          ? { reply: wrongTypedArgs(request.format), guardrail: "param_rules" }
          : { reply: [1, 2], guardrail: "schema" }
      return {
        reply: Object.fromEntries(Object.keys(good).map((k) => [k, k === "subtasks" ? "not a list" : 42])),
        guardrail: "schema"
      }
    case "missing_keys": {
      if (args) {
        const required = requiredOf(request.format)
        const kept = Object.fromEntries(Object.entries(good).filter(([k]) => !required.includes(k)))
        return required.length > 0
          ? { reply: kept, guardrail: "missing_params" }
          : { reply: "null", guardrail: "schema" }
      }
      return { reply: request.role === "verifier" ? { status: "solved" } : {}, guardrail: "schema" }
    }
    case "extra_keys":
      return {
        reply: { ...good, unexpected_key: "surprise", another: 7 },
        guardrail: args ? "extra_params" : undefined
      }
    case "unknown_tool":
      return {
        reply: { tool: pick(["search_web", "calculater", "get_weather", "lookup"], rng) },
        guardrail: "unknown_tool"
      }
  }
}

/**
 * A LanguageModel that answers each request with a bad reply (probability `badRate`, kind uniform
 * over the role's kinds) or a valid one, every choice drawn from `rng`. The ledger lists what it sent.
 */
export const makeFaultyModel = (rng: () => number, options: BadReplyOptions = BAD_REPLY_DEFAULTS) => {
  const ledger: Ledger = { faults: [], good: 0 }
  const reply = (request: GenerateRequest): string | object => {
    if (rng() >= options.badRate) {
      ledger.good++
      return goodReply(request, rng)
    }
    const kind = pick(kindsFor(request.role), rng)
    const bad = badReply(request, kind, rng, options)
    ledger.faults.push({ role: request.role, kind, guardrail: bad.guardrail })
    return bad.reply
  }
  const model = makeScriptedModel({ "*": [reply], $cycle: true }, "faulty")
  return { model: LanguageModel.of(model), ledger }
}
