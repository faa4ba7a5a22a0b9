import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fake-servers/openai.ts"
import { LanguageModel } from "./language-model.ts"
import { listOpenAIModels, toOpenAIMessages } from "./openai.ts"
import { openaiSettings } from "./providers/openai.ts"
import { type ModelOptions, modelLayer } from "./spec.ts"
import { generateObject, jsonSchemaOf } from "./structured.ts"

const servers: FakeOpenAI[] = []
const fake = async (...args: Parameters<typeof startFakeOpenAI>) => {
  const server = await startFakeOpenAI(...args)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const run = <A, E>(server: FakeOpenAI, effect: Effect.Effect<A, E, LanguageModel>, options: ModelOptions = {}) =>
  Effect.runPromise(
    Effect.provide(effect, modelLayer("openai:qwen2.5:7b", { baseURL: server.baseURL, retryBaseMs: 1, ...options }))
  )

const Verdict = z.object({ verdict: z.enum(["accept", "reject"]), hint: z.string() })

describe("openai-compatible provider", () => {
  it("sends response_format json_schema (non-strict), temperature 0 and the seed", async () => {
    const server = await fake()
    const ask = generateObject({ role: "verifier", schema: Verdict, messages: [{ role: "user", content: "check" }] })
    const [first] = await run(server, Effect.all([ask, ask]))
    expect(first.value).toEqual({ verdict: "accept", hint: "x" })
    const bodies = server.chatRequests()
    expect(bodies).toHaveLength(2)
    for (const body of bodies) {
      expect(body.response_format).toEqual({
        type: "json_schema",
        json_schema: { name: "reply", schema: jsonSchemaOf(Verdict), strict: false }
      })
      expect(body.tools).toBeUndefined()
      expect(body.temperature).toBe(0)
      expect(body.seed).toBe(42)
      expect(body.stream).toBe(false)
    }
  })

  it("recovers a malformed JSON reply through a reflection turn", async () => {
    const server = await fake(['{"verdict": "maybe"}', '{"verdict": "reject", "hint": "use another tool"}'])
    const result = await run(
      server,
      generateObject({ role: "verifier", schema: Verdict, messages: [{ role: "user", content: "check" }] })
    )
    expect(result.attempts).toBe(2)
    expect(result.value).toEqual({ verdict: "reject", hint: "use another tool" })
    const last = server.chatRequests()[1].messages.at(-1)
    expect(last.role).toBe("user")
    expect(last.content).toMatch(/^\[guardrail reflection\] /)
    expect(last.content).toContain("verdict")
  })

  it("sends native tools, parses tool calls and reads usage", async () => {
    const server = await fake([
      {
        content: "",
        toolCalls: [{ name: "search", arguments: { q: "smurfs" } }],
        promptTokens: 12,
        completionTokens: 3
      }
    ])
    const tools = [
      {
        name: "search",
        description: "Search the web",
        parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] }
      }
    ]
    const response = await run(
      server,
      Effect.flatMap(Effect.service(LanguageModel), (m) =>
        m.generate({ role: "executor", messages: [{ role: "user", content: "find" }], tools })
      )
    )
    expect(response.toolCalls).toEqual([
      { id: "call_0_0", name: "search", arguments: { q: "smurfs" }, rawArguments: '{"q":"smurfs"}' }
    ])
    expect(response.usage).toEqual({ promptTokens: 12, completionTokens: 3 })
    const body = server.chatRequests()[0]
    expect(body.response_format).toBeUndefined()
    expect(body.tools).toEqual([{ type: "function", function: tools[0] }])
  })

  it("sends the API key as a bearer token and defaults to a placeholder key", async () => {
    const server = await fake({ apiKey: "sk-local-secret-123" })
    const ok = await run(
      server,
      Effect.flatMap(Effect.service(LanguageModel), (m) =>
        m.generate({ role: "r", messages: [{ role: "user", content: "hi" }] })
      ),
      {
        apiKey: "sk-local-secret-123"
      }
    )
    expect(ok.text).toBe("ok")
    const previous = process.env.OPENAI_API_KEY
    delete process.env.OPENAI_API_KEY
    try {
      expect(openaiSettings("m").apiKey).toBe("ollama")
    } finally {
      if (previous !== undefined) process.env.OPENAI_API_KEY = previous
    }
  })

  it("lists the server's models", async () => {
    const server = await fake({ models: ["a", "b:1b"] })
    expect(await Effect.runPromise(listOpenAIModels(openaiSettings("a", { baseURL: server.baseURL })))).toEqual([
      "a",
      "b:1b"
    ])
  })
})

describe("openai provider deadline", () => {
  it("fails a call the server never answers with Timeout at the model's own deadline (the resilience layer keeps no second timer)", async () => {
    const server = await startFakeOpenAI([{ fault: "hang" }])
    try {
      const started = performance.now()
      const error = await Effect.runPromise(
        Effect.flip(
          Effect.provide(
            Effect.flatMap(Effect.service(LanguageModel), (m) =>
              m.generate({ role: "executor", messages: [{ role: "user", content: "hi" }] })
            ),
            modelLayer("openai:qwen2.5:7b", { baseURL: server.baseURL, timeoutMs: 200, maxRetries: 0 })
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

/** A server answering every request with `answer`, keeping each request's headers and body. */
const rawServer = async (answer: { status: number; body: string; contentType?: string }) => {
  const requests: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
      res.writeHead(answer.status, { "content-type": answer.contentType ?? "application/json" }).end(answer.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  return { baseURL, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

const generateOnce = (baseURL: string, options: ModelOptions = {}) =>
  Effect.runPromise(
    Effect.result(
      Effect.provide(
        Effect.flatMap(Effect.service(LanguageModel), (m) =>
          m.generate({ role: "executor", messages: [{ role: "user", content: "hi" }] })
        ),
        modelLayer("openai:qwen2.5:7b", { baseURL, maxRetries: 0, ...options })
      )
    )
  )

describe("openai provider requests and error bodies", () => {
  it("sends the request the openai client builds: its path, authentication, JSON body and own headers", async () => {
    const completion = {
      id: "c1",
      object: "chat.completion",
      created: 1,
      model: "qwen2.5:7b",
      choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }
    }
    const server = await rawServer({ status: 200, body: JSON.stringify(completion) })
    try {
      const result = await generateOnce(server.baseURL, { apiKey: "sk-header-check-1", timeoutMs: 30_000 })
      expect(result).toMatchObject({ _tag: "Success", success: { text: "hello", usage: { promptTokens: 3 } } })
      const [request] = server.requests
      expect(request!.headers).toMatchObject({
        authorization: "Bearer sk-header-check-1",
        "content-type": "application/json",
        accept: "application/json",
        "x-stainless-retry-count": "0",
        "x-stainless-timeout": "30"
      })
      expect(request!.headers["user-agent"]).toMatch(/^OpenAI\/JS /)
      expect(JSON.parse(request!.body)).toMatchObject({
        model: "qwen2.5:7b",
        stream: false,
        messages: [{ role: "user", content: "hi" }]
      })
    } finally {
      await server.close()
    }
  })

  it("reads an error body without an `error` member (vLLM's) as the client does: a context overflow is recognised", async () => {
    const server = await rawServer({
      status: 400,
      body: JSON.stringify({
        object: "error",
        message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
        type: "BadRequestError",
        code: 400
      })
    })
    try {
      const result = await generateOnce(server.baseURL, { numCtx: 4096 })
      expect(result).toMatchObject({ _tag: "Failure", failure: { _tag: "ContextOverflow", promptTokens: 5000 } })
    } finally {
      await server.close()
    }
  })

  it("a 200 reply that is not JSON fails as a reply without choices", async () => {
    const server = await rawServer({ status: 200, body: "<html>a login page</html>", contentType: "text/html" })
    try {
      const result = await generateOnce(server.baseURL)
      expect(result).toMatchObject({ _tag: "Failure", failure: { _tag: "ModelServerError" } })
      expect(result._tag === "Failure" && result.failure.message).toMatch(/choices/)
    } finally {
      await server.close()
    }
  })
})

describe("openai message mapping", () => {
  it("pairs tool results with the assistant's tool call ids and marks reflections", () => {
    const messages = toOpenAIMessages([
      { role: "user", content: "q" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { name: "f", arguments: { a: 1 } },
          { id: "given", name: "g", arguments: {} }
        ]
      },
      { role: "tool", content: "1", toolName: "f" },
      { role: "tool", content: "2", toolName: "g", toolCallId: "given" },
      { role: "reflection", content: "again" }
    ])
    expect(messages[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1_0", type: "function", function: { name: "f", arguments: '{"a":1}' } },
        { id: "given", type: "function", function: { name: "g", arguments: "{}" } }
      ]
    })
    expect(messages[2]).toEqual({ role: "tool", tool_call_id: "call_1_0", content: "1" })
    expect(messages[3]).toEqual({ role: "tool", tool_call_id: "given", content: "2" })
    expect(messages[4]).toEqual({ role: "user", content: "[guardrail reflection] again" })
  })
})
