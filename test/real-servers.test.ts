// What real servers taught us (issue 30 §3), against fake servers that answer as llama.cpp's server, vLLM and Ollama
// do in their sources: a context overflow with the server's own figures and the setting that fixes it there; model
// checks that follow the server (llama.cpp serves any name); an output limit on every request, a cut reply a
// guardrail event and never a wait for the timeout.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, afterEach, describe, expect, it, vi } from "vitest"
import { z } from "zod"
import { runBenchSettings } from "../bench/app.ts"
import { silentProgress } from "../bench/progress.ts"
import { benchSettings } from "../bench/settings.ts"
import { run } from "../src/cli/commands/run.ts"
import { runDoctor } from "../src/llm/doctor.ts"
import { ContextOverflow, type GenerateError, type InvalidModelSpec } from "../src/llm/errors.ts"
import { checkModelPresent, type ModelOptions, modelLayer } from "../src/llm/spec.ts"
import { generateObject } from "../src/llm/structured.ts"
import { MINI_DATA } from "./data.ts"
import { type FakeOllama, startFakeOllama } from "./fake-servers/ollama.ts"
import { type FakeOpenAI, startFakeOpenAI } from "./fake-servers/openai.ts"

const servers: Array<FakeOpenAI | FakeOllama> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})
const scratch = mkdtempSync(join(tmpdir(), "smurfs-real-servers-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const openai = async (options: Parameters<typeof startFakeOpenAI>[0]) => {
  const server = await startFakeOpenAI(options)
  servers.push(server)
  return server
}

const Plan = z.object({ subtasks: z.array(z.string()) })

/** One planner request of `tokens` prompt tokens (4 characters each, as the fakes count) to `spec`; its failure. */
const plannerFailure = async (
  spec: string,
  options: ModelOptions,
  tokens: number
): Promise<GenerateError | InvalidModelSpec> => {
  const exit = await Effect.runPromise(
    Effect.result(
      generateObject({
        role: "planner",
        schema: Plan,
        messages: [{ role: "user", content: "x".repeat(tokens * 4) }]
      }).pipe(Effect.provide(modelLayer(spec, { timeoutMs: 10_000, maxRetries: 0, ...options })))
    )
  )
  if (exit._tag !== "Failure") throw new Error("the request did not fail")
  return exit.failure
}

describe("a prompt over the server's context window", () => {
  it("llama.cpp: its n_prompt_tokens and n_ctx, and llama-server -c (not only --num-ctx), never 'needs 0 tokens'", async () => {
    const server = await openai({ imitate: "llama.cpp", contextTokens: 2048 })
    const failure = await plannerFailure("openai:tiny", { baseURL: server.baseURL, numCtx: 8192 }, 3143)
    expect(failure).toBeInstanceOf(ContextOverflow)
    expect(failure).toMatchObject({ server: "llama.cpp", promptTokens: 3143, contextTokens: 2048 })
    expect(failure.message).toContain("3143 prompt tokens are more than its context window of 2048 tokens")
    expect(failure.message).toContain("llama-server")
    expect(failure.message).toContain("-c/--ctx-size")
    expect(failure.message).toContain("--num-ctx 2048")
    expect(failure.message).not.toMatch(/needs 0 tokens|context window is 8192/)
  })

  it("vLLM: its input tokens and max_model_len, and --max-model-len; a reply limit over the rest of the window too", async () => {
    const server = await openai({ imitate: "vllm", models: ["tiny"], contextTokens: 4096 })
    const over = await plannerFailure("openai:tiny", { baseURL: server.baseURL }, 5000)
    expect(over).toMatchObject({ _tag: "ContextOverflow", server: "vLLM", promptTokens: 5000, contextTokens: 4096 })
    expect(over.message).toContain("--max-model-len")
    // the prompt fits, the planner's output limit (1024) does not fit beside it
    const reply = await plannerFailure("openai:tiny", { baseURL: server.baseURL }, 3500)
    expect(reply).toMatchObject({ server: "vLLM", promptTokens: 3500, completionTokens: 1024, contextTokens: 4096 })
    expect(reply.message).toContain("3500 prompt tokens and up to 1024 reply tokens")
    expect(reply.message).toContain("--max-model-len")
  })

  it("Ollama: asked not to cut the prompt silently (truncate: false), it refuses it, and the fix is --num-ctx", async () => {
    const server = await startFakeOllama({ contextTokens: 32_768 })
    servers.push(server)
    const failure = await plannerFailure("ollama:qwen2.5:7b", { host: server.url, numCtx: 2048 }, 3000)
    expect(server.chatRequests()[0]).toMatchObject({ truncate: false, options: { num_ctx: 2048 } })
    expect(failure).toMatchObject({ _tag: "ContextOverflow", server: "Ollama", contextTokens: 2048 })
    expect(failure.message).toContain("--num-ctx")
    expect(failure.message).not.toMatch(/needs 0 tokens/)
  })

  it("another OpenAI-compatible server: its figures in OpenAI's words, and each server's setting named", async () => {
    const server = await openai({ models: ["tiny"], contextTokens: 2048 })
    const failure = await plannerFailure("openai:tiny", { baseURL: server.baseURL }, 3000)
    expect(failure).toMatchObject({ server: "OpenAI-compatible", promptTokens: 3000, contextTokens: 2048 })
    for (const setting of ["llama-server -c", "vLLM --max-model-len", "OLLAMA_CONTEXT_LENGTH"])
      expect(failure.message).toContain(setting)
  })

  it("smurfs' own estimate never says 'needs 0 tokens'", () => {
    const unknown = new ContextOverflow({ role: "planner", promptTokens: 0, contextTokens: 8192, provider: "openai" })
    expect(unknown.message).toBe(
      "The planner prompt does not fit the context window of 8192 tokens. Raise the server's context where it starts (llama-server -c, vLLM --max-model-len, Ollama OLLAMA_CONTEXT_LENGTH) and --num-ctx to match, or use fewer tools."
    )
    expect(
      new ContextOverflow({ role: "planner", promptTokens: 9000, contextTokens: 8192, provider: "ollama" }).message
    ).toBe(
      "The planner prompt needs about 9000 tokens but the context window is 8192. Raise --num-ctx (sent to Ollama as num_ctx with every request) or use fewer tools."
    )
  })
})

describe("the model check follows the server", () => {
  it("llama.cpp serves any name: a warning naming the file it runs, and one for a window smaller than --num-ctx", async () => {
    const server = await openai({ imitate: "llama.cpp", contextTokens: 2048 })
    const warnings = await Effect.runPromise(checkModelPresent("openai:tiny", { baseURL: server.baseURL }))
    expect(warnings).toEqual([
      `llama.cpp's server serves one model under any name: "tiny" runs /models/tiny.gguf.`,
      "the server's context window is 2048 tokens, smaller than the 8192 smurfs fits its prompts to (--num-ctx): set --num-ctx 2048, or start the server with a larger window (llama-server -c)."
    ])
    const doctor = await Effect.runPromise(
      runDoctor("openai:tiny", modelLayer("openai:tiny", { baseURL: server.baseURL }), { baseURL: server.baseURL })
    )
    expect(doctor.problem).toBeUndefined()
    expect(doctor.checks.find((c) => c.name === "model")).toMatchObject({ status: "warn" })
    expect(doctor.checks.find((c) => c.name === "server")?.detail).toContain("llama.cpp server")
  })

  it("vLLM refuses names it does not serve: refused early, with the names it has, by the check and by doctor", async () => {
    const server = await openai({ imitate: "vllm", models: ["Qwen/Qwen2.5-7B-Instruct"] })
    const exit = await Effect.runPromise(Effect.result(checkModelPresent("openai:tiny", { baseURL: server.baseURL })))
    expect(exit).toMatchObject({ _tag: "Failure", failure: { _tag: "ModelNotFound" } })
    expect(exit._tag === "Failure" && exit.failure.message).toContain("Qwen/Qwen2.5-7B-Instruct")
    const doctor = await Effect.runPromise(
      runDoctor("openai:tiny", modelLayer("openai:tiny", { baseURL: server.baseURL }), { baseURL: server.baseURL })
    )
    expect(doctor.problem).toBe("unavailable")
    expect(server.chatRequests()).toHaveLength(0)
  })

  it("bench runs a name llama.cpp's server answers, as run does (it refused it before any task)", async () => {
    const server = await openai({ imitate: "llama.cpp" })
    const before = process.env["OPENAI_BASE_URL"]
    process.env["OPENAI_BASE_URL"] = server.baseURL
    const logs: Array<string> = []
    try {
      const out = join(scratch, "llama-any-name")
      const outcome = await Effect.runPromise(
        runBenchSettings(
          benchSettings({
            out,
            data: MINI_DATA.path,
            model: "openai:tiny",
            groups: ["G1_instruction"],
            limit: 1,
            methods: ["react"],
            numCtx: 4096
          }),
          { ...silentProgress, log: (line) => logs.push(line) }
        )
      )
      expect(outcome.kind).toBe("ran")
      expect(readdirSync(join(out, "tasks", "react", "G1_instruction"))).toHaveLength(1)
      expect(logs.join("\n")).toContain("llama.cpp's server serves one model under any name")
      expect(server.chatRequests().length).toBeGreaterThan(0)
      // and `smurfs run` with the same name: it runs, with the same warning
      const written: Array<string> = []
      const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (written.push(String(chunk)), true))
      vi.spyOn(console, "log").mockImplementation(() => {})
      vi.spyOn(console, "error").mockImplementation((...args) => void written.push(args.join(" ")))
      try {
        expect(await run(["--model", "openai:tiny", "--tools", "demo", "--num-ctx", "4096", "What is 2 + 3?"])).toBe(0)
      } finally {
        write.mockRestore()
        vi.restoreAllMocks()
      }
      expect(written.join("")).toContain(`smurfs run: openai:tiny: llama.cpp's server serves one model under any name`)
    } finally {
      if (before === undefined) delete process.env["OPENAI_BASE_URL"]
      else process.env["OPENAI_BASE_URL"] = before
    }
  })
})

/** The guardrail events of a task record. */
const guardrails = (file: string): Array<{ guardrail: string; role: string }> =>
  (
    JSON.parse(readFileSync(file, "utf8")) as {
      events: Array<{ type: string; data: { guardrail: string; role: string } }>
    }
  ).events
    .filter((e) => e.type === "dev.smurfs.guardrail")
    .map((e) => e.data)

describe("a model that rambles", () => {
  it("is stopped by every request's output limit: the tasks of smurfs, react and dfsdt end, none waits for its timeout", async () => {
    // the server never answers a request without max_tokens (it would still be generating at the timeout)
    const server = await openai({
      imitate: "llama.cpp",
      models: ["tiny"],
      chat: [{ ramble: true, content: "and then " }]
    })
    const before = process.env["OPENAI_BASE_URL"]
    process.env["OPENAI_BASE_URL"] = server.baseURL
    try {
      const out = join(scratch, "ramble")
      const settings = benchSettings({
        out,
        data: MINI_DATA.path,
        model: "openai:tiny",
        groups: ["G1_instruction"],
        limit: 1,
        methods: ["smurfs", "react", "dfsdt"],
        timeoutMs: 20_000,
        numCtx: 4096
      })
      const outcome = await Effect.runPromise(runBenchSettings(settings, silentProgress))
      expect(outcome.kind).toBe("ran")
      const requests = server.chatRequests()
      expect(requests.length).toBeGreaterThan(3)
      for (const body of requests) expect(body.max_tokens, JSON.stringify(body).slice(0, 200)).toBeGreaterThan(0)
      expect(new Set(requests.map((b) => b.max_tokens))).toContain(1024) // react/dfsdt as StableToolBench sends
      for (const method of ["smurfs", "react", "dfsdt"]) {
        const dir = join(out, "tasks", method, "G1_instruction")
        const [file] = readdirSync(dir)
        const record = JSON.parse(readFileSync(join(dir, file!), "utf8")) as { finishType: string }
        expect(record.finishType, method).not.toBe("error")
        expect(
          guardrails(join(dir, file!)).map((g) => g.guardrail),
          method
        ).toContain("length")
      }
    } finally {
      if (before === undefined) delete process.env["OPENAI_BASE_URL"]
      else process.env["OPENAI_BASE_URL"] = before
    }
  })

  it("Ollama: num_predict on every request; a cut reply is reflected, then the step gives up with the reason", async () => {
    const server = await startFakeOllama({ chat: [{ ramble: true, content: '{"subtasks": ["a", ' }] })
    servers.push(server)
    const failure = await plannerFailure("ollama:qwen2.5:7b", { host: server.url }, 10)
    expect(failure).toMatchObject({ _tag: "MalformedOutput", attempts: 3 })
    expect(failure.message).toContain("cut at the output limit of 1024 tokens")
    const sent = server.chatRequests()
    expect(sent).toHaveLength(3)
    for (const body of sent) expect(body.options.num_predict).toBe(1024)
  })

  it("an OpenAI-compatible server that refuses max_tokens by name gets max_completion_tokens from then on", async () => {
    // OpenAI's reasoning models answer so; llama.cpp's server, vLLM and Ollama take either name
    const server = await openai({
      models: ["o-mini"],
      chat: (body) =>
        body.max_tokens !== undefined
          ? {
              fault: "status",
              status: 400,
              message:
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
            }
          : JSON.stringify({ subtasks: ["a"] })
    })
    const layer = modelLayer("openai:o-mini", { baseURL: server.baseURL, timeoutMs: 10_000 })
    const ask = generateObject({ role: "planner", schema: Plan, messages: [{ role: "user", content: "plan" }] })
    const first = await Effect.runPromise(Effect.provide(ask, layer))
    expect(first.value).toEqual({ subtasks: ["a"] })
    // the next task's model (built anew) sends the name the server takes at once
    await Effect.runPromise(Effect.provide(ask, layer))
    const sent = server.chatRequests()
    expect(sent.map((b) => [b.max_tokens, b.max_completion_tokens])).toEqual([
      [1024, undefined],
      [undefined, 1024],
      [undefined, 1024]
    ])
  })

  it("a reply cut after a whole JSON object (blank lines to the limit) is taken as it stands", async () => {
    const server = await startFakeOllama({
      chat: [{ ramble: true, content: `{"subtasks": ["a"]}${" ".repeat(4096)}` }]
    })
    servers.push(server)
    const value = await Effect.runPromise(
      generateObject({ role: "planner", schema: Plan, messages: [{ role: "user", content: "plan" }] }).pipe(
        Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, timeoutMs: 10_000 }))
      )
    )
    expect(value).toMatchObject({ value: { subtasks: ["a"] }, attempts: 1 })
  })
})
