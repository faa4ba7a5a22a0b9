// Model server faults become typed, actionable errors; overload is retried; nothing hangs.
import { Effect } from "effect"
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest"
import type { InvalidModelSpec, ProviderError } from "../src/llm/errors.ts"
import { type GenerateRequest, LanguageModel } from "../src/llm/language-model.ts"
import { type ModelOptions, modelLayer } from "../src/llm/spec.ts"
import type { FakeServer, Step } from "./fake-servers/core.ts"
import { startFakeOllama } from "./fake-servers/ollama.ts"
import { startFakeOpenAI } from "./fake-servers/openai.ts"

interface Provider {
  readonly name: "ollama" | "openai"
  readonly start: (chat?: ReadonlyArray<Step>) => Promise<FakeServer>
  readonly where: (server: FakeServer) => ModelOptions
}

const providers: ReadonlyArray<Provider> = [
  { name: "ollama", start: (chat) => startFakeOllama(chat ? { chat } : {}), where: (s) => ({ host: s.url }) },
  { name: "openai", start: (chat) => startFakeOpenAI(chat ? { chat } : {}), where: (s) => ({ baseURL: `${s.url}/v1` }) }
]

const servers: FakeServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const request: GenerateRequest = { role: "planner", messages: [{ role: "user", content: "hello" }] }
/** Fast retries so that the suite stays quick. */
const FAST: ModelOptions = { retryBaseMs: 1, maxRetryDelayMs: 20, timeoutMs: 5_000 }

const generate = (spec: string, options: ModelOptions, req: GenerateRequest = request) =>
  Effect.provide(
    Effect.flatMap(Effect.service(LanguageModel), (m) => m.generate(req)),
    modelLayer(spec, { ...FAST, ...options })
  )

const failure = async (
  spec: string,
  options: ModelOptions,
  req?: GenerateRequest
): Promise<ProviderError | InvalidModelSpec> => Effect.runPromise(Effect.flip(generate(spec, options, req)))

const chatCalls = (server: FakeServer) =>
  server.requests.filter((r) => r.path === "/api/chat" || r.path === "/v1/chat/completions").length

/** A port with nothing listening: start a server and close it. */
const closedPort = async (p: Provider): Promise<ModelOptions> => {
  const server = await p.start()
  const where = p.where(server)
  await server.close()
  return where
}

describe.each(providers)("$name server faults", (p) => {
  const spec = `${p.name}:qwen2.5:7b`
  const start = async (chat?: ReadonlyArray<Step>) => {
    const server = await p.start(chat)
    servers.push(server)
    return server
  }

  it("connection refused -> ModelUnreachable that says how to start the server", async () => {
    const error = await failure(spec, await closedPort(p))
    expect(error._tag).toBe("ModelUnreachable")
    expect(error.message).toContain(p.name === "ollama" ? "ollama serve" : "OPENAI_BASE_URL")
    expect(error.message).toContain("127.0.0.1")
  })

  it("unknown model (404) -> ModelNotFound", async () => {
    const server = await start()
    const error = await failure(`${p.name}:nope:1b`, p.where(server))
    expect(error._tag).toBe("ModelNotFound")
    if (p.name === "ollama") expect(error.message).toContain("ollama pull nope:1b")
    else expect(error.message).toContain("nope:1b")
    expect(chatCalls(server)).toBe(1)
  })

  it("a base URL that is not the model server's -> says to check the address", async () => {
    const server = await start()
    const wrong = p.name === "ollama" ? { host: `${server.url}/not-ollama` } : { baseURL: server.url }
    const error = await failure(spec, wrong)
    expect(error).toMatchObject({ _tag: "ModelServerError", status: 404 })
    expect(error.message).toContain(p.name === "ollama" ? "OLLAMA_HOST" : "OPENAI_BASE_URL")
  })

  it("503 twice then success -> retried and succeeds", async () => {
    const server = await start([{ fault: "status", status: 503 }, { fault: "status", status: 503 }, "fine"])
    const response = await Effect.runPromise(generate(spec, p.where(server)))
    expect(response.text).toBe("fine")
    expect(chatCalls(server)).toBe(3)
  })

  it("429 with Retry-After -> the hint is parsed, and the call retried", async () => {
    const server = await start([{ fault: "status", status: 429, retryAfter: "2" }, "after the pause"])
    const error = await failure(spec, { ...p.where(server), maxRetries: 0 })
    expect(error).toMatchObject({ _tag: "Overloaded", status: 429, retryAfterMs: 2000 })
    // The cap bounds the wait (20 ms here) so that a server asking for a long pause cannot stall a run.
    const response = await Effect.runPromise(generate(spec, p.where(server)))
    expect(response.text).toBe("after the pause")
  })

  it("429 without Retry-After -> backoff, and Overloaded once retries run out", async () => {
    const server = await start([{ fault: "status", status: 429 }])
    const error = await failure(spec, { ...p.where(server), maxRetries: 2 })
    expect(error._tag).toBe("Overloaded")
    expect(error).toMatchObject({ status: 429, retryAfterMs: undefined })
    expect(error.message).toContain("--concurrency")
    expect(chatCalls(server)).toBe(3)
  })

  it("500 -> ModelServerError, not retried", async () => {
    const server = await start([{ fault: "status", status: 500, message: "llama runner process has terminated" }])
    const error = await failure(spec, p.where(server))
    expect(error).toMatchObject({ _tag: "ModelServerError", status: 500 })
    expect(error.message).toContain("llama runner process has terminated")
    expect(chatCalls(server)).toBe(1)
  })

  it("a proxy's plain-text error page -> typed by its status, quoted, and nothing printed to the console", async () => {
    const log = vi.spyOn(console, "log")
    const warn = vi.spyOn(console, "warn")
    try {
      const server = await start([
        { fault: "status", status: 502, message: "<html>502 Bad Gateway</html>", plainText: true }
      ])
      const error = await failure(spec, p.where(server))
      expect(error).toMatchObject({ _tag: "ModelServerError", status: 502 })
      expect(error.message).toContain("502 Bad Gateway")
      const busy = await start([
        { fault: "status", status: 503, message: "upstream busy", plainText: true, retryAfter: "1" }
      ])
      expect(await failure(spec, { ...p.where(busy), maxRetries: 0 })).toMatchObject({
        _tag: "Overloaded",
        retryAfterMs: 1000
      })
      expect(log).not.toHaveBeenCalled()
      expect(warn).not.toHaveBeenCalled()
    } finally {
      log.mockRestore()
      warn.mockRestore()
    }
  })

  it("a reply slower than the timeout -> Timeout, without waiting for the reply", async () => {
    const server = await start([{ content: "too late", delayMs: 10_000 }])
    const started = Date.now()
    const error = await failure(spec, { ...p.where(server), timeoutMs: 150 })
    expect(error).toMatchObject({ _tag: "Timeout", ms: 150, role: "planner" })
    expect(error.message).toContain("--timeout")
    expect(Date.now() - started).toBeLessThan(8_000)
  })

  it("a request's own timeout wins over the default", async () => {
    const server = await start([{ content: "too late", delayMs: 10_000 }])
    const error = await failure(spec, p.where(server), { ...request, options: { timeoutMs: 100 } })
    expect(error).toMatchObject({ _tag: "Timeout", ms: 100 })
  })

  it("a body cut mid-reply -> a typed error", async () => {
    const server = await start([{ fault: "cut" }])
    const error = await failure(spec, p.where(server))
    expect(["ModelServerError", "ModelUnreachable"]).toContain(error._tag)
    expect(error.message.length).toBeGreaterThan(10)
  })

  it("a connection reset mid-body (TCP RST) -> ModelServerError that says the server dropped it, not 'start the server'", async () => {
    const server = await start([{ fault: "reset-mid-body" }])
    const error = await failure(spec, p.where(server))
    expect(error._tag).toBe("ModelServerError")
    expect(error.message).toContain("reset the connection (ECONNRESET) in the middle of its reply")
    expect(error.message).toContain("check its log")
    expect(error.message).not.toMatch(/ollama serve|Start the server|Cannot reach/)
  })

  it("a connection reset before any reply -> a typed error", async () => {
    const server = await start([{ fault: "reset" }])
    const error = await failure(spec, p.where(server))
    expect(["ModelServerError", "ModelUnreachable"]).toContain(error._tag)
  })

  it("an invalid JSON body -> ModelServerError", async () => {
    const server = await start([{ fault: "invalid-json" }])
    const error = await failure(spec, p.where(server))
    expect(error._tag).toBe("ModelServerError")
    expect(error.message).toMatch(/JSON|choices/)
  })
})

describe("concurrency per endpoint", () => {
  it.each([
    ["ollama", 2],
    ["openai", 3],
    ["ollama", 1]
  ] as const)("%s with concurrency %i never has more requests in flight", async (name, concurrency) => {
    const p = providers.find((x) => x.name === name)!
    // Long enough that concurrent requests overlap at the server even on a loaded machine.
    const server = await p.start([{ content: "slow", delayMs: 80 }])
    servers.push(server)
    const layer = modelLayer(`${name}:qwen2.5:7b`, { ...FAST, ...p.where(server), concurrency })
    const program = Effect.flatMap(Effect.service(LanguageModel), (m) =>
      Effect.all(
        Array.from({ length: concurrency * 2 + 1 }, (_, i) =>
          m.generate({ role: `r${i}`, messages: [{ role: "user", content: String(i) }] })
        ),
        { concurrency: "unbounded" }
      )
    )
    const replies = await Effect.runPromise(Effect.provide(program, layer))
    expect(replies).toHaveLength(concurrency * 2 + 1)
    expect(server.maxInFlight()).toBe(concurrency)
  })

  it("defaults to one request at a time against Ollama", async () => {
    const parallel = process.env.OLLAMA_NUM_PARALLEL
    delete process.env.OLLAMA_NUM_PARALLEL
    onTestFinished(() => {
      if (parallel !== undefined) process.env.OLLAMA_NUM_PARALLEL = parallel
    })
    const server = await startFakeOllama({ chat: [{ content: "slow", delayMs: 80 }] })
    servers.push(server)
    const program = Effect.flatMap(Effect.service(LanguageModel), (m) =>
      Effect.all([m.generate(request), m.generate(request), m.generate(request)], { concurrency: "unbounded" })
    )
    await Effect.runPromise(Effect.provide(program, modelLayer("ollama:qwen2.5:7b", { host: server.url })))
    expect(server.maxInFlight()).toBe(1)
  })
})

describe("secrets", () => {
  const SECRET = "sk-test-SECRET-value-999999"
  it.each<[string, ReadonlyArray<Step> | undefined]>([
    ["401 echoing the key", [{ fault: "status", status: 401, message: `Incorrect API key provided: ${SECRET}` }]],
    [
      "500 echoing the header",
      [{ fault: "status", status: 500, message: `upstream said: Authorization: Bearer ${SECRET}` }]
    ],
    ["400 echoing the key", [{ fault: "status", status: 400, message: `bad key ${SECRET.slice(0, 20)} in ${SECRET}` }]],
    ["invalid JSON", [{ fault: "invalid-json" }]],
    ["a cut body", [{ fault: "cut" }]]
  ])("an OPENAI_API_KEY never appears in the error (%s)", async (_label, chat) => {
    const server = await startFakeOpenAI(chat ? { chat } : {})
    servers.push(server)
    const error = await failure("openai:qwen2.5:7b", { baseURL: server.baseURL, apiKey: SECRET })
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET}`)
    expect(error.message).not.toContain(SECRET)
    expect(JSON.stringify(error)).not.toContain(SECRET)
    expect(String(error)).not.toContain(SECRET)
  })

  it("an OPENAI_API_KEY never appears when the server is unreachable", async () => {
    const where = await closedPort(providers[1]!)
    const error = await failure("openai:qwen2.5:7b", { ...where, apiKey: SECRET })
    expect(error._tag).toBe("ModelUnreachable")
    expect(`${error.message} ${JSON.stringify(error)} ${String(error)}`).not.toContain(SECRET)
  })
})
