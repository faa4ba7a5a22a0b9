import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { guardToolCall, safeCall, stringifyOutput, truncateObservation } from "./call.ts"

const run = Effect.runPromise

describe("safeCall", () => {
  it("returns JSON content for objects and strings as they are", async () => {
    expect(await run(safeCall("t", () => ({ a: 1 })))).toEqual({ ok: true, content: '{"a":1}' })
    expect(await run(safeCall("t", async () => "plain text"))).toEqual({ ok: true, content: "plain text" })
  })

  it("answers a tool that returns at once without waiting for a later turn (it runs synchronously)", () => {
    expect(Effect.runSync(safeCall("t", () => ({ a: 1 })))).toEqual({ ok: true, content: '{"a":1}' })
    expect(
      Effect.runSync(
        safeCall("boom", () => {
          throw new Error("kaput")
        })
      )
    ).toEqual({ ok: false, content: "", error: 'tool "boom" failed: kaput' })
  })

  it("turns a throw into ok:false naming the tool and the error", async () => {
    const result = await run(
      safeCall("boom", () => {
        throw new Error("kaput")
      })
    )
    expect(result.ok).toBe(false)
    expect(result.error).toBe('tool "boom" failed: kaput')
  })

  it("turns a rejection (even of a non-Error) into ok:false", async () => {
    const result = await run(safeCall("rej", () => Promise.reject("no way")))
    expect(result).toMatchObject({ ok: false, error: 'tool "rej" failed: no way' })
  })

  it("abandons a call that hangs past its timeout and aborts its signal", async () => {
    let aborted = false
    const result = await run(
      safeCall(
        "slow",
        (signal) =>
          new Promise(() => {
            signal.addEventListener("abort", () => (aborted = true))
          }),
        { timeoutMs: 20 }
      )
    )
    expect(result).toMatchObject({ ok: false, error: 'tool "slow" did not answer within 20 ms (timeout)' })
    expect(aborted).toBe(true)
  })

  it("cuts a 5 MB output to the storage cap and marks it truncated", async () => {
    const big = "x".repeat(5_000_000)
    const result = await run(safeCall("big", () => big))
    expect(result.ok).toBe(true)
    expect(result.truncated).toBe(true)
    expect(result.content.length).toBe(1_000_000)
    const small = await run(safeCall("big", () => big, { maxContentChars: 10 }))
    expect(small.content).toBe("xxxxxxxxxx")
  })

  it("serializes non-JSON values (circular, bigint) instead of failing", async () => {
    const circular: Record<string, unknown> = { n: 1n }
    circular.self = circular
    const result = await run(safeCall("weird", () => circular))
    expect(result).toEqual({ ok: true, content: '{"n":"1","self":"[Circular]"}' })
    expect(stringifyOutput(new Map())).toBe("{}")
  })

  it("reports undefined and functions as failures", async () => {
    expect(await run(safeCall("void", () => undefined))).toMatchObject({
      ok: false,
      error: 'tool "void" returned nothing (undefined)'
    })
    expect(await run(safeCall("fn", () => () => 1))).toMatchObject({
      ok: false,
      error: 'tool "fn" returned a function, not data'
    })
    expect(await run(safeCall("null", () => null))).toEqual({ ok: true, content: "null" })
  })
})

describe("guardToolCall", () => {
  it("adds nothing to a call it already guarded as tightly, and its own limits to one guarded more loosely", async () => {
    const tight = guardToolCall("t", Effect.never, { timeoutMs: 20 })
    expect(guardToolCall("t", tight, { timeoutMs: 60_000 })).toBe(tight)
    expect(guardToolCall("other", tight, { timeoutMs: 60_000 })).not.toBe(tight)
    expect((await run(guardToolCall("t", tight, { timeoutMs: 60_000 }))).error).toContain("within 20 ms")
    const loose = guardToolCall("t", Effect.never, { timeoutMs: 60_000 })
    const outer = guardToolCall("t", loose, { timeoutMs: 20 })
    expect(outer).not.toBe(loose)
    expect((await run(outer)).error).toContain("within 20 ms")
  })

  it("redacts a result once when guarded twice, and never hands back the tool's own object", async () => {
    process.env["SMURFS_TEST_GUARD_TOKEN"] = "guard-secret-value-123"
    try {
      const own = { ok: true, content: "token guard-secret-value-123 and more" }
      const inner = await run(guardToolCall("t", Effect.succeed(own)))
      expect(inner).not.toBe(own)
      expect(inner.content).toBe("token [REDACTED] and more")
      expect(await run(guardToolCall("t", Effect.succeed(inner)))).toBe(inner)
      const clean = { ok: true, content: "nothing secret" }
      const once = await run(guardToolCall("t", Effect.succeed(clean)))
      expect(once).not.toBe(clean)
      expect(once).toEqual(clean)
      expect(await run(guardToolCall("t", Effect.succeed(once)))).toBe(once)
    } finally {
      delete process.env["SMURFS_TEST_GUARD_TOKEN"]
    }
  })

  it("turns a defect of an Effect into ok:false", async () => {
    const result = await run(guardToolCall("d", Effect.die(new Error("bug"))))
    expect(result).toMatchObject({ ok: false, error: 'tool "d" failed: bug' })
  })
})

describe("truncateObservation", () => {
  it("cuts to 1,024 characters plus ... only when longer", () => {
    expect(truncateObservation("a".repeat(1024))).toBe("a".repeat(1024))
    expect(truncateObservation("a".repeat(1025))).toBe(`${"a".repeat(1024)}...`)
    expect(truncateObservation("abcdef", 3)).toBe("abc...")
  })
})
