// Structured output guardrail (MARCO): parse, validate with zod, reflect the exact error back, retry.
import { createRequire } from "node:module"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { z } from "zod"
import { renderTemplate } from "../text/prompt-template.ts"
import { emit } from "../trace/events.ts"
import { redactText, redactValue, secretValues } from "../trace/redact.ts"
import { capText, SIZE_CAPS } from "../trace/size-caps.ts"
import { spanFn } from "../trace/span-fn.ts"
import { requestHash } from "./cache.ts"
import { MalformedOutput, type ProviderError } from "./errors.ts"
import { grammarSafe } from "./grammar-safe.ts"
import {
  type GenerateRequest,
  type GenerateResponse,
  LanguageModel,
  type Message,
  type ToolCallRequest
} from "./language-model.ts"
import { NestingTooDeep, parseJsonBounded, textNestsDeeper } from "./nesting.ts"
import { outputLimitOf } from "./output-limits.ts"
import { splitThinking } from "./thinking.ts"

/** At most this many reflection retries after the first attempt, as in the paper. */
export const MAX_REFLECTIONS = 2

export interface ObjectRequest<A> extends Omit<GenerateRequest, "format" | "tools"> {
  readonly schema: z.ZodType<A>
  /** Extra checks after the schema (unknown tool names, grounding...); return an error text to reflect, or undefined. */
  readonly check?: ((value: A) => { guardrail: string; error: string } | undefined) | undefined
  /** Retries after the first attempt; defaults to MAX_REFLECTIONS. */
  readonly maxReflections?: number | undefined
}

export interface ObjectResult<A> {
  readonly value: A
  readonly response: GenerateResponse
  /** Attempts made, 1 when the first reply was valid. */
  readonly attempts: number
}

/** The JSON Schema sent to the server for a zod schema. */
export const jsonSchemaOf = (schema: z.ZodType): Record<string, unknown> => {
  const known = jsonSchemas.get(schema)
  if (known) return known
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >
  // Servers turn this schema into a decoding grammar, where `{}` would mean "an object": say "any value" explicitly.
  const safe = grammarSafe(rest)
  jsonSchemas.set(schema, safe)
  return safe
}

/** Conversion is costly and agents reuse their schemas on every call; the result is shared, never mutate it. */
const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>()

/** Pull the JSON value out of a reply that may wrap it in prose or a ``` fence. */
export const extractJson = (text: string): unknown => {
  const trimmed = text.trim()
  try {
    return parseJsonBounded(trimmed)
  } catch (e) {
    if (e instanceof NestingTooDeep) throw e // no lenient reading makes it shallower
    // fall through to the lenient readings below
  }
  const fence = /```(?:json)?\s*([\s\S]*?)```/i.exec(trimmed)
  if (fence?.[1]) return parseJsonBounded(fence[1].trim())
  const start = trimmed.search(/[{[]/)
  const end = Math.max(trimmed.lastIndexOf("}"), trimmed.lastIndexOf("]"))
  if (start >= 0 && end > start) return parseJsonBounded(trimmed.slice(start, end + 1))
  throw new SyntaxError(trimmed.length === 0 ? "the reply was empty" : "the reply contains no JSON object")
}

const MAX_ECHO = 400

/** The correction sent after a rejected reply (prompts/reflection.md): the exact error and the reply's start. */
const reflection = (error: string, text: string): Message => {
  const reply = `${text.slice(0, MAX_ECHO)}${text.length > MAX_ECHO ? "..." : ""}`
  return { role: "reflection", content: renderTemplate("reflection", { error, reply }).user, values: { error, reply } }
}

/** The guardrail name of a reply repaired locally. */
const REPAIR = "repair"

type Parsed<A> = { ok: true; value: A; repaired?: string } | { ok: false; guardrail: string; error: string }

/** `jsonrepair` loads with the first reply that needs it, not with `import "smurfs"`. */
let repairer: typeof import("jsonrepair").jsonrepair | undefined
const jsonrepair = (text: string): string =>
  (repairer ??= (createRequire(import.meta.url)("jsonrepair") as typeof import("jsonrepair")).jsonrepair)(text)

/**
 * The JSON a local repair makes of a reply that does not parse: trailing commas, single quotes,
 * Python literals (True, None), code fences, comments, a reply cut off mid-object. Only an object or
 * an array counts; prose stays a format error for the model to correct.
 */
export const repairJson = (text: string): unknown => {
  const start = text.search(/[{[]/)
  if (start < 0) return undefined
  // Fenced replies keep their fence so the repair can strip it; otherwise leading prose is dropped.
  const fenced = /```/.test(text.slice(0, start))
  // jsonrepair recurses per level: a text nested too deep is not repaired (nor anything built from it)
  if (textNestsDeeper(text)) return undefined
  try {
    const value: unknown = JSON.parse(jsonrepair(fenced ? text.trim() : text.slice(start)))
    return typeof value === "object" && value !== null ? value : undefined
  } catch {
    return undefined
  }
}

const parseReply = <A>(reply: string, schema: z.ZodType<A>, check: ObjectRequest<A>["check"]): Parsed<A> => {
  // A reasoning model's thinking (and any braces in it) is never read as the answer.
  const text = splitThinking(reply).text
  let raw: unknown
  let repaired: string | undefined
  try {
    raw = extractJson(text)
  } catch (e) {
    const error = `invalid JSON: ${(e as Error).message}`
    raw = repairJson(text)
    if (raw === undefined) return { ok: false, guardrail: "format", error }
    repaired = error
  }
  const result = schema.safeParse(raw)
  if (!result.success) return { ok: false, guardrail: "schema", error: z.prettifyError(result.error) }
  const problem = check?.(result.data)
  return problem ? { ok: false, ...problem } : { ok: true, value: result.data, ...(repaired ? { repaired } : {}) }
}

/**
 * A reply the server cut at the output limit: taken only when it is whole JSON as it stands (a model that closed its
 * object and then wrote blank lines until the limit, as grammar-constrained ones do); never repaired, since a
 * repair would close the cut object and pass half a reply off as a whole one. Else a `length` guardrail, reflected.
 */
const parseCutReply = <A>(
  reply: string,
  schema: z.ZodType<A>,
  check: ObjectRequest<A>["check"],
  limit: number | undefined
): Parsed<A> => {
  const text = splitThinking(reply).text.trim()
  const cut: Parsed<A> = {
    ok: false,
    guardrail: "length",
    error: `the reply was cut at the output limit${limit === undefined ? "" : ` of ${limit} tokens`} before it was complete: reply with the JSON object only, and keep its texts short`
  }
  let raw: unknown
  try {
    raw = parseJsonBounded(text)
  } catch {
    return cut
  }
  const result = schema.safeParse(raw)
  if (!result.success) return cut
  const problem = check?.(result.data)
  return problem ? { ok: false, ...problem } : { ok: true, value: result.data }
}

/** One rejected reply of a generateObject call, traced once the call's outcome is known. */
interface Rejection {
  readonly guardrail: string
  readonly error: string
  readonly attempt: number
}

/**
 * Ask the model for a value of `schema`. Each rejected reply is answered with a reflection message;
 * after the retries a `MalformedOutput` is the typed failure. Every rejected reply becomes one
 * `guardrail` event when the call ends, with `recovered: true` when a later attempt of the same call
 * was valid, so that per-guardrail recovery rates can be read off a trajectory.
 */
export const generateObject = spanFn("LanguageModel.generateObject")(function* <A>(request: ObjectRequest<A>) {
  const rejections: Array<Rejection> = []
  // Emitted on every exit (success, MalformedOutput, a provider error, interruption) so none is lost.
  const traceRejections = (recovered: boolean) =>
    Effect.forEach(
      rejections,
      (r) =>
        emit("guardrail", {
          guardrail: r.guardrail,
          role: request.role,
          error: r.error,
          attempt: r.attempt,
          recovered: recovered || r.guardrail === REPAIR
        }),
      {
        discard: true
      }
    )
  return yield* attempts(request, rejections).pipe(Effect.onExit((exit) => traceRejections(Exit.isSuccess(exit))))
})

/** The attempts of one call: each rejected reply is pushed to `rejections` and answered with a reflection. */
const attempts = <A>(request: ObjectRequest<A>, rejections: Array<Rejection>) =>
  Effect.gen(function* () {
    const model = yield* LanguageModel
    const format = jsonSchemaOf(request.schema)
    const maxReflections = request.maxReflections ?? MAX_REFLECTIONS
    let messages: ReadonlyArray<Message> = request.messages
    let last = { text: "", error: "" }
    for (let attempt = 1; attempt <= maxReflections + 1; attempt++) {
      const response: GenerateResponse = yield* callModel(model.generate, { ...request, messages, format }, attempt)
      const parsed = response.truncated
        ? parseCutReply(response.text, request.schema, request.check, withOutputLimit(request).options?.maxTokens)
        : parseReply(response.text, request.schema, request.check)
      // A local repair spends no model call; it is a guardrail of its own, recovered by definition.
      if (parsed.ok && parsed.repaired) rejections.push({ guardrail: REPAIR, error: parsed.repaired, attempt })
      if (parsed.ok) return { value: parsed.value, response, attempts: attempt } satisfies ObjectResult<A>
      rejections.push({ guardrail: parsed.guardrail, error: parsed.error, attempt })
      last = { text: response.text, error: parsed.error }
      const said = splitThinking(response.text).text
      messages = [
        ...request.messages,
        { role: "assistant", content: said.slice(0, 4000) },
        reflection(parsed.error, said)
      ]
    }
    return yield* new MalformedOutput({
      role: request.role,
      error: last.error,
      text: last.text.slice(0, 2000),
      attempts: maxReflections + 1
    })
  })

/** A request with an output limit: its own, else its role's (`outputLimitOf`). */
export const withOutputLimit = (request: GenerateRequest): GenerateRequest =>
  request.options?.maxTokens !== undefined
    ? request
    : { ...request, options: { ...request.options, maxTokens: outputLimitOf(request.role) } }

/**
 * A reply with every credential redacted: a server (or a proxy) that echoes the request's headers would otherwise
 * have the agents send the key back to the model in their next prompts, and put it in errors and spans.
 */
const withoutSecrets = (r: GenerateResponse): GenerateResponse => {
  const secrets = secretValues()
  const text = redactText(r.text, secrets)
  const thinking = r.thinking === undefined ? undefined : redactText(r.thinking, secrets)
  const toolCalls = r.toolCalls?.map((c) => {
    const json = JSON.stringify(c.arguments)
    return redactText(json, secrets) === json &&
      (c.rawArguments === undefined || redactText(c.rawArguments, secrets) === c.rawArguments)
      ? c
      : {
          ...c,
          arguments: redactValue(c.arguments, secrets),
          ...(c.rawArguments === undefined ? {} : { rawArguments: redactText(c.rawArguments, secrets) })
        }
  })
  return text === r.text && thinking === r.thinking && toolCalls?.every((c, i) => c === r.toolCalls![i]) !== false
    ? r
    : { ...r, text, ...(thinking === undefined ? {} : { thinking }), ...(toolCalls ? { toolCalls } : {}) }
}

/** A native tool call as a record keeps it (no undefined fields). */
const plainToolCall = (call: ToolCallRequest) => ({
  ...(call.id === undefined ? {} : { id: call.id }),
  name: call.name,
  arguments: call.arguments,
  ...(call.rawArguments === undefined ? {} : { rawArguments: call.rawArguments }),
  ...(call.argumentsError === undefined ? {} : { argumentsError: call.argumentsError })
})

/** One traced call to the model, with an output limit (its own, else its role's). */
export const callModel = (
  generate: (request: GenerateRequest) => Effect.Effect<GenerateResponse, ProviderError>,
  request: GenerateRequest,
  attempt = 1
): Effect.Effect<GenerateResponse, ProviderError> => {
  // the request as sent, output limit included: a verified replay answers by its hash
  const sent = withOutputLimit(request)
  return generate(sent).pipe(
    // a reply far longer than any agent uses is cut where it is read, so its copies (parsing, events) stay small
    Effect.map((r) =>
      withoutSecrets(r.text.length > SIZE_CAPS.replyChars ? { ...r, text: capText(r.text, SIZE_CAPS.replyChars) } : r)
    ),
    Effect.tap((r) =>
      emit("model_call", {
        role: request.role,
        model: r.model,
        promptTokens: r.usage.promptTokens,
        completionTokens: r.usage.completionTokens,
        durationMs: r.durationMs,
        attempt,
        ok: true,
        cached: r.cached ?? false,
        messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
        reply: r.text,
        ...(r.thinking ? { thinking: r.thinking } : {}),
        // what a verified replay (`bench --replay-from`) answers this request with: its native calls, keyed by the request
        ...(r.toolCalls && r.toolCalls.length > 0 ? { toolCalls: r.toolCalls.map(plainToolCall) } : {}),
        request: requestHash(sent)
      })
    ),
    // OpenTelemetry's gen_ai names, so a trace viewer sums the tokens without knowing smurfs
    Effect.tap((r) =>
      Effect.annotateCurrentSpan({
        "gen_ai.response.model": r.model,
        "gen_ai.usage.input_tokens": r.usage.promptTokens,
        "gen_ai.usage.output_tokens": r.usage.completionTokens,
        cached: r.cached ?? false
      })
    ),
    Effect.tapError((e) =>
      emit("model_call", {
        role: request.role,
        model: "",
        promptTokens: 0,
        completionTokens: 0,
        durationMs: 0,
        attempt,
        ok: false,
        error: e.message,
        request: requestHash(sent)
      })
    ),
    // the span's place in the code is always this line: capturing a stack trace for it on every call is waste
    Effect.withSpan("LanguageModel.call", { attributes: { role: request.role, attempt } }, { captureStackTrace: false })
  )
}
