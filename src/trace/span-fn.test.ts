import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { spanFn } from "./span-fn.ts"

describe("spanFn", () => {
  it("runs the body in a span of its name, with its arguments, pipeables applied inside the span", async () => {
    const double = spanFn("Test.double")(
      function* (n: number) {
        const span = yield* Effect.currentSpan
        return { n: n * 2, span: span.name }
      },
      (effect, n) => Effect.map(effect, (r) => ({ ...r, given: n }))
    )
    expect(await Effect.runPromise(double(21))).toEqual({ n: 42, span: "Test.double", given: 21 })
  })

  it("captures no stack trace for the call or the span", async () => {
    // Effect sets Error.stackTraceLimit around each capture: count those writes while a call is made
    const limit = Object.getOwnPropertyDescriptor(Error, "stackTraceLimit")!
    let value = Error.stackTraceLimit
    let writes = 0
    Object.defineProperty(Error, "stackTraceLimit", {
      configurable: true,
      get: () => value,
      set: (v: number) => {
        writes++
        value = v
      }
    })
    try {
      const untraced = spanFn("Test.untraced")(function* () {
        return yield* Effect.currentSpan
      })
      const traced = Effect.fn("Test.traced")(function* () {
        return yield* Effect.currentSpan
      })
      let spanFnWrites = 0
      let fnWrites = 0
      {
        const before = writes
        await Effect.runPromise(untraced())
        spanFnWrites = writes - before
      }
      {
        const before = writes
        await Effect.runPromise(traced())
        fnWrites = writes - before
      }
      expect(spanFnWrites).toBe(0)
      // Effect.fn's, for contrast: the count would be 0 for anything if the counting failed
      expect(fnWrites).toBeGreaterThan(0)
    } finally {
      Object.defineProperty(Error, "stackTraceLimit", limit)
    }
  })
})
