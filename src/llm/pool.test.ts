import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type FakeOllama, startFakeOllama } from "../../test/fake-servers/ollama.ts"
import { ModelServerError, ModelUnreachable, type ProviderError } from "./errors.ts"
import { type GenerateRequest, LanguageModel, type LanguageModelShape } from "./language-model.ts"
import { makePool, type PoolEndpoint, PoolStats, poolStatsLayer } from "./pool.ts"
import { modelLayer, parseEndpoint } from "./spec.ts"

const request: GenerateRequest = { role: "executor.thought", messages: [{ role: "user", content: "hi" }] }

/** An in-memory endpoint whose behaviour the test switches: up, refusing, or failing with 5xx. */
const switchable = (name: string) => {
  const state = { mode: "up" as "up" | "refuse" | "5xx", calls: 0, probes: 0, inFlight: 0, maxInFlight: 0 }
  const fail = (): ProviderError =>
    state.mode === "refuse"
      ? new ModelUnreachable({ provider: "ollama", host: name })
      : new ModelServerError({ host: name, status: 500, detail: "boom" })
  const model: LanguageModelShape = {
    info: { spec: "ollama:m", provider: "ollama", model: "m", contextTokens: 8192, supportsTools: true },
    generate: () =>
      Effect.suspend(() => {
        state.calls++
        state.inFlight++
        state.maxInFlight = Math.max(state.maxInFlight, state.inFlight)
        return (
          state.mode === "up"
            ? Effect.succeed({ text: name, usage: { promptTokens: 1, completionTokens: 1 }, model: "m", durationMs: 0 })
            : Effect.fail(fail())
        ).pipe(Effect.delay(5), Effect.ensuring(Effect.sync(() => void state.inFlight--)))
      })
  }
  const probe = Effect.suspend(() => (state.probes++, state.mode === "up" ? Effect.void : Effect.fail(fail())))
  const endpoint: PoolEndpoint = { name, concurrency: 2, model, probe }
  return { state, endpoint }
}

describe("makePool", () => {
  it("sends each request to the least-loaded endpoint", async () => {
    const a = switchable("a")
    const b = switchable("b")
    const answers = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { model } = yield* makePool([a.endpoint, b.endpoint])
          return yield* Effect.forEach(Array.from({ length: 8 }), () => model.generate(request), { concurrency: 4 })
        })
      )
    )
    expect(answers).toHaveLength(8)
    expect(a.state.calls).toBe(4)
    expect(b.state.calls).toBe(4)
    expect(a.state.maxInFlight).toBe(2)
  })

  it("takes out an endpoint that refuses, retries its calls elsewhere, probes it and puts it back when it answers", async () => {
    const a = switchable("a")
    const b = switchable("b")
    a.state.mode = "refuse"
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { model, stats } = yield* makePool([a.endpoint, b.endpoint], { probeIntervalMs: 10 })
          const first = yield* Effect.forEach(Array.from({ length: 6 }), () => model.generate(request), {
            concurrency: 3
          })
          const whileOut = stats().find((s) => s.endpoint === "a")!
          const callsWhileOut = a.state.calls
          a.state.mode = "up"
          yield* Effect.sleep(50)
          const after = yield* Effect.forEach(Array.from({ length: 4 }), () => model.generate(request), {
            concurrency: 2
          })
          return { first, whileOut, callsWhileOut, after, final: stats() }
        })
      )
    )
    expect(result.first.every((r) => r.text === "b")).toBe(true) // no request failed
    expect(result.whileOut.healthy).toBe(false)
    expect(result.whileOut.ejections).toBe(1)
    expect(result.callsWhileOut).toBeLessThanOrEqual(3) // only the requests that raced the first refusal
    expect(a.state.probes).toBeGreaterThan(0)
    expect(result.after.some((r) => r.text === "a")).toBe(true) // back in rotation
    expect(result.final.find((s) => s.endpoint === "a")!.healthy).toBe(true)
  })

  it("takes out an endpoint only after repeated 5xx, and fails only when every endpoint fails", async () => {
    const a = switchable("a")
    const b = switchable("b")
    a.state.mode = "5xx"
    b.state.mode = "5xx"
    const outcome = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { model, stats } = yield* makePool([a.endpoint, b.endpoint], {
            failuresToEject: 2,
            probeIntervalMs: 1000
          })
          const one = yield* Effect.flip(model.generate(request))
          const afterOne = stats().map((s) => s.healthy)
          const two = yield* Effect.flip(model.generate(request))
          return { one, two, afterOne, afterTwo: stats().map((s) => s.healthy) }
        })
      )
    )
    expect(outcome.one._tag).toBe("ModelServerError")
    expect(outcome.afterOne).toEqual([true, true])
    expect(outcome.afterTwo).toEqual([false, false])
    expect(outcome.two._tag).toBe("ModelServerError")
  })

  it("reports every pool's endpoints to PoolStats", async () => {
    const a = switchable("a")
    const snapshot = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { model } = yield* makePool([a.endpoint])
          yield* model.generate(request)
          return (yield* PoolStats).snapshot()
        })
      ).pipe(Effect.provide(poolStatsLayer))
    )
    expect(snapshot).toEqual([
      { endpoint: "a", calls: 1, errors: 0, meanLatencyMs: expect.any(Number), ejections: 0, healthy: true }
    ])
  })
})

describe("parseEndpoint", () => {
  it("reads url and url*N, and refuses what is not an http(s) address", async () => {
    expect(await Effect.runPromise(parseEndpoint("http://gpu1:11434*4"))).toEqual({
      url: "http://gpu1:11434",
      concurrency: 4
    })
    expect(await Effect.runPromise(parseEndpoint(" https://gpu2/v1 "))).toEqual({
      url: "https://gpu2/v1",
      concurrency: undefined
    })
    const bad = await Effect.runPromise(Effect.flip(parseEndpoint("gpu1:11434")))
    expect(bad.message).toContain("http(s)://host:port")
  })
})

describe("a pool of two Ollama servers on loopback", () => {
  const servers: FakeOllama[] = []
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()))
  })

  it("loses no request when one server dies mid-run", async () => {
    const a = await startFakeOllama([{ content: "from a", delayMs: 20 }])
    const b = await startFakeOllama([{ content: "from b", delayMs: 20 }])
    servers.push(b)
    const layer = modelLayer("ollama:qwen2.5:7b", { endpoints: [`${a.url}*2`, `${b.url}*2`], timeoutMs: 2000 })
    const texts = await Effect.runPromise(
      Effect.gen(function* () {
        const model = yield* LanguageModel
        const first = yield* Effect.forEach(Array.from({ length: 8 }), () => model.generate(request), {
          concurrency: 4
        })
        // a dies with requests in flight
        const second = yield* Effect.forEach(
          Array.from({ length: 12 }),
          (_, i) =>
            i === 2
              ? Effect.andThen(
                  Effect.promise(() => a.close()),
                  model.generate(request)
                )
              : model.generate(request),
          { concurrency: 4 }
        )
        return [...first, ...second].map((r) => r.text)
      }).pipe(Effect.provide(Layer.fresh(layer)))
    )
    expect(texts).toHaveLength(20)
    expect(texts.filter((t) => t === "from a").length).toBeGreaterThan(0)
    expect(texts.slice(8 + 6).every((t) => t === "from b")).toBe(true)
  })
})
