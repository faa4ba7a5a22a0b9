import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { recording, totalsOf } from "../trace/trajectory.ts"
import { CACHE_DEFAULTS, canonicalJson, makeModelCache, modelCacheLayer, requestKey } from "./cache.ts"
import { type GenerateRequest, LanguageModel, type LanguageModelShape } from "./language-model.ts"
import { makeScriptedModel } from "./scripted.ts"
import { callModel } from "./structured.ts"

const dirs: Array<string> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "smurfs-cache-"))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A model that answers with a running count, so a repeated reply can only come from the cache. */
const counting = () => {
  let calls = 0
  const model = makeScriptedModel(
    { "*": [(r: GenerateRequest) => `reply ${++calls} to ${r.messages.at(-1)?.content}`], $cycle: true },
    "counter"
  )
  return { model, calls: () => calls }
}

const ask = (content: string, extra: Partial<GenerateRequest> = {}): GenerateRequest => ({
  role: "planner",
  messages: [{ role: "user", content }],
  ...extra
})

const run = (model: LanguageModelShape, request: GenerateRequest) => Effect.runPromise(model.generate(request))

describe("model cache", () => {
  it("answers a repeated request from memory, marked cached, without calling the model", async () => {
    const inner = counting()
    const cache = await Effect.runPromise(makeModelCache())
    const model = cache.wrap(inner.model)
    const first = await run(model, ask("hello"))
    const second = await run(model, ask("hello"))
    expect(inner.calls()).toBe(1)
    expect(first.cached ?? false).toBe(false)
    expect(second.cached).toBe(true)
    expect(second.text).toBe(first.text)
    expect(second.usage).toEqual(first.usage)
    expect(cache.store.stats).toMatchObject({ hits: 1, misses: 1, writes: 1 })
  })

  it("tells requests apart by role, messages, format, tools and sampling options", async () => {
    const inner = counting()
    const model = (await Effect.runPromise(makeModelCache())).wrap(inner.model)
    await run(model, ask("a"))
    await run(model, { ...ask("a"), role: "verifier" })
    await run(model, ask("b"))
    await run(model, ask("a", { format: { type: "object" } }))
    await run(model, ask("a", { tools: [{ name: "t", description: "", parameters: {} }] }))
    await run(model, ask("a", { options: { seed: 1 } }))
    await run(model, ask("a", { options: { maxTokens: 10 } }))
    expect(inner.calls()).toBe(7)
    // the timeout cannot change a reply, so it is not part of the key
    await run(model, ask("a", { options: { timeoutMs: 5 } }))
    expect(inner.calls()).toBe(7)
  })

  it("keys by canonical JSON: object key order does not matter", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"x":1,"y":2}]},"b":1}'
    )
    const one = requestKey("m", ask("x", { format: { type: "object", properties: { a: {}, b: {} } } }))
    const two = requestKey("m", ask("x", { format: { properties: { b: {}, a: {} }, type: "object" } }))
    expect(one).toBe(two)
    expect(requestKey("other", ask("x"))).not.toBe(requestKey("m", ask("x")))
  })

  it("bypasses the cache when sampling is not deterministic (temperature above 0)", async () => {
    const inner = counting()
    const cache = await Effect.runPromise(makeModelCache())
    const model = cache.wrap(inner.model)
    const hot = ask("hello", { options: { temperature: 0.7, seed: 3 } })
    const a = await run(model, hot)
    const b = await run(model, hot)
    expect(inner.calls()).toBe(2)
    expect(a.text).not.toBe(b.text)
    expect(b.cached ?? false).toBe(false)
    expect(cache.store.stats.writes).toBe(0)
  })

  it("persists to the cache directory: a new process (a new cache) replays without calling the model", async () => {
    const dir = tempDir()
    const first = counting()
    const warm = (await Effect.runPromise(makeModelCache({ dir }))).wrap(first.model)
    const original = await run(warm, ask("persist me"))
    expect(first.calls()).toBe(1)
    expect(readFileSync(join(dir, CACHE_DEFAULTS.modelFile), "utf8").trim().split("\n")).toHaveLength(1)

    // a torn line (an interrupted append) must not stop the cache from opening
    appendFileSync(join(dir, CACHE_DEFAULTS.modelFile), '{"key":"abc","value":{"te')
    const second = counting()
    const cache = await Effect.runPromise(makeModelCache({ dir }))
    expect(cache.store.stats.loaded).toBe(1)
    const replayed = await run(cache.wrap(second.model), ask("persist me"))
    expect(second.calls()).toBe(0)
    expect(replayed.cached).toBe(true)
    expect(replayed.text).toBe(original.text)
  })

  it("fails with CacheUnavailable when the directory cannot be created", async () => {
    const file = join(tempDir(), "a-file")
    appendFileSync(file, "x")
    const exit = await Effect.runPromise(Effect.exit(makeModelCache({ dir: join(file, "sub") })))
    expect(exit._tag).toBe("Failure")
    expect(String(JSON.stringify(exit))).toContain("CacheUnavailable")
  })

  it("works as a Layer over a provider, and trace totals do not count cached replies as model calls", async () => {
    const inner = counting()
    const layer = Layer.provide(modelCacheLayer(), Layer.succeed(LanguageModel, inner.model))
    const program = Effect.gen(function* () {
      const model = yield* LanguageModel
      const { events } = yield* recording(
        "t",
        Effect.gen(function* () {
          yield* callModel(model.generate, ask("same"))
          yield* callModel(model.generate, ask("same"))
        })
      )
      return totalsOf(events, 0)
    })
    const totals = await Effect.runPromise(Effect.provide(program, layer))
    expect(inner.calls()).toBe(1)
    expect(totals.modelCalls).toBe(1)
  })
})
