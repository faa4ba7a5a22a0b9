import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { type FakeOllama, startFakeOllama } from "../../test/fake-servers/ollama.ts"
import { LanguageModel } from "./language-model.ts"
import { normalizeOllamaHost, toOllamaMessages } from "./ollama.ts"
import { type ModelOptions, modelLayer } from "./spec.ts"
import { generateObject, jsonSchemaOf } from "./structured.ts"

const servers: FakeOllama[] = []
const fake = async (...args: Parameters<typeof startFakeOllama>) => {
  const server = await startFakeOllama(...args)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const run = <A, E>(server: FakeOllama, effect: Effect.Effect<A, E, LanguageModel>, options: ModelOptions = {}) =>
  Effect.runPromise(
    Effect.provide(effect, modelLayer("ollama:qwen2.5:7b", { host: server.url, retryBaseMs: 1, ...options }))
  )

const Plan = z.object({ subtasks: z.array(z.string()).min(1), done: z.boolean() })

describe("ollama provider", () => {
  it("sends the JSON Schema as format with constant num_ctx, keep_alive, temperature 0 and the seed", async () => {
    const server = await fake()
    const ask = generateObject({
      role: "planner",
      schema: Plan,
      messages: [
        { role: "system", content: "plan" },
        { role: "user", content: "q" }
      ]
    })
    const [first, second] = await run(server, Effect.all([ask, ask]))
    expect(first.value).toEqual({ subtasks: ["x"], done: true })
    expect(second.attempts).toBe(1)
    const bodies = server.chatRequests()
    expect(bodies).toHaveLength(2)
    for (const body of bodies) {
      expect(body.format).toEqual(jsonSchemaOf(Plan))
      expect(body.tools).toBeUndefined()
      expect(body.stream).toBe(false)
      expect(body.keep_alive).toBe("30m")
      expect(body.options).toMatchObject({ num_ctx: 8192, temperature: 0, seed: 42 })
      expect(body.model).toBe("qwen2.5:7b")
    }
  })

  it("uses the configured num_ctx, seed and keep_alive, and a request's own temperature", async () => {
    const server = await fake(["{}"])
    await run(
      server,
      Effect.flatMap(Effect.service(LanguageModel), (m) =>
        m.generate({ role: "r", messages: [{ role: "user", content: "hi" }], options: { temperature: 0.7 } })
      ),
      { numCtx: 16384, seed: 7, keepAlive: "1h" }
    )
    expect(server.chatRequests()[0].options).toMatchObject({ num_ctx: 16384, seed: 7, temperature: 0.7 })
    expect(server.chatRequests()[0].keep_alive).toBe("1h")
  })

  it("recovers a malformed JSON reply through a reflection turn", async () => {
    const server = await fake([
      "Sure! here is the plan: first find the weather",
      '{"subtasks": ["find the weather"], "done": false}'
    ])
    const result = await run(
      server,
      generateObject({ role: "planner", schema: Plan, messages: [{ role: "user", content: "q" }] })
    )
    expect(result.attempts).toBe(2)
    expect(result.value.subtasks).toEqual(["find the weather"])
    const retry = server.chatRequests()[1]
    const last = retry.messages.at(-1)
    expect(last.role).toBe("user")
    expect(last.content.startsWith("[guardrail reflection]")).toBe(true)
    expect(last.content).toContain("invalid JSON")
    expect(retry.messages.at(-2)).toMatchObject({
      role: "assistant",
      content: "Sure! here is the plan: first find the weather"
    })
  })

  it("sends native tools without format and returns the tool calls and usage", async () => {
    const server = await fake([
      {
        content: "",
        toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }],
        promptTokens: 33,
        completionTokens: 5
      }
    ])
    const tools = [
      {
        name: "get_weather",
        description: "Weather of a city",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
      }
    ]
    const response = await run(
      server,
      Effect.flatMap(Effect.service(LanguageModel), (m) =>
        m.generate({
          role: "executor",
          messages: [{ role: "user", content: "weather?" }],
          tools,
          format: { type: "object" }
        })
      )
    )
    expect(response.toolCalls).toEqual([{ name: "get_weather", arguments: { city: "Paris" } }])
    expect(response.usage).toEqual({ promptTokens: 33, completionTokens: 5 })
    expect(response.model).toBe("qwen2.5:7b")
    expect(response.durationMs).toBeGreaterThanOrEqual(0)
    const body = server.chatRequests()[0]
    expect(body.format).toBeUndefined()
    expect(body.tools).toEqual([{ type: "function", function: tools[0] }])
  })

  it("reads tool support from /api/show", async () => {
    const server = await fake({
      models: [
        { name: "qwen2.5:7b", capabilities: ["completion"] },
        { name: "llama3.1:8b", capabilities: ["completion", "tools"] }
      ]
    })
    const info = (spec: string) =>
      Effect.runPromise(
        Effect.provide(
          Effect.map(Effect.service(LanguageModel), (m) => m.info),
          modelLayer(spec, { host: server.url })
        )
      )
    expect((await info("ollama:qwen2.5:7b")).supportsTools).toBe(false)
    expect((await info("ollama:llama3.1:8b")).supportsTools).toBe(true)
    expect(await info("ollama:llama3.1:8b")).toMatchObject({
      provider: "ollama",
      model: "llama3.1:8b",
      contextTokens: 8192,
      spec: "ollama:llama3.1:8b"
    })
    const shows = server.requests.filter((r) => r.path === "/api/show").map((r) => r.body.model)
    expect(shows).toContain("qwen2.5:7b")
  })
})

describe("ollama provider deadline", () => {
  it("fails a call the server never answers with Timeout at the model's own deadline (the resilience layer keeps no second timer)", async () => {
    const server = await startFakeOllama([{ fault: "hang" }])
    try {
      const started = performance.now()
      const error = await Effect.runPromise(
        Effect.flip(
          Effect.provide(
            Effect.flatMap(Effect.service(LanguageModel), (m) =>
              m.generate({ role: "executor", messages: [{ role: "user", content: "hi" }] })
            ),
            modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true, timeoutMs: 200, maxRetries: 0 })
          )
        )
      )
      expect(error).toMatchObject({ _tag: "Timeout", ms: 200, role: "executor" })
      expect(performance.now() - started).toBeLessThan(5000)
    } finally {
      await server.close()
    }
  })
})

describe("ollama message and host mapping", () => {
  it("renders reflection as a marked user turn and tool results with the tool's name", () => {
    const messages = toOllamaMessages([
      { role: "system", content: "s" },
      { role: "assistant", content: "", toolCalls: [{ name: "f", arguments: { a: 1 } }] },
      { role: "tool", content: "42", toolName: "f", toolCallId: "c1" },
      { role: "reflection", content: "fix it" }
    ])
    expect(messages).toEqual([
      { role: "system", content: "s" },
      { role: "assistant", content: "", tool_calls: [{ function: { name: "f", arguments: { a: 1 } } }] },
      { role: "tool", content: "42", tool_name: "f" },
      { role: "user", content: "[guardrail reflection] fix it" }
    ])
  })

  it("accepts OLLAMA_HOST forms the way Ollama does", () => {
    expect(normalizeOllamaHost(undefined)).toBe("http://127.0.0.1:11434")
    expect(normalizeOllamaHost("")).toBe("http://127.0.0.1:11434")
    expect(normalizeOllamaHost("gpu-box")).toBe("http://gpu-box:11434")
    expect(normalizeOllamaHost("gpu-box:8080")).toBe("http://gpu-box:8080")
    expect(normalizeOllamaHost(":9000")).toBe("http://127.0.0.1:9000")
    expect(normalizeOllamaHost("0.0.0.0")).toBe("http://127.0.0.1:11434")
    expect(normalizeOllamaHost("https://ollama.example.org")).toBe("https://ollama.example.org")
    expect(normalizeOllamaHost("http://localhost:11434/")).toBe("http://localhost:11434")
  })
})
