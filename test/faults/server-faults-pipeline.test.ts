// Model server faults inside a whole Smurfs run (H1's suite covers single requests): every fault ends in a recovery or a recorded give-up, never a hang.
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { schemaValueOf } from "../../bench/sim/schema-value.ts"
import { smurfs } from "../../src/agents/smurfs.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { type ModelOptions, modelLayer } from "../../src/llm/spec.ts"
import { demoLibrary } from "../../src/tools/demo/index.ts"
import { isKind } from "../../src/trace/events.ts"
import type { Trajectory } from "../../src/trace/trajectory.ts"
import type { FakeServer, Step } from "../fake-servers/core.ts"
import { startFakeOllama } from "../fake-servers/ollama.ts"
import { startFakeOpenAI } from "../fake-servers/openai.ts"

const repo = fileURLToPath(new URL("../..", import.meta.url))
/** Fast retries and a short timeout so that the suite stays quick; a hang would hit the test's own timeout. */
const FAST: ModelOptions = { retryBaseMs: 1, maxRetryDelayMs: 20, maxRetries: 2, timeoutMs: 300 }

const FAULTS: ReadonlyArray<[string, Step]> = [
  ["500", { fault: "status", status: 500, message: "llama runner process has terminated" }],
  ["503", { fault: "status", status: 503 }],
  ["429 without Retry-After", { fault: "status", status: 429 }],
  ["429 with Retry-After", { fault: "status", status: 429, retryAfter: "1" }],
  ["404 (model gone)", { fault: "status", status: 404, message: "model not found" }],
  ["slower than the timeout", { content: "{}", delayMs: 5_000 }],
  ["cut mid-reply", { fault: "cut" }],
  ["reset", { fault: "reset" }],
  ["invalid JSON body", { fault: "invalid-json" }]
]
const TYPED = new Set([
  "ModelServerError",
  "Overloaded",
  "Timeout",
  "ModelUnreachable",
  "ModelNotFound",
  "MalformedOutput"
])

/**
 * Valid replies for the request's schema, with demo-tool arguments that work. The run is the library's default loop:
 * the fused executor's JSON reply holds the calculator's expression under `arguments` (the paper's three-call loop
 * asked for it at the top of its own request), so the hint looks at the leaf's own key.
 */
const validReply = (body: any): Step => {
  const schema = body.response_format?.json_schema?.schema ?? body.format
  if (!schema || typeof schema !== "object") return "{}"
  const hint = (path: ReadonlyArray<string>) =>
    path.at(-1) === "expression" ? "2 + 3" : path.at(-1) === "status" ? "solved" : undefined
  return JSON.stringify(schemaValueOf(schema, hint))
}

const servers: Array<FakeServer> = []
afterEach(async () => void (await Promise.all(servers.splice(0).map((s) => s.close()))))

const providers = [
  {
    name: "ollama",
    start: (chat: (body: any, i: number) => Step) => startFakeOllama({ chat }),
    where: (s: FakeServer): ModelOptions => ({ host: s.url })
  },
  {
    name: "openai",
    start: (chat: (body: any, i: number) => Step) => startFakeOpenAI({ chat }),
    where: (s: FakeServer): ModelOptions => ({ baseURL: `${s.url}/v1` })
  }
] as const

const runOn = async (
  provider: (typeof providers)[number],
  chat: (body: any, i: number) => Step
): Promise<Trajectory> => {
  const server = await provider.start(chat)
  servers.push(server)
  const task = { id: "server-fault", query: "What is 2 + 3?", tools: demoLibrary() }
  return Effect.runPromise(
    smurfs({ maxSteps: 2 })(task).pipe(
      Effect.provide(modelLayer(`${provider.name}:qwen2.5:7b`, { ...FAST, ...provider.where(server) }))
    )
  )
}

const endsProperly = (t: Trajectory) =>
  isKind(t.events.at(-1) ?? { type: "" }, "task_finished") &&
  (t.finishType === "give_answer" ? t.finalAnswer.length > 0 : t.events.some((e) => isKind(e, "give_up")))
const errorTags = (t: Trajectory) =>
  t.events.filter((e) => isKind(e, "error") || isKind(e, "give_up")).map((e) => String(e.data["tag"] ?? ""))

describe.each(providers)("$name: faults during a Smurfs run", (provider) => {
  it.each(FAULTS)(
    "%s on every third call: the run recovers or records a give-up",
    async (_label, fault) => {
      let injected = 0
      // the second request of every three, so that a retried request (429, 503) meets a healthy server
      const t = await runOn(provider, (body, i) => (i % 3 === 1 ? (injected++, fault) : validReply(body)))
      expect(injected).toBeGreaterThan(0)
      expect(endsProperly(t)).toBe(true)
      for (const tag of errorTags(t)) expect(TYPED.has(tag), `untyped failure "${tag}"`).toBe(true)
      expect(t.events.some((e) => isKind(e, "model_call") && e.data["ok"] === true)).toBe(true)
      expect(t.events.some((e) => isKind(e, "model_call") && e.data["role"] === "executor.fused")).toBe(true)
      // overload is retried inside the model layer: the agents never see it
      if (/^(503|429)/.test(_label)) {
        expect(errorTags(t)).not.toContain("Overloaded")
        expect(t.finishType).toBe("give_answer")
      }
    },
    300_000
  )

  it.each(FAULTS.filter(([label]) => label !== "404 (model gone)"))(
    "%s on every call: a recorded give-up with the error's tag",
    async (_label, fault) => {
      const t = await runOn(provider, () => fault)
      expect(t.finishType).toBe("give_up")
      expect(endsProperly(t)).toBe(true)
      const tags = errorTags(t).filter((x) => x !== "")
      expect(tags.length).toBeGreaterThan(0)
      for (const tag of tags) expect(TYPED.has(tag), `untyped failure "${tag}"`).toBe(true)
    },
    300_000
  )
})

describe("connection refused during smurfs run", () => {
  it("exits with ModelUnavailable and says how to start the server", async () => {
    const server = await startFakeOllama()
    const host = server.url
    await server.close()
    const r = await promisify(execFile)(
      process.execPath,
      ["bin/smurfs.js", "run", "What is 2 + 3?", "--model", "ollama:qwen2.5:7b"],
      {
        cwd: repo,
        env: { ...process.env, NO_COLOR: "1", OLLAMA_HOST: host }
      }
    ).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr })
    )
    expect(r.code).toBe(ExitCode.ModelUnavailable)
    expect(r.stderr).toContain("ollama serve")
  }, 300_000)
})
