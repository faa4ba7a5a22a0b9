// Model replies as local models really give them, through the real clients and fake servers on loopback:
// reasoning models' thinking (a field of its own, or <think> in the content), replies a local repair fixes.
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { smurfs } from "../src/agents/smurfs.ts"
import { modelLayer } from "../src/llm/spec.ts"
import { demoLibrary } from "../src/tools/demo/index.ts"
import { isKind } from "../src/trace/events.ts"
import type { Trajectory } from "../src/trace/trajectory.ts"
import { startFakeOllama } from "./fake-servers/ollama.ts"
import { startFakeOpenAI } from "./fake-servers/openai.ts"

/** Each agent's answer, by the JSON Schema it asked for. */
const answerFor = (schema: any): Record<string, unknown> => {
  const keys = Object.keys(schema?.properties ?? {})
  if (keys.includes("subtasks")) return { subtasks: ["Compute 6 * 7 with the calculator"] }
  if (keys.includes("thought")) return { thought: "The calculator can multiply." }
  if (keys.includes("tool")) return { tool: "calculator" }
  if (keys.includes("expression")) return { expression: "6 * 7" }
  if (keys.includes("status")) return { status: "solved", reason: "the product was computed" }
  return { answer: "6 * 7 = 42" }
}

/** Thinking that looks like an answer of another shape: it must never be parsed. */
const THOUGHT = 'Let me think. Maybe {"tool": "no_such_tool"} or {"subtasks": []}? No: follow the format.'

const task = { id: "six-times-seven", query: "What is 6 times 7?", tools: demoLibrary() }
const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length) await closers.pop()!()
})

const guardrailEvents = (t: Trajectory) => t.events.filter((e) => isKind(e, "guardrail"))
const modelCalls = (t: Trajectory) => t.events.filter((e) => isKind(e, "model_call"))

/** The task completed, no reflection was spent, and the thinking was traced but never sent on. */
const expectCleanRun = (t: Trajectory, requests: any[]) => {
  expect(t.finishType).toBe("give_answer")
  expect(t.finalAnswer).toContain("42")
  expect(guardrailEvents(t)).toEqual([])
  expect(requests.length).toBe(t.totals.modelCalls)
  for (const call of modelCalls(t)) {
    expect(call.data["thinking"]).toContain("Let me think")
    expect(String(call.data["reply"])).not.toContain("Let me think")
  }
  for (const body of requests) for (const m of body.messages) expect(String(m.content ?? "")).not.toContain("Let me think")
}

describe("reasoning models", () => {
  it("Ollama's `thinking` field is traced and never parsed; `think` is sent as asked", async () => {
    const server = await startFakeOllama((body: any) => ({ thinking: THOUGHT, content: JSON.stringify(answerFor(body.format)) }))
    closers.push(() => server.close())
    const t = await Effect.runPromise(smurfs()(task).pipe(Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true, think: false }))))
    expectCleanRun(t, server.chatRequests())
    for (const body of server.chatRequests()) expect(body.think).toBe(false)
  })

  it("a <think> block with braces in the content, before the JSON, still parses (OpenAI-compatible server)", async () => {
    const server = await startFakeOpenAI((body: any) => `<think>${THOUGHT}</think>\n${JSON.stringify(answerFor(body.response_format?.json_schema?.schema))}`)
    closers.push(() => server.close())
    const t = await Effect.runPromise(smurfs()(task).pipe(Effect.provide(modelLayer("openai:qwen2.5:7b", { baseURL: server.baseURL, apiKey: "k", think: "low" }))))
    expectCleanRun(t, server.chatRequests())
    for (const body of server.chatRequests()) expect(body.reasoning_effort).toBe("low")
  })

  it("`reasoning_content` and a template-opened `...</think>` are both thinking; think on/off is the template's enable_thinking", async () => {
    const server = await startFakeOpenAI((body: any) => ({ thinking: THOUGHT, content: `${THOUGHT} {"x": 1}</think>${JSON.stringify(answerFor(body.response_format?.json_schema?.schema))}` }))
    closers.push(() => server.close())
    const t = await Effect.runPromise(smurfs()(task).pipe(Effect.provide(modelLayer("openai:qwen2.5:7b", { baseURL: server.baseURL, apiKey: "k", think: true }))))
    expectCleanRun(t, server.chatRequests())
    for (const body of server.chatRequests()) expect(body.chat_template_kwargs).toEqual({ enable_thinking: true })
  })
})

describe("local repair before a paid retry", () => {
  /** JSON as small models botch it, one way per agent call. */
  const botched = (value: Record<string, unknown>, n: number): string => {
    const json = JSON.stringify(value)
    switch (n % 5) {
      case 0:
        return json.replace(/"/g, "'").replace(/}$/, ",}") // single quotes, trailing comma
      case 1:
        return "```json\n" + json.replace(/}$/, ",}") + "\n```" // fenced with a trailing comma
      case 2:
        return json.slice(0, -1) // cut off before its last brace
      case 3:
        return `Sure! ${json.replace(/"solved"/, '"solved"').replace(/}$/, ', "extra": None, "ok": True}')}` // prose, Python literals
      default:
        return json.replace(/}$/, " // done\n}")
    }
  }

  it("repairs every botched reply with no model call spent, counted as the `repair` guardrail", async () => {
    let n = 0
    const server = await startFakeOllama((body: any) => botched(answerFor(body.format), n++))
    closers.push(() => server.close())
    const t = await Effect.runPromise(smurfs()(task).pipe(Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true }))))
    expect(t.finishType).toBe("give_answer")
    expect(t.finalAnswer).toContain("42")
    const calls = server.chatRequests().length
    expect(calls).toBe(7) // planner, thought, choose, args, answer, verify, final: one call each
    expect(t.totals.guardrails["repair"]).toBe(calls)
    expect(t.totals.guardrailsRecovered?.["repair"]).toBe(calls)
    expect(t.totals.guardrails["format"]).toBeUndefined()
    for (const body of server.chatRequests()) for (const m of body.messages) expect(m.content).not.toContain("[guardrail reflection]")
  })

  it("prose with no JSON is not 'repaired': the model is asked again", async () => {
    let n = 0
    const server = await startFakeOllama((body: any) => (n++ === 0 ? "I cannot help with that." : JSON.stringify(answerFor(body.format))))
    closers.push(() => server.close())
    const t = await Effect.runPromise(smurfs()(task).pipe(Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true }))))
    expect(t.finishType).toBe("give_answer")
    expect(t.totals.guardrails["format"]).toBe(1)
    expect(t.totals.guardrails["repair"]).toBeUndefined()
  })
})
