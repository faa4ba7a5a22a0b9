import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import {
  ContextOverflow,
  ModelNotFound,
  ModelServerError,
  ModelUnreachable,
  Overloaded,
  type ProviderError,
  Timeout
} from "./errors.ts"
import type { GenerateRequest, LanguageModelShape } from "./language-model.ts"
import { isServerFailure, watchServer } from "./server-watch.ts"

const request: GenerateRequest = { role: "planner", messages: [{ role: "user", content: "hi" }] }

/** A model answering from a list of outcomes (an error, or "ok"), counting the calls it received. */
const model = (outcomes: ReadonlyArray<ProviderError | "ok">) => {
  let calls = 0
  const shape: LanguageModelShape = {
    info: { spec: "scripted:test", provider: "scripted", model: "test", contextTokens: 8192, supportsTools: true },
    generate: () =>
      Effect.suspend(() => {
        const outcome = outcomes[Math.min(calls++, outcomes.length - 1)]!
        return outcome === "ok"
          ? Effect.succeed({
              text: "ok",
              usage: { promptTokens: 1, completionTokens: 1 },
              model: "test",
              durationMs: 0
            })
          : Effect.fail(outcome)
      })
  }
  return { shape, calls: () => calls }
}
const call = (m: LanguageModelShape) => Effect.runPromise(Effect.result(m.generate(request)))

describe("server failures", () => {
  it.each<[string, ProviderError, boolean]>([
    ["refused", new ModelUnreachable({ provider: "ollama", host: "h" }), true],
    ["404 model", new ModelNotFound({ provider: "ollama", model: "m" }), true],
    ["404 endpoint / 5xx", new ModelServerError({ status: 404, host: "h", detail: "no such endpoint" }), true],
    ["429/503 after retries", new Overloaded({ status: 503, host: "h" }), true],
    ["timeout", new Timeout({ ms: 10, role: "planner" }), true],
    ["context overflow", new ContextOverflow({ role: "planner", promptTokens: 9000, contextTokens: 8192 }), false],
    [
      "a tool call the server could not parse",
      new ModelServerError({ status: 500, host: "h", detail: "error parsing tool call", unparsedToolCall: true }),
      false
    ]
  ])("%s is a server failure: %s", (_label, error, expected) => {
    expect(isServerFailure(error)).toBe(expected)
  })

  it("after the first server failure, a task's later calls are not sent", async () => {
    const m = model([new ModelServerError({ status: 404, host: "h", detail: "no such endpoint" }), "ok"])
    const watch = watchServer(m.shape)
    expect((await call(watch.model))._tag).toBe("Failure")
    const again = await call(watch.model)
    expect(again._tag === "Failure" && again.failure._tag).toBe("ModelServerError")
    expect(m.calls()).toBe(1)
    expect(watch.failure()?._tag).toBe("ModelServerError")
  })

  it("a failure that is not the server's leaves the watch calm", async () => {
    const m = model([new ContextOverflow({ role: "planner", promptTokens: 9000, contextTokens: 8192 }), "ok"])
    const watch = watchServer(m.shape)
    await call(watch.model)
    expect((await call(watch.model))._tag).toBe("Success")
    expect(watch.failure()).toBeUndefined()
  })

  it("a timeout: ends the task at once by default (bench), after one retry with timeoutRetries 1 (smurfs run)", async () => {
    const bench = model([new Timeout({ ms: 10, role: "planner" }), "ok"])
    const benchWatch = watchServer(bench.shape)
    expect((await call(benchWatch.model))._tag).toBe("Failure")
    expect(bench.calls()).toBe(1)
    const recovers = model([new Timeout({ ms: 10, role: "planner" }), "ok"])
    const runWatch = watchServer(recovers.shape, { timeoutRetries: 1 })
    expect((await call(runWatch.model))._tag).toBe("Success")
    expect(runWatch.failure()).toBeUndefined()
    const hung = model([new Timeout({ ms: 10, role: "planner" })])
    const hungWatch = watchServer(hung.shape, { timeoutRetries: 1 })
    expect((await call(hungWatch.model))._tag).toBe("Failure")
    expect(hung.calls()).toBe(2)
    expect(hungWatch.failure()?._tag).toBe("Timeout")
  })
})
