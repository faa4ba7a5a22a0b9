// The Smurfs pipeline end to end through the real `ollama` and `openai` clients against fake servers on loopback.
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { smurfs } from "../src/agents/smurfs.ts"
import { modelLayer } from "../src/llm/spec.ts"
import { demoLibrary } from "../src/tools/demo/index.ts"
import { isKind } from "../src/trace/events.ts"
import type { Trajectory } from "../src/trace/trajectory.ts"
import { answerFor } from "./agent-answers.ts"
import { startFakeOllama } from "./fake-servers/ollama.ts"
import { startFakeOpenAI } from "./fake-servers/openai.ts"

/** Answers each agent by the JSON Schema it asked for, as a model following `format` would. */
const agentReply = (schema: any): string => JSON.stringify(answerFor(schema))

const task = { id: "six-times-seven", query: "What is 6 times 7?", tools: demoLibrary() }

/**
 * The roles a default run asks (issue 33): the fused executor's one JSON request for the step, the calculator's short
 * response as the step's answer (no Answer agent call), the verifier on it.
 */
const DEFAULT_ROLES = ["planner", "executor.fused", "verifier", "answerer.final"]
const rolesOf = (trajectory: Trajectory) =>
  trajectory.events.filter((e) => isKind(e, "model_call")).map((e) => (e.data as { role: string }).role)

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length) await closers.pop()!()
})

describe("the pipeline through real clients", () => {
  it("completes a task through a fake Ollama; every request carries the schema and the same num_ctx", async () => {
    const server = await startFakeOllama((body: any) => agentReply(body.format))
    closers.push(() => server.close())
    const trajectory = await Effect.runPromise(
      smurfs()(task).pipe(
        Effect.provide(modelLayer("ollama:qwen2.5:7b", { host: server.url, numCtx: 4096, supportsTools: true }))
      )
    )
    expect(trajectory.finishType).toBe("give_answer")
    expect(trajectory.finalAnswer).toContain("42")
    const toolCall = trajectory.events.find((e) => isKind(e, "tool_call"))!.data as any
    expect(toolCall).toMatchObject({ tool: "calculator", ok: true })
    expect(toolCall.content).toContain("42")
    expect(rolesOf(trajectory)).toEqual(DEFAULT_ROLES)

    const requests = server.chatRequests()
    expect(requests.length).toBe(trajectory.totals.modelCalls)
    for (const body of requests) {
      expect(body.format).toMatchObject({ type: "object" })
      // the model supports tools, yet the default fused executor replies with one JSON object (no native tools)
      expect(body.tools).toBeUndefined()
      expect(body.options.num_ctx).toBe(4096)
      expect(body.options.temperature).toBe(0)
      expect(body.keep_alive).toBeDefined()
    }
    const actRequest = requests.find((b: any) => b.format?.properties?.arguments)
    expect(actRequest.format.required).toEqual(expect.arrayContaining(["thought", "tool", "arguments"]))
    expect(actRequest.format.properties.tool.enum).toContain("calculator")
  })

  it("completes a task through a fake OpenAI-compatible server with response_format json_schema", async () => {
    const server = await startFakeOpenAI((body: any) => agentReply(body.response_format?.json_schema?.schema))
    closers.push(() => server.close())
    const trajectory = await Effect.runPromise(
      smurfs()(task).pipe(
        Effect.provide(modelLayer("openai:qwen2.5:7b", { baseURL: server.baseURL, apiKey: "test-key" }))
      )
    )
    expect(trajectory.finishType).toBe("give_answer")
    expect(trajectory.finalAnswer).toContain("42")
    expect(trajectory.events.find((e) => isKind(e, "tool_call"))?.data).toMatchObject({ tool: "calculator", ok: true })
    expect(rolesOf(trajectory)).toEqual(DEFAULT_ROLES)
    const requests = server.chatRequests()
    expect(requests.length).toBe(trajectory.totals.modelCalls)
    for (const body of requests) {
      expect(body.response_format.type).toBe("json_schema")
      expect(body.response_format.json_schema.strict).toBe(false)
      expect(body.response_format.json_schema.schema).toMatchObject({ type: "object" })
      expect(body.temperature).toBe(0)
    }
    expect(trajectory.totals.promptTokens).toBeGreaterThan(0)
  })
})
