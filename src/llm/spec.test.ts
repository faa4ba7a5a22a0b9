import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { resolveModelLayer } from "../cli/model-option.ts"
import { LanguageModel } from "./language-model.ts"
import { ollamaSettings } from "./providers/ollama.ts"
import { openaiSettings } from "./providers/openai.ts"
import { MODEL_DEFAULTS, modelLayer, parseModelSpec, resilienceSettings } from "./spec.ts"

const parse = (spec: string) => Effect.runPromise(Effect.result(parseModelSpec(spec)))
const info = (layer: ReturnType<typeof modelLayer>) =>
  Effect.runPromise(
    Effect.provide(
      Effect.map(Effect.service(LanguageModel), (m) => m.info),
      layer
    )
  )
const buildError = (layer: ReturnType<typeof modelLayer>) =>
  Effect.runPromise(Effect.flip(Effect.provide(Effect.service(LanguageModel), layer)))

const saved = {
  OLLAMA_HOST: process.env.OLLAMA_HOST,
  OPENAI_BASE_URL: process.env.OPENAI_BASE_URL,
  OPENAI_API_KEY: process.env.OPENAI_API_KEY,
  OLLAMA_NUM_PARALLEL: process.env.OLLAMA_NUM_PARALLEL
}
afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key]
    else process.env[key] = value
  }
})

describe("parseModelSpec", () => {
  it("keeps the colons of model names", async () => {
    expect(await parse("ollama:qwen2.5:7b")).toMatchObject({
      _tag: "Success",
      success: { provider: "ollama", model: "qwen2.5:7b" }
    })
    expect(await parse("openai:gpt-4o-mini")).toMatchObject({ success: { provider: "openai", model: "gpt-4o-mini" } })
    expect(await parse("scripted:test/replies.json")).toMatchObject({
      success: { provider: "scripted", file: "test/replies.json" }
    })
    expect(await parse("sim")).toMatchObject({ success: { provider: "sim", options: "" } })
    expect(await parse("sim:latency=10")).toMatchObject({ success: { provider: "sim", options: "latency=10" } })
  })

  it("rejects unknown providers and missing names with a helpful message", async () => {
    const unknown = await parse("anthropic:claude")
    expect(unknown._tag).toBe("Failure")
    if (unknown._tag === "Failure") {
      expect(unknown.failure._tag).toBe("InvalidModelSpec")
      expect(unknown.failure.message).toContain('unknown provider "anthropic"')
      expect(unknown.failure.message).toContain("ollama:<model>")
    }
    const bare = await parse("qwen2.5")
    expect(bare._tag === "Failure" && bare.failure.message).toContain('did you mean "ollama:qwen2.5"')
    const empty = await parse("ollama:")
    expect(empty._tag === "Failure" && empty.failure.message).toContain("model name")
  })
})

describe("settings", () => {
  it("read OLLAMA_HOST (without scheme), OPENAI_BASE_URL and OPENAI_API_KEY, with defaults", () => {
    delete process.env.OLLAMA_HOST
    delete process.env.OPENAI_BASE_URL
    delete process.env.OPENAI_API_KEY
    expect(ollamaSettings("m")).toMatchObject({
      host: "http://127.0.0.1:11434",
      numCtx: 8192,
      keepAlive: "30m",
      timeoutMs: 120_000,
      seed: 42,
      temperature: 0
    })
    expect(openaiSettings("m")).toMatchObject({ baseURL: MODEL_DEFAULTS.openaiBaseURL, apiKey: "ollama" })
    process.env.OLLAMA_HOST = "gpu-box:11500"
    process.env.OPENAI_BASE_URL = "http://llama-cpp:8080/v1/"
    process.env.OPENAI_API_KEY = "k-123"
    expect(ollamaSettings("m").host).toBe("http://gpu-box:11500")
    expect(openaiSettings("m")).toMatchObject({ baseURL: "http://llama-cpp:8080/v1", apiKey: "k-123" })
    expect(ollamaSettings("m", { host: "http://other:1", numCtx: 4096 })).toMatchObject({
      host: "http://other:1",
      numCtx: 4096
    })
  })
})

describe("resilience settings", () => {
  it("size the endpoint's slots from --concurrency, else OLLAMA_NUM_PARALLEL, else the provider default", () => {
    delete process.env.OLLAMA_NUM_PARALLEL
    expect(resilienceSettings("ollama", "http://h:1")).toMatchObject({
      concurrency: 1,
      maxRetries: 4,
      retryBaseMs: 500,
      timeoutMs: 120_000,
      endpoint: "ollama:http://h:1"
    })
    expect(resilienceSettings("openai", "http://h:1/v1").concurrency).toBe(4)
    process.env.OLLAMA_NUM_PARALLEL = "3"
    expect(resilienceSettings("ollama", "http://h:1").concurrency).toBe(3)
    expect(resilienceSettings("ollama", "http://h:1", { concurrency: 2 }).concurrency).toBe(2)
    expect(resilienceSettings("openai", "http://h:1/v1").concurrency).toBe(4)
    process.env.OLLAMA_NUM_PARALLEL = "lots"
    expect(resilienceSettings("ollama", "http://h:1").concurrency).toBe(1)
  })
})

describe("modelLayer", () => {
  it("builds an OpenAI-compatible model without touching the network", async () => {
    expect(await info(modelLayer("openai:gpt-4o-mini", { baseURL: "http://127.0.0.1:9/v1", numCtx: 32_768 }))).toEqual({
      spec: "openai:gpt-4o-mini",
      provider: "openai",
      model: "gpt-4o-mini",
      contextTokens: 32_768,
      supportsTools: true
    })
  })

  it("builds an Ollama model even when the server is down (tool support then defaults to true)", async () => {
    expect(await info(modelLayer("ollama:qwen2.5:7b", { host: "http://127.0.0.1:9" }))).toMatchObject({
      provider: "ollama",
      supportsTools: true
    })
    expect(
      await info(modelLayer("ollama:qwen2.5:7b", { host: "http://127.0.0.1:9", supportsTools: false }))
    ).toMatchObject({ supportsTools: false })
  })

  it("builds a scripted model from a file and reports a missing file as InvalidModelSpec", async () => {
    const dir = mkdtempSync(join(tmpdir(), "smurfs-spec-"))
    const file = join(dir, "replies.json")
    writeFileSync(file, JSON.stringify(["hello"]))
    const reply = await Effect.runPromise(
      Effect.provide(
        Effect.flatMap(Effect.service(LanguageModel), (m) => m.generate({ role: "r", messages: [] })),
        modelLayer(`scripted:${file}`)
      )
    )
    expect(reply.text).toBe("hello")
    expect((await buildError(modelLayer(`scripted:${join(dir, "missing.json")}`)))._tag).toBe("InvalidModelSpec")
  })

  it("fails with InvalidModelSpec for an unknown provider; a registered provider (the bench's sim) is built by modelLayer", async () => {
    expect(await buildError(modelLayer("nope:x"))).toMatchObject({ _tag: "InvalidModelSpec" })
    expect((await info(modelLayer("sim"))).spec).toContain("sim")
  })
})

describe("resolveModelLayer", () => {
  it("builds the simulated model from bench/sim", async () => {
    const simInfo = await info(resolveModelLayer("sim"))
    expect(simInfo.spec).toContain("sim")
  })

  it("passes other specs to modelLayer", async () => {
    expect(await info(resolveModelLayer("openai:m", { baseURL: "http://127.0.0.1:9/v1" }))).toMatchObject({
      provider: "openai",
      model: "m"
    })
    expect(await buildError(resolveModelLayer("bogus"))).toMatchObject({ _tag: "InvalidModelSpec" })
  })
})
