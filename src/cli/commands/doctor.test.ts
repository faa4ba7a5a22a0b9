import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import type { FakeServer } from "../../../test/fake-servers/core.ts"
import { startFakeOllama } from "../../../test/fake-servers/ollama.ts"
import { startFakeOpenAI } from "../../../test/fake-servers/openai.ts"
import { runDoctor } from "../../llm/doctor.ts"
import { modelLayer } from "../../llm/spec.ts"
import { ExitCode } from "../exit-codes.ts"
import { exitCodeOf, formatReport, run } from "./doctor.ts"

const servers: FakeServer[] = []
const saved = {
  OLLAMA_HOST: process.env.OLLAMA_HOST,
  OPENAI_BASE_URL: process.env.OPENAI_BASE_URL,
  SMURFS_MODEL: process.env.SMURFS_MODEL
}
let output: string[] = []

beforeEach(() => {
  output = []
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void output.push(args.join(" ")))
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void output.push(args.join(" ")))
  delete process.env.SMURFS_MODEL
})
afterEach(async () => {
  vi.restoreAllMocks()
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key]
    else process.env[key] = value
  }
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const closedAddress = async () => {
  const server = await startFakeOllama()
  await server.close()
  return server.url
}

describe("smurfs doctor", () => {
  it("with no server: exits ModelUnavailable and says how to start Ollama", async () => {
    process.env.OLLAMA_HOST = await closedAddress()
    const code = await run([])
    const text = output.join("\n")
    expect(code).toBe(ExitCode.ModelUnavailable)
    expect(text).toContain("✗ server")
    expect(text).toContain("ollama serve")
    expect(text).toContain("ollama:qwen2.5:7b")
    expect(text).toMatch(/- structured output\s+not tried/)
  })

  it("against a working Ollama: every check passes", async () => {
    const server = await startFakeOllama({ chat: ['{"ok": true, "sum": 5}'], version: "0.12.3" })
    servers.push(server)
    process.env.OLLAMA_HOST = server.url
    const code = await run(["--model", "ollama:qwen2.5:7b"])
    const text = output.join("\n")
    expect(code).toBe(ExitCode.Ok)
    expect(text).toContain("✓ server")
    expect(text).toContain("Ollama 0.12.3 is running")
    expect(text).toContain("✓ model")
    expect(text).toContain("✓ tools")
    expect(text).toContain("✓ structured output")
    expect(text).not.toContain("✗")
    expect(text).toContain("All good")
    const chat = server.chatRequests()[0]
    expect(chat.format).toMatchObject({ type: "object", required: ["ok", "sum"] })
    expect(chat.messages[1].content).toContain("2 and 3")
  })

  it("takes the model from SMURFS_MODEL", async () => {
    const server = await startFakeOllama({ models: [{ name: "llama3.2:3b", capabilities: ["completion", "tools"] }] })
    servers.push(server)
    process.env.OLLAMA_HOST = server.url
    process.env.SMURFS_MODEL = "ollama:llama3.2:3b"
    expect(await run([])).toBe(ExitCode.Ok)
    expect(server.chatRequests()[0].model).toBe("llama3.2:3b")
  })

  it("a missing model: exits ModelUnavailable with the pull command and the models the server has", async () => {
    const server = await startFakeOllama({ models: [{ name: "qwen2.5:7b" }, { name: "llama3.1:8b" }] })
    servers.push(server)
    process.env.OLLAMA_HOST = server.url
    const code = await run(["-m", "ollama:mistral:7b"])
    const text = output.join("\n")
    expect(code).toBe(ExitCode.ModelUnavailable)
    expect(text).toContain("ollama pull mistral:7b")
    expect(text).toContain("The server has: qwen2.5:7b, llama3.1:8b")
    expect(server.chatRequests()).toHaveLength(0)
  })

  it("a model without tool support is a warning, not a failure", async () => {
    const server = await startFakeOllama({ models: [{ name: "gemma2:2b", capabilities: ["completion"] }] })
    servers.push(server)
    const report = await Effect.runPromise(
      runDoctor("ollama:gemma2:2b", modelLayer("ollama:gemma2:2b", { host: server.url }), { host: server.url })
    )
    expect(report.problem).toBeUndefined()
    expect(report.checks.find((c) => c.name === "tools")).toMatchObject({ status: "warn" })
    expect(formatReport(report)).toContain("Ready for smurfs, with the warnings (!) above.")
    expect(exitCodeOf(report)).toBe(ExitCode.Ok)
  })

  it("a model that never replies with valid JSON: exits Failure", async () => {
    const server = await startFakeOllama({ chat: ["I am a chatbot, I do not speak JSON."] })
    servers.push(server)
    process.env.OLLAMA_HOST = server.url
    const code = await run([])
    expect(code).toBe(ExitCode.Failure)
    expect(output.join("\n")).toMatch(/✗ structured output\s+The model's doctor reply was not valid after 3 attempts/)
  })

  it("against an OpenAI-compatible server", async () => {
    const server = await startFakeOpenAI({ models: ["qwen2.5:7b"] })
    servers.push(server)
    process.env.OPENAI_BASE_URL = server.baseURL
    const code = await run(["--model", "openai:qwen2.5:7b"])
    const text = output.join("\n")
    expect(code).toBe(ExitCode.Ok)
    expect(text).toContain("1 models listed")
    expect(text).toMatch(/- tools/)
    expect(server.chatRequests()[0].response_format.type).toBe("json_schema")
  })

  it("a scripted model needs no server", async () => {
    const dir = mkdtempSync(join(tmpdir(), "smurfs-doctor-"))
    const file = join(dir, "script.json")
    writeFileSync(file, JSON.stringify([{ ok: true, sum: 5 }]))
    expect(await run(["--model", `scripted:${file}`])).toBe(ExitCode.Ok)
    expect(output.join("\n")).toContain("✓ structured output")
  })

  it("bad usage and bad specs have their own exit codes", async () => {
    expect(await run(["--nope"])).toBe(ExitCode.Usage)
    expect(await run(["--timeout", "soon"])).toBe(ExitCode.Usage)
    expect(await run(["--model", "olama:gpt4"])).toBe(ExitCode.BadInput)
    expect(output.join("\n")).toContain('unknown provider "olama"')
    expect(await run(["--help"])).toBe(ExitCode.Ok)
  })
})
