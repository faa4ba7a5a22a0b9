// Tool-call arguments nested a million levels deep (what a model server can send): a failed call recorded
// like any other, never "Maximum call stack size exceeded" and a task that crashes on every resume.
import { Effect, Exit } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { executeTask } from "../../bench/execute-task.ts"
import { dfsdt } from "../../src/agents/dfsdt.ts"
import { react } from "../../src/agents/react.ts"
import type { Method } from "../../src/agents/task.ts"
import { MAX_NESTING, parseJsonBounded } from "../../src/llm/nesting.ts"
import { modelLayer } from "../../src/llm/spec.ts"
import { repairJson } from "../../src/llm/structured.ts"
import { safeCall } from "../../src/tools/call.ts"
import { demoLibrary } from "../../src/tools/demo/index.ts"
import { mcpResultToToolResult } from "../../src/tools/sources/mcp-result.ts"
import { isKind } from "../../src/trace/events.ts"
import { type FakeServer, RawJson, type Step } from "../fake-servers/core.ts"
import { startFakeOllama } from "../fake-servers/ollama.ts"
import { startFakeOpenAI } from "../fake-servers/openai.ts"

const DEPTH = 1_000_000
/** `{"expression":{"a":{"a":...1...}}}`, a million objects deep. */
const deepArguments = `{"expression":${'{"a":'.repeat(DEPTH)}1${"}".repeat(DEPTH)}}`

/** First a call of the calculator with the deep arguments, then Finish with an answer. */
const script: ReadonlyArray<Step> = [
  { content: "", toolCalls: [{ name: "calculator", arguments: new RawJson(deepArguments) }] },
  { content: "", toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "42" } }] }
]

const servers: Array<FakeServer> = []
afterEach(async () => void (await Promise.all(servers.splice(0).map((s) => s.close()))))

const methods: ReadonlyArray<[string, () => Method]> = [
  ["react", () => react({ toolCalling: "native", singleChainMaxStep: 6 })],
  ["dfsdt", () => dfsdt({ toolCalling: "native", singleChainMaxStep: 6, budget: 6 })]
]

describe("a native tool call with arguments nested 1e6 deep", () => {
  it.each(methods.flatMap(([name, make]) => [["ollama", name, make] as const, ["openai", name, make] as const]))(
    "%s, %s: a failed call recorded like any other, then the task goes on",
    async (provider, _name, make) => {
      const chat = (_body: unknown, i: number) => script[Math.min(i, 1)]!
      const server = provider === "ollama" ? await startFakeOllama({ chat }) : await startFakeOpenAI({ chat })
      servers.push(server)
      const layer =
        provider === "ollama"
          ? modelLayer("ollama:qwen2.5:7b", { host: server.url })
          : modelLayer("openai:qwen2.5:7b", { baseURL: `${server.url}/v1`, apiKey: "none" })
      const query = { id: "deep", group: "G1_instruction", query: "What is 6 * 7?", apiList: [], relevant: [] } as never
      const exit = await Effect.runPromiseExit(
        executeTask(
          make(),
          { id: "deep", query: "What is 6 * 7?", tools: demoLibrary() },
          { method: "m", query },
          { modelSpec: "m", fullTrace: false }
        ).pipe(Effect.provide(layer))
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      const result = (exit as Exit.Success<any>).value
      expect(result.kind, result.error).toBe("record")
      expect(result.record.finishType, result.record.error).not.toBe("error")
      expect(server.requests.length).toBeGreaterThan(1)
      const guardrails = result.record.events.filter((e: any) => isKind(e, "guardrail"))
      expect(guardrails.map((e: any) => e.data.error).join("\n")).toMatch(
        new RegExp(`calculator: .*nested deeper than ${MAX_NESTING} levels`)
      )
      expect(JSON.stringify(result.record).length).toBeLessThan(2_000_000) // a record like any other
    },
    60_000
  )
})

describe("the nesting bound", () => {
  it("parses values up to the bound and refuses deeper ones with a message, for any parser", () => {
    const at = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`
    expect(parseJsonBounded(at(MAX_NESTING))).toBeDefined()
    expect(() => parseJsonBounded(at(MAX_NESTING + 1))).toThrow(`nested deeper than ${MAX_NESTING} levels`)
    // brackets inside strings do not count
    expect(parseJsonBounded(JSON.stringify({ text: "[".repeat(10_000) }))).toEqual({ text: "[".repeat(10_000) })
    // the local repair refuses the deep text rather than recursing through it
    expect(repairJson(`{"a": ${deepArguments},}`)).toBeUndefined()
  })

  it("a tool that returns a value nested a million deep gives a failed result saying so (a local tool, an MCP result)", async () => {
    const deep = JSON.parse(deepArguments) as unknown
    const local = await Effect.runPromise(safeCall("deep_tool", () => deep))
    expect(local).toMatchObject({
      ok: false,
      error: `tool "deep_tool" returned a value that cannot be used: the value is nested deeper than ${MAX_NESTING} levels`
    })
    expect(mcpResultToToolResult("deep_mcp", { content: [], structuredContent: deep })).toMatchObject({
      ok: false,
      error: expect.stringContaining("nested deeper than")
    })
    // a cycle is not depth: it is written as a placeholder, as before
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic["self"] = cyclic
    expect(await Effect.runPromise(safeCall("cyclic", () => cyclic))).toMatchObject({
      ok: true,
      content: '{"a":1,"self":"[Circular]"}'
    })
  })
})
