// The safe tool call shared by all tools: timeout, caught failures, serialized and size-capped content.

import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import { tooDeepMessage, valueNestsDeeper } from "../llm/nesting.ts"
import { isPromiseLike, tryPromiseWithin } from "../llm/provider-errors.ts"
import { redactText, secretValues } from "../trace/redact.ts"
import { enterToolCall, trackToolCall } from "./exit-guard.ts"
import type { ToolResult } from "./tool.ts"

/** Limits of a safe call. */
export interface SafeCallOptions {
  /** Milliseconds before the call is abandoned and reported as a timeout. */
  readonly timeoutMs?: number | undefined
  /** Hard cap on stored content, in characters; longer content is cut and marked `truncated`. */
  readonly maxContentChars?: number | undefined
}

/** Defaults of a safe call, in one place. */
export const SAFE_CALL_DEFAULTS = {
  timeoutMs: 30_000,
  maxContentChars: 1_000_000
} as const

/** ToolBench's cut of an observation before a model sees it. */
export const OBSERVATION_MAX_CHARS = 1024

/** Cut an observation as ToolBench does: the first `max` characters plus "..." when longer. */
export const truncateObservation = (text: string, max: number = OBSERVATION_MAX_CHARS): string =>
  text.length > max ? `${text.slice(0, max)}...` : text

const errorText = (e: unknown): string => {
  if (e instanceof Error) return e.message || e.name
  if (typeof e === "string") return e
  try {
    return JSON.stringify(e) ?? String(e)
  } catch {
    return String(e)
  }
}

/** JSON text of any value; circular references, bigints and other non-JSON parts become readable placeholders. */
export const stringifyOutput = (value: unknown): string => {
  if (typeof value === "string") return value
  try {
    const text = JSON.stringify(value)
    if (text !== undefined) return text
  } catch {
    // circular or bigint: fall through to the tolerant replacer
  }
  const seen = new WeakSet<object>()
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "bigint") return v.toString()
    if (typeof v === "object" && v !== null) {
      if (seen.has(v)) return "[Circular]"
      seen.add(v)
    }
    return v
  })
  return text ?? String(value)
}

/** Cut content to the storage cap. */
export const capContent = (result: ToolResult, maxChars: number = SAFE_CALL_DEFAULTS.maxContentChars): ToolResult =>
  result.content.length > maxChars ? cutContent(result, result.content.slice(0, maxChars)) : result

/** A result whose content was cut: marked `truncated`, its structured response (now longer than the text) dropped. */
export const cutContent = (result: ToolResult, content: string): ToolResult => {
  const { structured: _, ...rest } = result
  return { ...rest, content, truncated: true }
}

/**
 * Results a guard redacted, each a new object of its own. A call is often guarded twice (a defineTool
 * tool's own safe call inside the agent's guard): the outer guard gets such a result back and does not
 * read the environment again. A tool's own result object is never trusted as redacted.
 */
const redacted = new WeakSet<ToolResult>()

/** A result with every secret in its content and error redacted. */
const redactResult = (result: ToolResult): ToolResult => {
  if (redacted.has(result)) return result
  const secrets = secretValues() // read the environment once for both texts
  const content = redactText(result.content, secrets)
  const error = result.error === undefined ? undefined : redactText(result.error, secrets)
  // a structured response holding a secret is sent as its redacted text
  const { structured, ...rest } = result
  const out: ToolResult =
    content === result.content && error === result.error
      ? { ...result }
      : { ...rest, content, ...(error === undefined ? {} : { error }) }
  redacted.add(out)
  return out
}

/** A tool implementation's return value as a result: `undefined`, functions and symbols are failures, the rest is content. */
export const toToolResult = (
  toolName: string,
  value: unknown,
  maxChars: number = SAFE_CALL_DEFAULTS.maxContentChars
): ToolResult => {
  if (value === undefined) return { ok: false, content: "", error: `tool "${toolName}" returned nothing (undefined)` }
  if (typeof value === "function" || typeof value === "symbol")
    return { ok: false, content: "", error: `tool "${toolName}" returned a ${typeof value}, not data` }
  // serializing (and every later walk) would overflow the stack
  if (valueNestsDeeper(value))
    return {
      ok: false,
      content: "",
      error: `tool "${toolName}" returned a value that cannot be used: ${tooDeepMessage()}`
    }
  return capContent({ ok: true, content: stringifyOutput(value) }, maxChars)
}

/** A result capped, redacted, and a failure or defect of `effect` as an ok:false result: the end of every guard. */
const settle = (toolName: string, effect: Effect.Effect<ToolResult, unknown>, maxChars: number) =>
  effect.pipe(
    // secrets a tool returned never reach a model server (nor anything written later)
    Effect.map((result) => redactResult(capContent(result, maxChars))),
    Effect.catchCause((cause) => {
      const failure = Cause.squash(cause)
      return Effect.succeed<ToolResult>({
        ok: false,
        content: "",
        error: `tool "${toolName}" failed: ${errorText(failure)}`
      })
    })
  )

/** The result of a call abandoned at its timeout. */
const timedOut = (toolName: string, timeoutMs: number): ToolResult => ({
  ok: false,
  content: "",
  error: `tool "${toolName}" did not answer within ${timeoutMs} ms (timeout)`
})

/**
 * Guard an effect that produces a ToolResult: a timeout, a failure or a defect becomes an `ok: false`
 * result, and content is capped. The returned effect never fails.
 */
export const guardToolCall = (
  toolName: string,
  effect: Effect.Effect<ToolResult, unknown>,
  options: SafeCallOptions = {}
): Effect.Effect<ToolResult> => {
  const timeoutMs = options.timeoutMs ?? SAFE_CALL_DEFAULTS.timeoutMs
  const maxChars = options.maxContentChars ?? SAFE_CALL_DEFAULTS.maxContentChars
  // Already guarded as tightly (a defineTool tool's own safe call, which the agents guard again): a second
  // guard could change nothing, and its timeout is a race of two fibers on every call.
  const inner = guards.get(effect)
  if (inner && inner.toolName === toolName && inner.timeoutMs <= timeoutMs && inner.maxChars <= maxChars)
    return effect as Effect.Effect<ToolResult>
  const guarded = settle(
    toolName,
    trackToolCall(
      toolName,
      Effect.suspend(() => effect)
    ).pipe(Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => Effect.succeed(timedOut(toolName, timeoutMs)) })),
    maxChars
  )
  guards.set(guarded, { toolName, timeoutMs, maxChars })
  return guarded
}

/** The effects guardToolCall built, with their limits: each never fails, is timed out, capped and redacted. */
const guards = new WeakMap<
  Effect.Effect<ToolResult, unknown>,
  { toolName: string; timeoutMs: number; maxChars: number }
>()

/**
 * Run a tool implementation safely: sync or async, throwing or rejecting, hanging or returning garbage,
 * the answer is a ToolResult. The implementation gets an AbortSignal that fires when the call is abandoned.
 * (A synchronous busy loop cannot be interrupted by any timeout in JavaScript; async work can.) The timeout
 * and the exit guard's mark live in the promise, not in fibers: a tool call is made on every agent step.
 */
export const safeCall = (
  toolName: string,
  run: (signal: AbortSignal) => unknown,
  options: SafeCallOptions = {}
): Effect.Effect<ToolResult> => {
  const timeoutMs = options.timeoutMs ?? SAFE_CALL_DEFAULTS.timeoutMs
  const maxChars = options.maxContentChars ?? SAFE_CALL_DEFAULTS.maxContentChars
  const guarded = settle(
    toolName,
    tryPromiseWithin(
      timeoutMs,
      (signal) => {
        const ended = enterToolCall(toolName)
        let value: unknown
        try {
          value = run(signal)
        } catch (e) {
          ended()
          throw e
        }
        // a tool that answers at once (a local function, a cache) is done now: no timer, race or wait
        if (!isPromiseLike(value)) {
          ended()
          return toToolResult(toolName, value, maxChars)
        }
        const expired = new Promise<typeof TIMED_OUT>((resolve) =>
          signal.addEventListener("abort", () => resolve(TIMED_OUT), { once: true })
        )
        // the signal aborts at the timeout, or when the call is interrupted (whose result nobody reads)
        return Promise.race([value, expired])
          .then((v) => (v === TIMED_OUT ? timedOut(toolName, timeoutMs) : toToolResult(toolName, v, maxChars)))
          .finally(ended)
      },
      (e) => e
    ),
    maxChars
  )
  guards.set(guarded, { toolName, timeoutMs, maxChars })
  return guarded
}

/** What a call's timeout resolves its race with (no tool can return it). */
const TIMED_OUT: unique symbol = Symbol("timed out")
