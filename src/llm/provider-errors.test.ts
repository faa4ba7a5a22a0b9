import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { describe, expect, it } from "vitest"
import {
  type CallSite,
  displayHost,
  fromStatus,
  fromTransport,
  parseRetryAfter,
  redact,
  tryPromiseWithin
} from "./provider-errors.ts"
// the library's providers, whose wording the messages use
import "./spec.ts"

const headers = (values: Record<string, string>) => new Headers(values)
const site: CallSite = {
  provider: "ollama",
  host: "http://127.0.0.1:11434",
  model: "qwen2.5:7b",
  role: "planner",
  timeoutMs: 1000,
  secrets: ["top-secret-key"]
}

describe("parseRetryAfter", () => {
  it("reads seconds, milliseconds and HTTP dates", () => {
    expect(parseRetryAfter(headers({ "retry-after": "3" }))).toBe(3000)
    expect(parseRetryAfter(headers({ "retry-after": "0.5" }))).toBe(500)
    expect(parseRetryAfter(headers({ "retry-after-ms": "250", "retry-after": "9" }))).toBe(250)
    const now = Date.parse("2026-01-01T00:00:00Z")
    expect(parseRetryAfter(headers({ "retry-after": "Thu, 01 Jan 2026 00:00:07 GMT" }), now)).toBe(7000)
    expect(parseRetryAfter(headers({ "retry-after": "Thu, 01 Jan 2025 00:00:07 GMT" }), now)).toBe(0)
  })

  it("is undefined without a usable hint", () => {
    expect(parseRetryAfter(undefined)).toBeUndefined()
    expect(parseRetryAfter(headers({}))).toBeUndefined()
    expect(parseRetryAfter(headers({ "retry-after": "soon" }))).toBeUndefined()
    expect(parseRetryAfter(headers({ "retry-after": "-1" }))).toBeUndefined()
  })
})

describe("redaction", () => {
  it("removes known secrets, bearer tokens and sk- keys", () => {
    expect(redact("key top-secret-key rejected", ["top-secret-key"])).toBe("key [REDACTED] rejected")
    expect(redact("Authorization: Bearer abc.def")).toBe("Authorization: [REDACTED]")
    expect(redact("Incorrect API key provided: sk-proj-abcdefgh1234")).toBe("Incorrect API key provided: [REDACTED]")
  })

  it("strips credentials from hosts", () => {
    expect(displayHost("http://user:pass@gpu-box:11434/")).toBe("http://gpu-box:11434")
    expect(displayHost("http://127.0.0.1:8080/v1")).toBe("http://127.0.0.1:8080/v1")
  })
})

describe("error mapping", () => {
  it("a 500 saying the server could not parse the model's tool call is the model's bad reply, not the server's fault", () => {
    const unparsed = fromStatus(
      site,
      500,
      "error parsing tool call: raw='{expression: 6*7}', err=invalid character",
      undefined
    )
    expect(unparsed).toMatchObject({
      _tag: "ModelServerError",
      status: 500,
      unparsedToolCall: true,
      serverFault: false,
      retryable: false
    })
    expect(fromStatus(site, 500, "boom", undefined)).toMatchObject({
      serverFault: true,
      fatalToTask: false,
      kind: "unavailable"
    })
  })

  it("maps statuses to tagged errors", () => {
    expect(fromStatus(site, 404, "model not found", undefined)._tag).toBe("ModelNotFound")
    expect(fromStatus(site, 404, "", undefined)._tag).toBe("ModelNotFound")
    const wrongPath = fromStatus({ ...site, provider: "openai" }, 404, "404 page not found", undefined)
    expect(wrongPath).toMatchObject({ _tag: "ModelServerError", status: 404 })
    expect(wrongPath.message).toContain("OPENAI_BASE_URL")
    expect(fromStatus(site, 400, 'model "x" not found, try pulling it first', undefined)._tag).toBe("ModelNotFound")
    expect(fromStatus(site, 503, "busy", headers({ "retry-after": "1" }))).toMatchObject({
      _tag: "Overloaded",
      status: 503,
      retryAfterMs: 1000
    })
    expect(fromStatus(site, 429, "slow down", undefined)).toMatchObject({ _tag: "Overloaded", status: 429 })
    expect(fromStatus(site, 500, "boom", undefined)).toMatchObject({ _tag: "ModelServerError", status: 500 })
    expect(
      fromStatus(
        { ...site, contextTokens: 8192 },
        400,
        "This model's maximum context length is 8192 tokens. However, you requested 9500 tokens (9000 in the messages).",
        undefined
      )
    ).toMatchObject({ _tag: "ContextOverflow", role: "planner", promptTokens: 9500, contextTokens: 8192 })
    expect(
      fromStatus(site, 400, "the request exceeds the available context size, try increasing it", undefined)._tag
    ).toBe("ContextOverflow")
    expect(fromStatus(site, 400, "invalid tool schema", undefined)._tag).toBe("ModelServerError")
    const auth = fromStatus(site, 401, "bad key top-secret-key", undefined)
    expect(auth.message).toContain("OPENAI_API_KEY")
    expect(auth.message).not.toContain("top-secret-key")
  })

  it("maps transport failures to tagged errors", () => {
    const refused = new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:11434"), { code: "ECONNREFUSED" })
    })
    expect(fromTransport(site, refused, false)._tag).toBe("ModelUnreachable")
    const dns = new TypeError("fetch failed", {
      cause: Object.assign(new Error("getaddrinfo ENOTFOUND gpu-box"), { code: "ENOTFOUND" })
    })
    expect(fromTransport(site, dns, false)._tag).toBe("ModelUnreachable")
    const both = new TypeError("fetch failed", {
      cause: new AggregateError([Object.assign(new Error("a"), { code: "ECONNREFUSED" })])
    })
    expect(fromTransport(site, both, false)._tag).toBe("ModelUnreachable")
    expect(
      fromTransport(
        site,
        new TypeError("terminated", {
          cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" })
        }),
        false
      )._tag
    ).toBe("ModelServerError")
    expect(fromTransport(site, new SyntaxError("Unexpected end of JSON input"), false).message).toContain(
      "not valid JSON"
    )
    const headersTimeout = new TypeError("fetch failed", {
      cause: Object.assign(new Error("Headers Timeout Error"), { code: "UND_ERR_HEADERS_TIMEOUT" })
    })
    expect(fromTransport({ ...site, timeoutMs: 600_000 }, headersTimeout, false)).toMatchObject({
      _tag: "Timeout",
      ms: 300_000
    })
    expect(fromTransport(site, new DOMException("aborted", "AbortError"), true)).toMatchObject({
      _tag: "Timeout",
      ms: 1000,
      role: "planner"
    })
  })
})

describe("tryPromiseWithin", () => {
  const worded = (e: unknown, timedOut: boolean) => ({ error: String(e), timedOut })

  it("fails a call still pending at its deadline, its signal aborted with a TimeoutError", async () => {
    let signal: AbortSignal | undefined
    const exit = await Effect.runPromiseExit(
      tryPromiseWithin(
        5,
        (s) => {
          signal = s
          return new Promise((_, reject) => s.addEventListener("abort", () => reject(s.reason), { once: true }))
        },
        worded
      )
    )
    expect(exit).toEqual(Exit.fail({ error: "TimeoutError: The operation was aborted due to timeout", timedOut: true }))
    expect((signal?.reason as DOMException | undefined)?.name).toBe("TimeoutError")
  })

  it("words a rejection and a throw as failures before the deadline, and succeeds with what the promise gives", async () => {
    expect(await Effect.runPromiseExit(tryPromiseWithin(60_000, () => Promise.reject("no"), worded))).toEqual(
      Exit.fail({ error: "no", timedOut: false })
    )
    const thrown = tryPromiseWithin(
      60_000,
      () => {
        throw new Error("at once")
      },
      worded
    )
    expect(await Effect.runPromiseExit(thrown)).toEqual(Exit.fail({ error: "Error: at once", timedOut: false }))
    expect(await Effect.runPromise(tryPromiseWithin(60_000, async () => 42, worded))).toBe(42)
  })

  it("aborts the call's signal when the fiber is interrupted", async () => {
    let signal: AbortSignal | undefined
    const fiber = Effect.runFork(
      tryPromiseWithin(
        60_000,
        (s) => {
          signal = s
          return new Promise<never>(() => {})
        },
        worded
      )
    )
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(signal?.aborted).toBe(false)
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(signal?.aborted).toBe(true)
  })

  it("is done at once for a call that answers with a value: it runs synchronously, no timer started", () => {
    const started = setTimeout
    let timers = 0
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      timers++
      return started(...args)
    }) as typeof setTimeout
    try {
      expect(Effect.runSync(tryPromiseWithin(60_000, () => "now", worded))).toBe("now")
    } finally {
      globalThis.setTimeout = started
    }
    expect(timers).toBe(0)
  })
})
