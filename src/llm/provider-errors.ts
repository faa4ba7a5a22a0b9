// Turns what an HTTP model client threw into the model layer's tagged errors, without leaking secrets.

import * as Effect from "effect/Effect"
import { redactText, secretValues } from "../trace/redact.ts"
import { ReplyTooLarge, TooManyRedirects } from "./bounded-fetch.ts"
import { readServerOverflow } from "./context-overflow.ts"
import {
  ContextOverflow,
  ModelNotFound,
  ModelServerError,
  ModelUnreachable,
  Overloaded,
  type ProviderError,
  Timeout
} from "./errors.ts"
import { providerWording } from "./providers.ts"

/** Who was called, for the error messages. */
export interface CallSite {
  readonly provider: string
  /** The server's address without credentials. */
  readonly host: string
  readonly model: string
  /** The calling agent's role, for Timeout. */
  readonly role: string
  readonly timeoutMs: number
  /** The context window the request was built for, to report an overflow the server detected. */
  readonly contextTokens?: number | undefined
  /** Values that must never appear in a message (API keys). */
  readonly secrets?: ReadonlyArray<string> | undefined
}

/** Socket-level codes that mean "nobody answers there" (a reset mid-reply is not one: see fromTransport). */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT"
])

/** undici's default headers and body timeouts, which bound every fetch whatever our own timeout. */
const NODE_FETCH_TIMEOUT_MS = 300_000

/** The longest server text quoted in a message. */
const MAX_DETAIL = 300

/** Remove the call's own secrets, the environment's and any key-shaped text from a server message. */
export const redact = (text: string, secrets: ReadonlyArray<string> = []): string =>
  redactText(text, [...secrets.filter((s) => s.length >= 4), ...secretValues()])

/** A URL for messages: credentials removed, no trailing slash. */
export const displayHost = (url: string): string => {
  // the same few addresses on every model built (once per task): parsed once
  let shown = shownHosts.get(url)
  if (shown === undefined) {
    shown = hostShown(url)
    if (shownHosts.size >= 64) shownHosts.clear()
    shownHosts.set(url, shown)
  }
  return shown
}
const shownHosts = new Map<string, string>()

const hostShown = (url: string): string => {
  try {
    const parsed = new URL(url)
    parsed.username = ""
    parsed.password = ""
    return parsed.toString().replace(/\/$/, "")
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//")
  }
}

/** The chain of causes of an error, outermost first (fetch wraps socket errors in `cause`). */
const causes = (error: unknown): unknown[] => {
  const out: unknown[] = []
  let current: unknown = error
  while (current !== undefined && current !== null && out.length < 8) {
    out.push(current)
    current = typeof current === "object" ? (current as { cause?: unknown }).cause : undefined
  }
  return out
}

const codeOf = (error: unknown): string | undefined => {
  for (const c of causes(error)) {
    const code = typeof c === "object" && c !== null ? (c as { code?: unknown }).code : undefined
    if (typeof code === "string") return code
    // AggregateError (happy eyeballs: ::1 and 127.0.0.1 both refused)
    const errors = typeof c === "object" && c !== null ? (c as { errors?: unknown }).errors : undefined
    if (Array.isArray(errors))
      for (const inner of errors) {
        const innerCode = codeOf(inner)
        if (innerCode) return innerCode
      }
  }
  return undefined
}

const messageOf = (error: unknown): string =>
  causes(error)
    .map((c) => (c instanceof Error ? c.message : typeof c === "string" ? c : ""))
    .filter((m) => m.length > 0)
    .join(": ")

/**
 * Milliseconds to wait from `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date).
 * Undefined when the server gave no usable hint.
 */
export const parseRetryAfter = (
  headers: { get(name: string): string | null } | undefined,
  now = Date.now()
): number | undefined => {
  if (!headers) return undefined
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "")
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms)
  const raw = headers.get("retry-after")
  if (raw === null || raw.trim() === "") return undefined
  const seconds = Number(raw.trim())
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined
  const date = Date.parse(raw)
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined
}

/** Ollama's words (and llama.cpp's) for a tool call it could not parse out of the model's text. */
const TOOL_CALL_PARSE_ERROR =
  /error parsing tool call|failed to parse tool call|tool call.{0,40}pars(e|ing) (error|failed)/i

/** The setting that says where a provider's server listens, as advice for a path nobody serves. */
const addressPathOf = (provider: string): string => {
  const wording = providerWording(provider)
  return wording.addressPath ?? wording.address
}

/** The tagged error for an HTTP status the server answered with. */
export const fromStatus = (
  site: CallSite,
  status: number,
  serverMessage: string,
  headers: { get(name: string): string | null } | undefined
): ProviderError => {
  const detail = redact(serverMessage, site.secrets).slice(0, MAX_DETAIL)
  if (status === 404) {
    // A 404 that does not talk about a model is a wrong address (e.g. a /v1 missing), not a missing model.
    if (serverMessage.trim() !== "" && !/model/i.test(serverMessage))
      return new ModelServerError({
        status,
        host: site.host,
        detail: `no such endpoint (${detail}). Check that ${addressPathOf(site.provider)} points at the model server.`
      })
    return new ModelNotFound({ provider: site.provider, model: site.model })
  }
  if (status === 429 || status === 503)
    return new Overloaded({ status, retryAfterMs: parseRetryAfter(headers), host: site.host })
  if (status === 401 || status === 403)
    return new ModelServerError({
      status,
      host: site.host,
      detail: `the server refused the credentials (${detail}). Set OPENAI_API_KEY to a key this server accepts.`
    })
  // llama.cpp, vLLM, Ollama (asked not to cut) and OpenAI refuse a prompt over the window with a 400 that says so
  const overflow = status === 400 || status === 413 ? readServerOverflow(serverMessage) : undefined
  if (overflow)
    return new ContextOverflow({
      role: site.role,
      provider: site.provider,
      server: overflow.server,
      promptTokens: overflow.promptTokens,
      completionTokens: overflow.completionTokens,
      // the server's own figure; else the window the request was built for
      contextTokens: overflow.contextTokens ?? site.contextTokens
    })
  // Ollama answers 400 "model ... not found" on some versions.
  if (/model\b.*\bnot found/i.test(serverMessage))
    return new ModelNotFound({ provider: site.provider, model: site.model })
  // a tool call the server could not read is the model's bad reply, said with a 500 (see ModelServerError)
  return new ModelServerError({
    status,
    host: site.host,
    detail: detail || `HTTP ${status}`,
    ...(TOOL_CALL_PARSE_ERROR.test(serverMessage) ? { unparsedToolCall: true } : {})
  })
}

/**
 * The tagged error for a failure without an HTTP status: refused or reset connections, timeouts,
 * a reply cut mid-body, a body that is not JSON.
 */
export const fromTransport = (site: CallSite, error: unknown, timedOut: boolean): ProviderError => {
  if (timedOut) return new Timeout({ ms: site.timeoutMs, role: site.role })
  const tooLarge = causes(error).find((c): c is ReplyTooLarge => c instanceof ReplyTooLarge)
  if (tooLarge)
    return new ModelServerError({
      host: site.host,
      detail: `${tooLarge.message}: check the server (a runaway generation) or lower the reply length (num_predict, max_tokens)`
    })
  // a redirect loop is an answer, not silence: "start the server" would send the user the wrong way
  const redirects = causes(error).find((c): c is TooManyRedirects => c instanceof TooManyRedirects)
  if (redirects || /redirect count exceeded/i.test(messageOf(error)))
    return new ModelServerError({
      host: site.host,
      detail: `the server answered with too many redirects (more than ${redirects?.redirects ?? 20}${redirects ? `, the last to ${displayHost(redirects.url)}` : ""}): a redirect loop. Check the server's address (${providerWording(site.provider).address}) and any proxy in front of it`
    })
  const code = codeOf(error)
  // Node's fetch gives up on its own after 300 s without headers (a long non-streaming reply).
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT")
    return new Timeout({ ms: Math.min(site.timeoutMs, NODE_FETCH_TIMEOUT_MS), role: site.role })
  const text = messageOf(error)
  // A reset while the body streams ("terminated") means the server answered and then dropped the
  // connection (a crash, out of memory, a proxy): "start the server" would be the wrong advice.
  if ((code === "ECONNRESET" || code === "EPIPE") && /terminated/i.test(text))
    return new ModelServerError({
      host: site.host,
      detail: `the server reset the connection (${code}) in the middle of its reply. It is running but dropped the request: check its log (a crash, running out of memory) or a proxy in between`
    })
  if (code && UNREACHABLE_CODES.has(code))
    return new ModelUnreachable({ provider: site.provider, host: site.host, cause: code })
  if (error instanceof SyntaxError || causes(error).some((c) => c instanceof SyntaxError))
    return new ModelServerError({
      host: site.host,
      detail: `the reply was not valid JSON (${redact(text, site.secrets).slice(0, MAX_DETAIL)})`
    })
  if (code === "UND_ERR_SOCKET" || /terminated|other side closed|socket hang up|premature close/i.test(text))
    return new ModelServerError({
      host: site.host,
      detail: "the server closed the connection before the reply was complete"
    })
  if (/fetch failed|network|connect/i.test(text))
    return new ModelUnreachable({ provider: site.provider, host: site.host, cause: code ?? "network error" })
  return new ModelServerError({
    host: site.host,
    detail: redact(text || String(error), site.secrets).slice(0, MAX_DETAIL)
  })
}

/** Whether a value is a promise (or any thenable, which `await` would wait for). */
export const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  value !== null &&
  (typeof value === "object" || typeof value === "function") &&
  typeof (value as { then?: unknown }).then === "function"

/**
 * A call that returns a promise, as an Effect with a deadline: `run` gets a signal that aborts after `ms`
 * (with a TimeoutError, as AbortSignal.timeout) or when the fiber is interrupted, and `onError` words a
 * failure, told whether the deadline had passed. One controller and one timer per call, and no more:
 * Effect.tryPromise with AbortSignal.timeout and AbortSignal.any cost ten times as much per model call (their
 * timers stay queued until they fire), and tryPromise makes a controller of its own for the interruption. A `run` that answers at once (a value, not a
 * promise) is done then, without a timer or a wait for the next turn.
 */
export const tryPromiseWithin = <A, E>(
  ms: number,
  run: (signal: AbortSignal) => A | PromiseLike<A>,
  onError: (error: unknown, timedOut: boolean) => E
): Effect.Effect<A, E> =>
  Effect.callback<A, E>((resume) => {
    const controller = new AbortController()
    let expired = false
    // the failure is worded once the fiber runs again, as tryPromise's `catch` is
    const fail = (e: unknown) => resume(Effect.suspend(() => Effect.fail(onError(e, expired))))
    let answer: A | PromiseLike<A>
    try {
      answer = run(controller.signal)
    } catch (e) {
      return fail(e)
    }
    if (!isPromiseLike(answer)) return resume(Effect.succeed(answer))
    const timer = setTimeout(() => {
      expired = true
      controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"))
    }, ms)
    timer.unref?.()
    answer.then(
      (a) => {
        clearTimeout(timer)
        resume(Effect.succeed(a))
      },
      (e: unknown) => {
        clearTimeout(timer)
        fail(e)
      }
    )
    // interrupted: the call is abandoned, its request aborted
    return Effect.sync(() => {
      clearTimeout(timer)
      controller.abort()
    })
  })
