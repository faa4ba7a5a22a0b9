// Model replies as local models really give them, through the real clients and fake servers on loopback:
// reasoning models' thinking (a field of its own, or <think> in the content), replies a local repair fixes.
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { dfsdt } from "../src/agents/dfsdt.ts"
import { react } from "../src/agents/react.ts"
import { smurfs } from "../src/agents/smurfs.ts"
import { liveView } from "../src/cli/live-view.ts"
import { modelLayer } from "../src/llm/spec.ts"
import { demoLibrary } from "../src/tools/demo/index.ts"
import { isKind } from "../src/trace/events.ts"
import type { Trajectory } from "../src/trace/trajectory.ts"
import { answerFor } from "./agent-answers.ts"
import { startFakeOllama } from "./fake-servers/ollama.ts"
import { startFakeOpenAI } from "./fake-servers/openai.ts"
import { paperLoop } from "./pipeline-fixtures.ts"

/** The baselines' calls in the context tests: the calculator, then Finish. */
const calculator = { name: "calculator", arguments: { expression: "6 * 7" } }
const finish = { name: "Finish", arguments: { return_type: "give_answer", final_answer: "6 * 7 = 42" } }
/** Characters of a request's messages and schema. */
const promptChars = (body: any) =>
  body.messages.reduce((n: number, m: any) => n + String(m.content ?? "").length, 0) +
  JSON.stringify(body.format ?? "").length
/** What the server tokenizes: every message with its tool calls, the schema and the tools. */
const sentChars = (body: any) =>
  promptChars(body) +
  JSON.stringify(body.tools ?? "").length +
  body.messages.reduce((n: number, m: any) => n + JSON.stringify(m.tool_calls ?? "").length, 0)
/** ReAct and DFSDT in both tool-calling modes. */
const BASELINE_CASES = [
  { name: "react native", method: react({ toolCalling: "native" }) },
  { name: "react json", method: react({ toolCalling: "json" }) },
  { name: "dfsdt native", method: dfsdt({ toolCalling: "native" }) },
  { name: "dfsdt json", method: dfsdt({ toolCalling: "json" }) }
]

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
  for (const body of requests)
    for (const m of body.messages) expect(String(m.content ?? "")).not.toContain("Let me think")
}

describe("reasoning models", () => {
  it("Ollama's `thinking` field is traced and never parsed; `think` is sent as asked", async () => {
    const server = await startFakeOllama((body: any) => ({
      thinking: THOUGHT,
      content: JSON.stringify(answerFor(body.format))
    }))
    closers.push(() => server.close())
    const t = await Effect.runPromise(
      smurfs()(task).pipe(
        Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true, think: false }))
      )
    )
    expectCleanRun(t, server.chatRequests())
    for (const body of server.chatRequests()) expect(body.think).toBe(false)
  })

  it("a <think> block with braces in the content, before the JSON, still parses (OpenAI-compatible server)", async () => {
    const server = await startFakeOpenAI(
      (body: any) =>
        `<think>${THOUGHT}</think>\n${JSON.stringify(answerFor(body.response_format?.json_schema?.schema))}`
    )
    closers.push(() => server.close())
    const t = await Effect.runPromise(
      smurfs()(task).pipe(
        Effect.provide(modelLayer("openai:qwen2.5:7b", { baseURL: server.baseURL, apiKey: "k", think: "low" }))
      )
    )
    expectCleanRun(t, server.chatRequests())
    for (const body of server.chatRequests()) expect(body.reasoning_effort).toBe("low")
  })

  it("`reasoning_content` and a template-opened `...</think>` are both thinking; think on/off is the template's enable_thinking", async () => {
    const server = await startFakeOpenAI((body: any) => ({
      thinking: THOUGHT,
      content: `${THOUGHT} {"x": 1}</think>${JSON.stringify(answerFor(body.response_format?.json_schema?.schema))}`
    }))
    closers.push(() => server.close())
    const t = await Effect.runPromise(
      smurfs()(task).pipe(
        Effect.provide(modelLayer("openai:qwen2.5:7b", { baseURL: server.baseURL, apiKey: "k", think: true }))
      )
    )
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
        return `\`\`\`json\n${json.replace(/}$/, ",}")}\n\`\`\`` // fenced with a trailing comma
      case 2:
        return json.slice(0, -1) // cut off before its last brace
      case 3:
        return `Sure! ${json.replace(/"solved"/, '"solved"').replace(/}$/, ', "extra": None, "ok": True}')}` // prose, Python literals
      default:
        return json.replace(/}$/, " // done\n}")
    }
  }

  it("repairs every botched reply with no model call spent, counted as the `repair` guardrail", async () => {
    // the paper's loop, whose seven requests botch their JSON in all five ways, and the default (fused) loop
    for (const [options, expected] of [
      [paperLoop(), 7], // planner, thought, choose, args, answer, verify, final: one call each
      [{}, 4] // planner, fused thought and call, verify, final
    ] as const) {
      let n = 0
      const server = await startFakeOllama((body: any) => botched(answerFor(body.format), n++))
      closers.push(() => server.close())
      const t = await Effect.runPromise(
        smurfs(options)(task).pipe(
          Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true }))
        )
      )
      expect(t.finishType).toBe("give_answer")
      expect(t.finalAnswer).toContain("42")
      const calls = server.chatRequests().length
      expect(calls).toBe(expected)
      expect(t.totals.guardrails["repair"]).toBe(calls)
      expect(t.totals.guardrailsRecovered?.["repair"]).toBe(calls)
      expect(t.totals.guardrails["format"]).toBeUndefined()
      for (const body of server.chatRequests())
        for (const m of body.messages) expect(m.content).not.toContain("[guardrail reflection]")
    }
  })

  it("prose with no JSON is not 'repaired': the model is asked again", async () => {
    let n = 0
    const server = await startFakeOllama((body: any) =>
      n++ === 0 ? "I cannot help with that." : JSON.stringify(answerFor(body.format))
    )
    closers.push(() => server.close())
    const t = await Effect.runPromise(
      smurfs()(task).pipe(Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true })))
    )
    expect(t.finishType).toBe("give_answer")
    expect(t.totals.guardrails["format"]).toBe(1)
    expect(t.totals.guardrails["repair"]).toBeUndefined()
  })
})

describe("Ollama's tool-call parse errors (HTTP 500)", () => {
  const PARSE_ERROR = `error parsing tool call: raw='{"name": "calculator", "arguments": {expression: 6*7}}', err=invalid character 'e' looking for beginning of object key string`
  const reactTask = { id: "six-times-seven", query: "What is 6 times 7?", tools: demoLibrary() }
  const layer = (url: string) => modelLayer("ollama:qwen2.5:7b", { host: url, supportsTools: true })
  const parseErrors = (t: Trajectory) => guardrailEvents(t).filter((e) => e.data["guardrail"] === "tool_call_parse")

  it("ReAct reflects the error back and the retried call goes on", async () => {
    const server = await startFakeOllama([
      { fault: "status", status: 500, message: PARSE_ERROR },
      { toolCalls: [calculator] },
      { toolCalls: [finish] }
    ])
    closers.push(() => server.close())
    const t = await Effect.runPromise(
      react({ toolCalling: "native" })(reactTask).pipe(Effect.provide(layer(server.url)))
    )
    expect(t.finishType).toBe("give_answer")
    expect(t.finalAnswer).toBe("6 * 7 = 42")
    expect(parseErrors(t).map((e) => e.data["recovered"])).toEqual([true])
    const retried = server.chatRequests()[1]
    expect(retried.tools.length).toBeGreaterThan(0)
    expect(retried.messages.at(-1).content).toContain("[guardrail reflection]")
    expect(retried.messages.at(-1).content).toContain("{expression: 6*7}")
  })

  it("ReAct and DFSDT fall back to JSON mode when the server keeps failing to parse; the run never ends on it", async () => {
    for (const method of [react({ toolCalling: "native" }), dfsdt({ toolCalling: "native" })]) {
      let n = 0
      const server = await startFakeOllama((body: any) => {
        if (body.tools) return { fault: "status", status: 500, message: PARSE_ERROR }
        const action =
          n++ === 0
            ? { thought: "multiply", action: "calculator", action_input: calculator.arguments }
            : { thought: "done", action: "Finish", action_input: finish.arguments }
        return JSON.stringify(action)
      })
      closers.push(() => server.close())
      const t = await Effect.runPromise(method(reactTask).pipe(Effect.provide(layer(server.url))))
      expect(t.finishType).toBe("give_answer")
      expect(t.finalAnswer).toBe("6 * 7 = 42")
      expect(t.events.filter((e) => isKind(e, "tool_call")).map((e) => e.data["ok"])).toEqual([true])
      // Per step: the call, two reflected retries, then one JSON-mode call.
      expect(parseErrors(t).length).toBe(6)
      expect(parseErrors(t).every((e) => e.data["recovered"] === true)).toBe(true)
      const fallback = server.chatRequests().find((b: any) => b.format)
      expect(fallback.tools).toBeUndefined()
      expect(fallback.messages.at(-1).content).toContain('"action_input"')
    }
  })
})

describe("every prompt fits the context", () => {
  const filler = "The quick brown fox jumps over the lazy dog while the calculator waits. "
  const hugeQuery = `What is 6 times 7? ${filler.repeat(Math.ceil(100_000 / filler.length))}`
  const NUM_CTX = 8192
  /** What the server tokenizes: every message, and the schema. */

  it("a 100 KB query is cut, with one visible warning, so that every prompt (planner and final answer included) fits num_ctx", async () => {
    const server = await startFakeOllama((body: any) => JSON.stringify(answerFor(body.format)))
    closers.push(() => server.close())
    const lines: string[] = []
    const t = await Effect.runPromise(
      smurfs({ onEvent: liveView((line) => lines.push(line)) })({ ...task, query: hugeQuery }).pipe(
        Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true, numCtx: NUM_CTX }))
      )
    )
    expect(hugeQuery.length).toBeGreaterThan(100_000)
    expect(t.finishType).toBe("give_answer")
    const requests = server.chatRequests()
    expect(requests.map((b: any) => b.options.num_ctx)).toEqual(requests.map(() => NUM_CTX))
    const roles = modelCalls(t).map((e) => e.data["role"])
    expect(roles).toContain("planner")
    expect(roles).toContain("answerer.final")
    for (const body of requests) expect(Math.ceil(promptChars(body) / 4)).toBeLessThanOrEqual(NUM_CTX)
    const warnings = guardrailEvents(t).filter((e) => e.data["guardrail"] === "context")
    expect(warnings.length).toBe(1)
    expect(lines.some((l) => l.includes("guardrail context") && l.includes("does not fit"))).toBe(true)
  })

  it("ReAct and DFSDT (native and JSON mode) never cut the query: a 100 KB query that cannot fit is an error naming --num-ctx, with no model call", async () => {
    for (const { name, method } of BASELINE_CASES) {
      const server = await startFakeOllama(() =>
        JSON.stringify({ thought: "", action: "Finish", action_input: { return_type: "give_up_and_restart" } })
      )
      closers.push(() => server.close())
      const t = await Effect.runPromise(
        method({ ...task, query: hugeQuery }).pipe(
          Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true, numCtx: NUM_CTX }))
        )
      )
      expect(t.finishType, name).toBe("give_up")
      expect(t.error, name).toContain("--num-ctx")
      expect(server.chatRequests().length, name).toBe(0)
    }
  })

  it("ReAct and DFSDT (native and JSON mode) fit a growing conversation of runaway thoughts, the query whole", async () => {
    const thought = `Let me multiply. ${filler.repeat(Math.ceil(8_000 / filler.length))}`
    const query = `What is 6 times 7? ${filler.repeat(Math.ceil(4_000 / filler.length))}`
    for (const { name, method } of BASELINE_CASES) {
      let n = 0
      // Three calls, each with an 8 KB thought, then Finish: 9 of the 12 tree nodes, about 6,000 tokens of conversation.
      const server = await startFakeOllama((body: any) => {
        const call = n++ < 3 ? calculator : finish
        return body.tools
          ? { content: thought, toolCalls: [call] }
          : JSON.stringify({ thought, action: call.name, action_input: call.arguments })
      })
      closers.push(() => server.close())
      const t = await Effect.runPromise(
        method({ ...task, query }).pipe(
          Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true, numCtx: NUM_CTX }))
        )
      )
      expect(t.finishType, name).toBe("give_answer")
      const requests = server.chatRequests()
      expect(requests.length, name).toBe(4)
      for (const body of requests) expect(Math.ceil(sentChars(body) / 4), name).toBeLessThanOrEqual(NUM_CTX)
      // Whole, the last request would hold the three thoughts (24 KB): the conversation was cut to fit, never the query.
      const last = requests.at(-1)!
      expect(
        last.messages.some(
          (m: any) => String(m.content).includes("[truncated]") && String(m.content).includes("Let me multiply")
        ),
        name
      ).toBe(true)
      for (const body of requests) expect(String(body.messages[1].content), name).toContain(query)
    }
  })

  it("the budget follows the server's reported usage: a model of 2 characters a token still gets prompts within num_ctx", async () => {
    const server = await startFakeOllama((body: any) => ({
      content: JSON.stringify(answerFor(body.format)),
      promptTokens: Math.ceil(promptChars(body) / 2)
    }))
    closers.push(() => server.close())
    const t = await Effect.runPromise(
      smurfs()({ ...task, query: hugeQuery }).pipe(
        Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true, numCtx: NUM_CTX }))
      )
    )
    expect(t.finishType).toBe("give_answer")
    // The first prompt is sized by the 4-characters estimate; its reply's usage calibrates every later one.
    const later = server.chatRequests().slice(1)
    // the default loop's requests after the planner's: the fused executor's, the verifier's, the final answer's
    expect(later.length).toBe(3)
    for (const body of later) expect(Math.ceil(promptChars(body) / 2)).toBeLessThanOrEqual(NUM_CTX)
  })

  it("ReAct and DFSDT follow the reported usage too: at 2 characters a token every request fits num_ctx, the query still whole", async () => {
    // 6,000 characters: 1,500 tokens by the first estimate, 3,000 at the model's real 2.
    const query = `What is 6 times 7? ${filler.repeat(Math.ceil(6_000 / filler.length))}`
    const thought = `Let me multiply. ${filler.repeat(Math.ceil(8_000 / filler.length))}`
    for (const { name, method } of BASELINE_CASES) {
      let n = 0
      const server = await startFakeOllama((body: any) => {
        const call = n++ < 3 ? calculator : finish
        const promptTokens = Math.ceil(sentChars(body) / 2)
        return body.tools
          ? { content: thought, toolCalls: [call], promptTokens }
          : { content: JSON.stringify({ thought, action: call.name, action_input: call.arguments }), promptTokens }
      })
      closers.push(() => server.close())
      const t = await Effect.runPromise(
        method({ ...task, query }).pipe(
          Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, supportsTools: true, numCtx: NUM_CTX }))
        )
      )
      expect(t.finishType, name).toBe("give_answer")
      const requests = server.chatRequests()
      expect(requests.length, name).toBe(4)
      // Its reply reports 2 characters a token: every later request fits num_ctx by that count, the conversation cut, the query whole.
      for (const body of requests.slice(1)) expect(Math.ceil(sentChars(body) / 2), name).toBeLessThanOrEqual(NUM_CTX)
      for (const body of requests) expect(String(body.messages[1].content), name).toContain(query)
    }
  })
})
