import { Duration, Effect, Schedule } from "effect"
import { describe, expect, it } from "vitest"
import { ModelServerError, Overloaded, type ProviderError } from "./errors.ts"
import type { GenerateRequest, GenerateResponse, LanguageModelShape } from "./language-model.ts"
import { endpointLimitsLayer, type ResilienceOptions, resilient, retryDelayMs, retrySchedule } from "./resilience.ts"

const request: GenerateRequest = { role: "executor", messages: [{ role: "user", content: "hi" }] }
const reply: GenerateResponse = {
  text: "ok",
  usage: { promptTokens: 1, completionTokens: 1 },
  model: "m",
  durationMs: 0
}
const OPTIONS: ResilienceOptions = {
  concurrency: 1,
  maxRetries: 4,
  retryBaseMs: 1,
  maxRetryDelayMs: 10,
  timeoutMs: 5_000,
  endpoint: "test:1"
}
const overloaded = (retryAfterMs?: number) => new Overloaded({ status: 503, retryAfterMs, host: "h" })

/** A model whose n-th call does what `script[n]` says (the last entry repeats), counting calls and concurrency. */
const scriptedModel = (script: ReadonlyArray<ProviderError | "ok" | "never" | { sleepMs: number }>) => {
  const stats = { calls: 0, inFlight: 0, maxInFlight: 0 }
  const model: LanguageModelShape = {
    info: { spec: "test:m", provider: "test", model: "m", contextTokens: 1000, supportsTools: true },
    generate: () =>
      Effect.suspend(() => {
        const step = script[Math.min(stats.calls, script.length - 1)]!
        stats.calls++
        if (step === "ok") return Effect.succeed(reply)
        if (step === "never") return Effect.never
        if ("sleepMs" in step)
          return Effect.acquireUseRelease(
            Effect.sync(() => {
              stats.inFlight++
              stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight)
            }),
            () => Effect.as(Effect.sleep(Duration.millis(step.sleepMs)), reply),
            () => Effect.sync(() => void stats.inFlight--)
          )
        return Effect.fail(step)
      })
  }
  return { model, stats }
}

const build = (model: LanguageModelShape, options: Partial<ResilienceOptions> = {}) =>
  Effect.runSync(resilient(model, { ...OPTIONS, ...options }))

describe("retries", () => {
  it("retries Overloaded until it succeeds", async () => {
    const { model, stats } = scriptedModel([overloaded(), overloaded(), "ok"])
    const response = await Effect.runPromise(build(model).generate(request))
    expect(response.text).toBe("ok")
    expect(stats.calls).toBe(3)
  })

  it("gives up with Overloaded after maxRetries", async () => {
    const { model, stats } = scriptedModel([overloaded()])
    const error = await Effect.runPromise(Effect.flip(build(model, { maxRetries: 3 }).generate(request)))
    expect(error._tag).toBe("Overloaded")
    expect(stats.calls).toBe(4)
  })

  it("does not retry other errors", async () => {
    const { model, stats } = scriptedModel([new ModelServerError({ status: 500, host: "h", detail: "boom" }), "ok"])
    const error = await Effect.runPromise(Effect.flip(build(model).generate(request)))
    expect(error._tag).toBe("ModelServerError")
    expect(stats.calls).toBe(1)
  })

  it("waits what the server asks (Retry-After), bounded by the cap, else the jittered backoff", () => {
    expect(retryDelayMs(overloaded(1500), 100, 30_000)).toBe(1500)
    expect(retryDelayMs(overloaded(120_000), 100, 30_000)).toBe(30_000)
    expect(retryDelayMs(overloaded(), 250, 30_000)).toBe(250)
    expect(retryDelayMs(overloaded(), 90_000, 30_000)).toBe(30_000)
  })

  it("the schedule doubles its delays with jitter, honours hints, and stops after maxRetries", async () => {
    const delays = await Effect.runPromise(
      Effect.gen(function* () {
        const step = yield* Schedule.toStep(retrySchedule({ maxRetries: 3, retryBaseMs: 100, maxRetryDelayMs: 5_000 }))
        const out: Array<number | "done"> = []
        for (const error of [overloaded(), overloaded(), overloaded(1234), overloaded()]) {
          const next = yield* Effect.result(step(0, error))
          out.push(next._tag === "Success" ? Duration.toMillis(next.success[1]) : "done")
        }
        return out
      })
    )
    const [first, second, third, fourth] = delays as [number, number, number, number | "done"]
    expect(first).toBeGreaterThanOrEqual(80)
    expect(first).toBeLessThanOrEqual(120)
    expect(second).toBeGreaterThanOrEqual(160)
    expect(second).toBeLessThanOrEqual(240)
    expect(third).toBe(1234)
    expect(fourth).toBe("done")
  })
})

describe("timeouts", () => {
  it("turns an attempt that never ends into Timeout, and frees its slot", async () => {
    const { model, stats } = scriptedModel(["never", "ok"])
    const resilientModel = build(model, { timeoutMs: 30 })
    const error = await Effect.runPromise(Effect.flip(resilientModel.generate(request)))
    expect(error).toMatchObject({ _tag: "Timeout", ms: 30, role: "executor" })
    // concurrency 1: the second call would wait forever if the timed-out attempt kept its permit
    const next = await Effect.runPromise(resilientModel.generate(request))
    expect(next.text).toBe("ok")
    expect(stats.calls).toBe(2)
  })

  it("a request's timeoutMs overrides the default", async () => {
    const { model } = scriptedModel(["never"])
    const error = await Effect.runPromise(
      Effect.flip(build(model, { timeoutMs: 60_000 }).generate({ ...request, options: { timeoutMs: 20 } }))
    )
    expect(error).toMatchObject({ _tag: "Timeout", ms: 20 })
  })

  it("adds no timer to a model that keeps the same deadline itself, and its own to one that keeps another", async () => {
    // the model says it times out at 30 ms itself (and here takes longer): the wrapper leaves the deadline to it
    const { model } = scriptedModel([{ sleepMs: 80 }])
    const own = build({ ...model, timeoutMs: 30 }, { timeoutMs: 30 })
    expect(own.timeoutMs).toBe(30)
    expect((await Effect.runPromise(own.generate(request))).text).toBe("ok")
    const other = build({ ...model, timeoutMs: 60_000 }, { timeoutMs: 30 })
    expect(await Effect.runPromise(Effect.flip(other.generate(request)))).toMatchObject({ _tag: "Timeout", ms: 30 })
  })
})

describe("concurrency", () => {
  it("holds in-flight calls to the configured number", async () => {
    const { model, stats } = scriptedModel([{ sleepMs: 15 }])
    const m = build(model, { concurrency: 3 })
    await Effect.runPromise(
      Effect.all(
        Array.from({ length: 10 }, () => m.generate(request)),
        { concurrency: "unbounded" }
      )
    )
    expect(stats.calls).toBe(10)
    expect(stats.maxInFlight).toBe(3)
  })

  it("models on one endpoint share its slots when EndpointLimits is provided", async () => {
    const shared = scriptedModel([{ sleepMs: 15 }])
    const program = Effect.gen(function* () {
      const a = yield* resilient(shared.model, { ...OPTIONS, concurrency: 2 })
      const b = yield* resilient(shared.model, { ...OPTIONS, concurrency: 2 })
      yield* Effect.all(
        [
          ...Array.from({ length: 4 }, () => a.generate(request)),
          ...Array.from({ length: 4 }, () => b.generate(request))
        ],
        { concurrency: "unbounded" }
      )
    })
    await Effect.runPromise(Effect.provide(program, endpointLimitsLayer))
    expect(shared.stats.maxInFlight).toBe(2)
  })
})
