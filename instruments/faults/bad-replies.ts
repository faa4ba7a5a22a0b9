// A seeded model that mixes valid replies with bad ones of known kinds, and keeps a ledger of what it sent.
import * as Effect from "effect/Effect"
import { pick } from "../../bench/eval/rng.ts"
import { schemaValueOf } from "../../bench/sim/schema-value.ts"
import { ANSWER_VERIFY_ROLE } from "../../src/agents/answer-verify.ts"
import { FUSED_ROLE } from "../../src/agents/executor-fused.ts"
import { ModelServerError } from "../../src/llm/errors.ts"
import { type GenerateRequest, LanguageModel, type ToolSpec } from "../../src/llm/language-model.ts"
import { makeScriptedModel } from "../../src/llm/scripted.ts"
import { renderTemplate } from "../../src/text/prompt-template.ts"

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

/** The roles of the pipeline with the fused executor (`executor: "fused"`, the Answer and Verifier agents on). */
export const FUSED_ROLES = [
  "planner",
  "executor.fused",
  "answerer.verify",
  "answerer.subtask",
  "answerer.final"
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

/**
 * Bad tool calls of the fused executor (`executor.fused`), in both of its modes: arguments of the wrong types
 * (`param_rules`) or without a required one (`missing_params`), inside a reply whose shape is right.
 */
export const ARG_KINDS = ["wrong_arg_types", "missing_args"] as const

/**
 * Bad replies to a native tool-calling request: a call written out as JSON text instead of made (`no_tool_call`,
 * as prose, an empty or a huge text are), a call whose arguments the client could not read (`bad_args`), and a
 * call the server itself could not parse (Ollama's HTTP 500 "error parsing tool call": `tool_call_parse`, retried,
 * then the request falls back to JSON).
 */
export const NATIVE_KINDS = ["call_as_text", "unparseable_args", "unparsed_call"] as const

export type BadKind = (typeof BAD_KINDS)[number] | (typeof ARG_KINDS)[number] | (typeof NATIVE_KINDS)[number]

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
  /** Requests of the fused executor that asked for JSON: all of them with `--tool-calling json`, else its fallbacks. */
  fusedJson: number
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

/** Values for a tool's parameters (a JSON Schema), meaningful ones for the demo tools. */
const argsFor = (parameters: Schema | undefined, rng: () => number): Record<string, unknown> =>
  schemaValueOf(parameters ?? { type: "object" }, (path) => {
    const choices = path.length === 1 ? DEMO_VALUES[path[0]!] : undefined
    return choices ? pick(choices, rng) : undefined
  }) as Record<string, unknown>

/** A native tool-calling request (the fused executor's default mode): its tools are the functions it may call. */
export const isNativeCall = (request: GenerateRequest): boolean => (request.tools?.length ?? 0) > 0

/**
 * The functions the fused executor may call now: the native request's tools, or the JSON request's `functions`
 * (the values its own message carries for readers that are not a model; a reflection comes after that message).
 */
const functionsOf = (request: GenerateRequest): ReadonlyArray<ToolSpec> =>
  request.tools ??
  (request.messages.findLast((m) => m.values?.["functions"] !== undefined)?.values?.["functions"] as
    | ReadonlyArray<ToolSpec>
    | undefined) ??
  []

/** A valid call of the fused executor: a thought, one of the tools it may call now, arguments for it. */
const fusedCall = (request: GenerateRequest, rng: () => number) => {
  const functions = functionsOf(request)
  // never empty: a subtask whose tools all failed at a depth backtracks without asking
  const spec = functions.length > 0 ? pick(functions, rng) : undefined
  return {
    thought: `Call a tool to get the missing information (${prose(rng, 4)}).`,
    name: spec?.name ?? "calculator",
    parameters: spec?.parameters,
    args: argsFor(spec?.parameters, rng)
  }
}

/** A native tool-call reply: the thought as its text, one call. */
const nativeCall = (thought: string, call: { name: string; arguments: unknown; argumentsError?: string }) => ({
  text: thought,
  toolCalls: [{ id: "call_1", ...call }]
})

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
      return argsFor(request.format, rng)
    case FUSED_ROLE: {
      const { thought, name, args } = fusedCall(request, rng)
      return isNativeCall(request)
        ? nativeCall(thought, { name, arguments: args })
        : // after a failed call the schema asks for no thought
          { ...(requiredOf(request.format).includes("thought") ? { thought } : {}), tool: name, arguments: args }
    }
    case "verifier":
      return verdictOf(rng)
    case ANSWER_VERIFY_ROLE:
      return { answer: `The answer is ${Math.floor(rng() * 1000)}.`, ...verdictOf(rng) }
    default:
      return { answer: `The answer is ${Math.floor(rng() * 1000)}.` }
  }
}

const verdictOf = (rng: () => number) =>
  rng() < 0.6 ? { status: "solved" } : { status: "pending", hint: "a value is missing: try another tool" }

/** The kinds of bad reply that make sense for a role (`native`: a native tool-calling request of the fused executor). */
export const kindsFor = (role: string, native = false): ReadonlyArray<BadKind> => {
  if (role === FUSED_ROLE && native)
    return [
      ...BAD_KINDS.filter((k) =>
        ["random_text", "empty", "huge", "huge_valid", "extra_keys", "unknown_tool"].includes(k)
      ),
      ...ARG_KINDS,
      ...NATIVE_KINDS
    ]
  if (role === FUSED_ROLE) return [...BAD_KINDS, ...ARG_KINDS]
  return BAD_KINDS.filter((k) => k !== "unknown_tool" || role === "executor.choose")
}

/** For tool arguments: every declared parameter with a value of the wrong type. */
const wrongTypedArgs = (format: Schema | undefined): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(propertiesOf(format)).map(([key, schema]) => [
      key,
      (schema as Schema)["type"] === "string" ? 12345 : "not a number"
    ])
  )

const UNKNOWN_TOOLS = ["search_web", "calculater", "get_weather", "lookup"]

/**
 * The fused executor's arguments with a fault of `kind`, and the guardrail that must catch it: `checkArgs`'s, or
 * none when the tool has no parameter to get wrong (the arguments are then valid).
 */
const badArgs = (
  parameters: Schema | undefined,
  good: Record<string, unknown>,
  kind: (typeof ARG_KINDS)[number]
): { args: Record<string, unknown>; guardrail: string | undefined } => {
  if (kind === "wrong_arg_types") {
    const wrong = wrongTypedArgs(parameters)
    return Object.keys(wrong).length > 0
      ? { args: wrong, guardrail: "param_rules" }
      : { args: good, guardrail: undefined }
  }
  const required = requiredOf(parameters)
  const kept = Object.fromEntries(Object.entries(good).filter(([k]) => !required.includes(k)))
  return required.length > 0 ? { args: kept, guardrail: "missing_params" } : { args: good, guardrail: undefined }
}

/**
 * A bad reply to the fused executor's native tool-calling request, and the guardrail of `actFused` that must
 * catch it: a reply without a call is `no_tool_call` (its text is the thought, never read as JSON), a name
 * that is no tool `unknown_tool`, arguments the client could not read `bad_args`, then `checkArgs`'s.
 */
const badNativeCall = (
  request: GenerateRequest,
  kind: BadKind,
  rng: () => number,
  options: BadReplyOptions
): { reply: string | object; guardrail: string | undefined } => {
  const { thought, name, parameters, args } = fusedCall(request, rng)
  switch (kind) {
    case "random_text":
      return { reply: prose(rng, 5 + Math.floor(rng() * 30)), guardrail: "no_tool_call" }
    case "empty":
      return { reply: pick(["", "   ", "\n"], rng), guardrail: "no_tool_call" }
    case "huge":
      return { reply: hugeText(options.hugeChars), guardrail: "no_tool_call" }
    case "call_as_text":
      // the call written out in the text, as a model without a tool-call template does
      return { reply: JSON.stringify({ name, arguments: args }), guardrail: "no_tool_call" }
    case "huge_valid":
      return { reply: nativeCall(hugeText(options.hugeChars), { name, arguments: args }), guardrail: undefined }
    case "unknown_tool":
      return {
        reply: nativeCall(thought, { name: pick(UNKNOWN_TOOLS, rng), arguments: args }),
        guardrail: "unknown_tool"
      }
    case "extra_keys":
      return {
        reply: nativeCall(thought, { name, arguments: { ...args, unexpected_key: "surprise", another: 7 } }),
        guardrail: "extra_params"
      }
    case "wrong_arg_types":
    case "missing_args": {
      const bad = badArgs(parameters, args, kind)
      return { reply: nativeCall(thought, { name, arguments: bad.args }), guardrail: bad.guardrail }
    }
    case "unparsed_call":
      return { reply: UNPARSED, guardrail: "tool_call_parse" }
    case "unparseable_args":
      // what a provider gives for arguments it could not parse: no arguments, and why
      return {
        reply: nativeCall(thought, {
          name,
          arguments: {},
          argumentsError: "Expected ',' or '}' after property value in JSON at position 23"
        }),
        guardrail: "bad_args"
      }
    default:
      throw new Error(`no native tool-call reply of kind ${kind}`)
  }
}

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
  const fused = request.role === FUSED_ROLE
  if (fused && isNativeCall(request)) return badNativeCall(request, kind, rng, options)
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
      // the verifier's hint without its status; the step answer without the verdict
      const partial =
        request.role === "verifier"
          ? { hint: "try again" }
          : request.role === ANSWER_VERIFY_ROLE
            ? { answer: good["answer"] }
            : {}
      return { reply: partial, guardrail: "schema" }
    }
    case "extra_keys":
      // undeclared arguments of the fused executor's JSON call are dropped, as those of executor.args
      return fused
        ? {
            reply: {
              ...good,
              unexpected_key: "surprise",
              arguments: { ...(good["arguments"] as Record<string, unknown>), unexpected_key: "surprise", another: 7 }
            },
            guardrail: "extra_params"
          }
        : { reply: { ...good, unexpected_key: "surprise", another: 7 }, guardrail: args ? "extra_params" : undefined }
    case "unknown_tool":
      return fused
        ? { reply: { ...good, tool: pick(UNKNOWN_TOOLS, rng) }, guardrail: "unknown_tool" }
        : { reply: { tool: pick(UNKNOWN_TOOLS, rng) }, guardrail: "unknown_tool" }
    case "wrong_arg_types":
    case "missing_args": {
      const spec = functionsOf(request).find((f) => f.name === good["tool"])
      const bad = badArgs(spec?.parameters, good["arguments"] as Record<string, unknown>, kind)
      return { reply: { ...good, arguments: bad.args }, guardrail: bad.guardrail }
    }
    case "call_as_text":
    case "unparseable_args":
    case "unparsed_call":
      throw new Error(`a ${kind} reply answers a native tool-calling request only`)
  }
}

/** The reply text that stands for a call the server could not parse: the faulty model fails with the server's error. */
const UNPARSED = "\u0000unparsed tool call"

/** The start of the reflection `callNative` sends after the server could not parse a call. */
const parseErrorStart = () => renderTemplate("tool-call-parse-error", { error: "\u0000" }).user.split("\u0000")[0]!

/**
 * A LanguageModel that answers each request with a bad reply (probability `badRate`, kind uniform
 * over the role's kinds) or a valid one, every choice drawn from `rng`. The ledger lists what it sent.
 * A call the server could not parse is retried as the same call, which the server fails to parse again
 * half the time (three in a row send the fused executor to its JSON fallback).
 */
export const makeFaultyModel = (rng: () => number, options: BadReplyOptions = BAD_REPLY_DEFAULTS) => {
  const ledger: Ledger = { faults: [], good: 0, fusedJson: 0 }
  const retried = parseErrorStart()
  const reply = (request: GenerateRequest): string | object => {
    if (request.role === FUSED_ROLE && !isNativeCall(request) && request.messages.at(-1)?.role !== "reflection")
      ledger.fusedJson++
    const last = request.messages.at(-1)
    if (last?.role === "reflection" && last.content.startsWith(retried) && rng() < 0.5) {
      ledger.faults.push({ role: request.role, kind: "unparsed_call", guardrail: "tool_call_parse" })
      return UNPARSED
    }
    if (rng() >= options.badRate) {
      ledger.good++
      return goodReply(request, rng)
    }
    const kind = pick(kindsFor(request.role, isNativeCall(request)), rng)
    const bad = badReply(request, kind, rng, options)
    ledger.faults.push({ role: request.role, kind, guardrail: bad.guardrail })
    return bad.reply
  }
  const model = makeScriptedModel({ "*": [reply], $cycle: true }, "faulty")
  const generate: typeof model.generate = (request) =>
    Effect.flatMap(model.generate(request), (response) =>
      response.text === UNPARSED
        ? Effect.fail(
            new ModelServerError({
              status: 500,
              host: "faulty",
              detail: `error parsing tool call: raw='{"name": "calculator", "arguments": {expression: 6*7}}', err=invalid character 'e' looking for beginning of object key string`,
              unparsedToolCall: true
            })
          )
        : Effect.succeed(response)
    )
  return { model: LanguageModel.of({ ...model, generate }), ledger }
}
