// The `llama:` provider through the real llama.cpp engine, on a tiny generated model (threads 1, short replies).
import { writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import * as Effect from "effect/Effect"
import { afterAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { disposeIdleLlamaEngines, loadedLlamaEngines } from "../../src/llm/providers/llama.ts"
import { registeredProvider } from "../../src/llm/providers.ts"
import { modelLayer, parseModelSpec } from "../../src/llm/spec.ts"
import { generateObject } from "../../src/llm/structured.ts"
import { removeTinyModels, tinyModelFile } from "./tiny-model.ts"

afterAll(async () => {
  await disposeIdleLlamaEngines()
  removeTinyModels()
})

const OPTIONS = { threads: 1, numCtx: 2048 }
const spec = () => `llama:${tinyModelFile()}`

const withModel = <A, E>(program: Effect.Effect<A, E, LanguageModel>, options: object = OPTIONS, at = spec()) =>
  Effect.runPromise(Effect.provide(program, modelLayer(at, options)))

const failureOf = (at: string, options: object = OPTIONS) =>
  Effect.runPromise(Effect.flip(Effect.provide(Effect.service(LanguageModel), modelLayer(at, options))))

describe("llama: through the embedded engine", () => {
  it("parses llama:<file>, hf:, https: and the bare default; a bare .gguf is said to be a llama: spec", async () => {
    expect((await Effect.runPromise(parseModelSpec("llama:models/x.gguf"))).rest).toBe("models/x.gguf")
    expect((await Effect.runPromise(parseModelSpec("llama"))).provider).toBe("llama")
    expect((await Effect.runPromise(parseModelSpec("llama:hf:user/repo:Q4_K_M"))).rest).toBe("hf:user/repo:Q4_K_M")
    const bare = await Effect.runPromise(Effect.flip(parseModelSpec("x.gguf")))
    expect(bare.message).toContain('did you mean "llama:x.gguf"')
  })

  it("a structured reply follows the schema, parsed by our own loop, with the engine's token counts", async () => {
    const Reply = z.object({ answer: z.string(), count: z.number(), done: z.boolean(), tags: z.array(z.string()) })
    const result = await withModel(
      generateObject({
        role: "test",
        schema: Reply,
        messages: [
          { role: "system", content: "Reply in JSON." },
          { role: "user", content: "How many moons has Mars?" }
        ]
      })
    )
    expect(Reply.safeParse(result.value).success).toBe(true)
    expect(Number.isFinite(result.value.count)).toBe(true)
    expect(result.response.usage.promptTokens).toBeGreaterThan(5)
    expect(result.response.usage.completionTokens).toBeGreaterThan(3)
  })

  it("a request with tools comes back as a call of one of them, with arguments of its schema", async () => {
    const response = await withModel(
      Effect.flatMap(LanguageModel, (m) =>
        m.generate({
          role: "react.step",
          messages: [
            { role: "system", content: "You are an agent." },
            { role: "user", content: "What is the weather in Paris?" }
          ],
          tools: [
            {
              name: "get_weather",
              description: "The weather of a city",
              parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
            },
            {
              name: "Finish",
              description: "End the task",
              parameters: {
                type: "object",
                properties: { return_type: { type: "string", enum: ["give_answer", "give_up_and_restart"] } },
                required: ["return_type"]
              }
            }
          ]
        })
      )
    )
    const call = response.toolCalls?.[0]
    expect(call).toBeDefined()
    expect(["get_weather", "Finish"]).toContain(call!.name)
    if (call!.name === "get_weather") expect(typeof call!.arguments["city"]).toBe("string")
    else expect(["give_answer", "give_up_and_restart"]).toContain(call!.arguments["return_type"])
  })

  it("a plain reply stops at the request's token limit", async () => {
    const response = await withModel(
      Effect.flatMap(LanguageModel, (m) =>
        m.generate({
          role: "chat",
          messages: [{ role: "user", content: "Tell me a long story." }],
          options: { maxTokens: 3 }
        })
      )
    )
    expect(response.usage.completionTokens).toBeLessThanOrEqual(3)
  })

  it("two requests at once share one loaded model on a context of two sequences", async () => {
    const ask = (content: string) =>
      Effect.flatMap(LanguageModel, (m) =>
        m.generate({ role: "chat", messages: [{ role: "user", content }], options: { maxTokens: 4 } })
      )
    const replies = await withModel(
      Effect.all([ask("first question"), ask("second question"), ask("third question")], { concurrency: "unbounded" }),
      { ...OPTIONS, concurrency: 2 }
    )
    expect(replies).toHaveLength(3)
    for (const r of replies) expect(r.usage.completionTokens).toBeGreaterThan(0)
  })

  it("a prompt over the context is the project's context overflow, with the engine's figures", async () => {
    const failure = await withModel(
      Effect.flip(
        Effect.flatMap(LanguageModel, (m) =>
          m.generate({ role: "planner", messages: [{ role: "user", content: "word ".repeat(3000) }] })
        )
      ),
      { ...OPTIONS, numCtx: 256 }
    )
    expect(failure._tag).toBe("ContextOverflow")
    expect(failure.message).toMatch(/The planner prompt needs (about )?\d+ tokens but the context window is 256/)
  })

  it("a truncated file, a file that is not GGUF, a missing file: bad input naming the file, never a crash", async () => {
    const folder = dirname(tinyModelFile())
    const truncated = join(folder, "truncated.gguf")
    const whole = await import("node:fs").then((fs) => fs.readFileSync(tinyModelFile()))
    writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length / 2)))
    const notGguf = join(folder, "notes.gguf")
    writeFileSync(notGguf, "these are not model weights\n")
    for (const [file, words] of [
      // llama.cpp's own reason is quoted when its log reaches us (the CLI's case; the integration test checks it)
      [truncated, /could not be loaded by llama\.cpp \(.+\): it may be truncated/],
      [notGguf, /is not a GGUF file/],
      [join(folder, "absent.gguf"), /no such file/]
    ] as const) {
      const failure = await failureOf(`llama:${file}`)
      expect(failure._tag).toBe("InvalidModelSpec")
      expect(failure.kind).toBe("bad-input")
      expect(failure.message).toContain(file)
      expect(failure.message).toMatch(words)
    }
    // a model to download, offline and not in the cache: unavailable (exit 4), with the URL and the command to fetch it
    const saved = { offline: process.env.SMURFS_OFFLINE, models: process.env.SMURFS_MODELS }
    process.env.SMURFS_OFFLINE = "1"
    process.env.SMURFS_MODELS = join(folder, "models")
    try {
      const remote = await failureOf("llama:hf:someone/some-model-GGUF/some-model-Q4_K_M.gguf")
      expect(remote.kind).toBe("unavailable")
      expect(remote.message).toMatch(/offline/)
      expect(remote.message).toContain("smurfs pull hf:someone/some-model-GGUF/some-model-Q4_K_M.gguf")
    } finally {
      for (const [key, value] of [
        ["SMURFS_OFFLINE", saved.offline],
        ["SMURFS_MODELS", saved.models]
      ] as const)
        if (value === undefined) delete process.env[key]
        else process.env[key] = value
    }
  })

  it("doctor on a model still to download says its size and where, fetches nothing, and fails only offline", async () => {
    const saved = { offline: process.env.SMURFS_OFFLINE, models: process.env.SMURFS_MODELS }
    process.env.SMURFS_MODELS = join(dirname(tinyModelFile()), "empty-models")
    const restore = () => {
      for (const [key, value] of [
        ["SMURFS_OFFLINE", saved.offline],
        ["SMURFS_MODELS", saved.models]
      ] as const)
        if (value === undefined) delete process.env[key]
        else process.env[key] = value
    }
    try {
      const doctor = (source: string) => Effect.runPromise(registeredProvider("llama")!.doctor(source, {}))
      delete process.env.SMURFS_OFFLINE
      const online = await doctor("")
      expect(online.problem).toBeUndefined()
      expect(online.checks[0]).toMatchObject({ name: "model file", status: "warn" })
      expect(online.checks[0]!.detail).toMatch(
        /not downloaded yet: 1\.28 GB from https:\/\/huggingface\.co\/ggml-org\//
      )
      expect(online.checks[0]!.advice).toContain("smurfs pull llama")
      expect(online.instead?.status).toBe("skip")
      process.env.SMURFS_OFFLINE = "1"
      const offline = await doctor("hf:someone/some-model-GGUF/some-model-Q4_K_M.gguf")
      expect(offline.problem).toBe("unavailable")
      expect(offline.checks[0]).toMatchObject({ name: "model file", status: "fail" })
      expect(offline.checks[0]!.advice).toContain("smurfs pull hf:someone/some-model-GGUF/some-model-Q4_K_M.gguf")
    } finally {
      restore()
    }
  })

  it("the engine is held once per file and settings and let go when its users are done", async () => {
    await disposeIdleLlamaEngines()
    expect(loadedLlamaEngines()).toBe(0)
    await withModel(Effect.flatMap(LanguageModel, (m) => Effect.succeed(m.info.contextTokens)))
    expect(loadedLlamaEngines()).toBe(1)
    await disposeIdleLlamaEngines()
    expect(loadedLlamaEngines()).toBe(0)
  })
})
