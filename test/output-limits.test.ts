// Every agent request carries an output limit suited to its role (issue 30 §3): Smurfs' agents their role's, ReAct
// StableToolBench's 1,024, the reference Smurfs agents the rest of the window (what vLLM gives their client, which
// sends none).
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { smurfsProfileOptions } from "../src/agents/profile.ts"
import { react } from "../src/agents/react.ts"
import { smurfs } from "../src/agents/smurfs.ts"
import type { Method, Task } from "../src/agents/task.ts"
import type { GenerateRequest } from "../src/llm/language-model.ts"
import { OUTPUT_LIMITS, outputLimitOf } from "../src/llm/output-limits.ts"
import { type Script, scriptedLayer } from "../src/llm/scripted.ts"
import type { Tool } from "../src/tools/tool.ts"
import { paperLoop } from "./pipeline-fixtures.ts"

const weather: Tool = {
  name: "weather",
  description: "Weather of a city",
  parameters: z.object({ city: z.string() }),
  call: () => Effect.succeed({ ok: true, content: "Sunny in Paris" })
}
const task: Task = { id: "t1", query: "What is the weather in Paris?", tools: { name: "meteo", tools: [weather] } }

/** Every request a method sends to a scripted model answering `reply(role)`. */
const requestsOf = async (method: Method, replies: Record<string, ReadonlyArray<unknown>>) => {
  const requests: Array<GenerateRequest> = []
  const script: Script = {
    ...Object.fromEntries(
      Object.entries(replies).map(([role, list]) => [
        role,
        list.map((reply) => (request: GenerateRequest) => (requests.push(request), reply as string | object))
      ])
    ),
    $cycle: true
  }
  await Effect.runPromise(method(task).pipe(Effect.provide(scriptedLayer(script))))
  return requests
}

describe("output limits", () => {
  it("are one list: a role gets its longest listed prefix, any other role the default", () => {
    expect(outputLimitOf("executor.args")).toBe(1024)
    expect(outputLimitOf("executor.choose")).toBe(256)
    expect(outputLimitOf("executor.something-new")).toBe(1024)
    expect(outputLimitOf("judge.select_better_answer")).toBe(1000)
    expect(outputLimitOf("dfsdt.step")).toBe(1024)
    expect(outputLimitOf("plannerish")).toBe(1024)
    expect(new Set(OUTPUT_LIMITS.map(([role]) => role)).size).toBe(OUTPUT_LIMITS.length)
  })

  it("Smurfs' agents each send their role's limit", async () => {
    const replies = {
      planner: [{ subtasks: [{ task: "Weather in Paris" }] }],
      "executor.fused": [{ thought: "Look it up.", tool: "weather", arguments: { city: "Paris" } }],
      "executor.thought": [{ thought: "Look it up." }],
      "executor.choose": [{ tool: "weather" }],
      "executor.args": [{ city: "Paris" }],
      answerer: [{ answer: "Sunny in Paris." }],
      verifier: [{ status: "solved", reason: "the weather is given" }]
    }
    // the default loop (fused) and the paper's three requests per step with the Answer agent on every step
    const fused = await requestsOf(smurfs({ reportUnavailable: false }), replies)
    const paper = await requestsOf(smurfs(paperLoop({ reportUnavailable: false })), replies)
    expect(fused.map((r) => r.role)).toEqual(["planner", "executor.fused", "verifier", "answerer.final"])
    expect(paper.map((r) => r.role)).toEqual([
      "planner",
      "executor.thought",
      "executor.choose",
      "executor.args",
      "answerer.step",
      "verifier",
      "answerer.final"
    ])
    for (const r of [...fused, ...paper]) expect(r.options?.maxTokens, r.role).toBe(outputLimitOf(r.role))
    expect(new Set(paper.map((r) => r.options?.maxTokens)).size).toBeGreaterThan(1)
  })

  it("ReAct sends StableToolBench's max_tokens 1024", async () => {
    const requests = await requestsOf(react({ toolCalling: "json" }), {
      react: [
        { thought: "done", action: "Finish", action_input: { return_type: "give_answer", final_answer: "Sunny" } }
      ]
    })
    expect(requests.length).toBeGreaterThan(0)
    for (const r of requests) expect(r.options?.maxTokens).toBe(1024)
  })

  it("the reference Smurfs agents get the rest of the window, at least the reply reserve", async () => {
    const checkout = fileURLToPath(new URL("./fixtures/smurfs-src", import.meta.url))
    const requests = await requestsOf(
      smurfs({ reportUnavailable: false, ...smurfsProfileOptions("reference", checkout) }),
      {
        planner: ['{"Tasks": ["Weather in Paris"]}'],
        "executor.thought": ["Look it up."],
        "executor.choose": ['{"ID": 0, "Reason": "weather"}'],
        "executor.args": ['{"city": "Paris"}'],
        "answerer.step": ["Sunny in Paris."],
        verifier: ['{"Speak": "Sunny in Paris.", "Status": "1"}'],
        answerer: ["Sunny in Paris."]
      }
    )
    expect(requests.length).toBeGreaterThan(3)
    // the scripted model's window is 32,768 tokens; a prompt of a few hundred leaves nearly all of it
    for (const r of requests) {
      const limit = r.options?.maxTokens ?? 0
      expect(limit, r.role).toBeGreaterThan(30_000)
      expect(limit + Math.floor(r.messages[0]!.content.length / 4), r.role).toBeLessThanOrEqual(32_768)
    }
  })
})
