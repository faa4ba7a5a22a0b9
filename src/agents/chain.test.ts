import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { type GenerateRequest, LanguageModel } from "../llm/language-model.ts"
import { makeScriptedModel, type Script, scriptedLayer } from "../llm/scripted.ts"
import type { ToolEnvironment } from "../tools/environments/environment.ts"
import type { Tool } from "../tools/tool.ts"
import { toolbenchLibrary } from "../tools/toolbench/adapter.ts"
import { isKind } from "../trace/events.ts"
import { toolLines } from "./chain.ts"
import { dfsdt } from "./dfsdt.ts"
import { chainProfileOptions } from "./profile.ts"
import { react } from "./react.ts"
import type { Task } from "./task.ts"

const calls: Array<Record<string, unknown>> = []
const weather: Tool = {
  name: "weather_for_meteo",
  description: "Weather of a city",
  parameters: z.object({ city: z.string() }),
  call: (args) => Effect.sync(() => (calls.push(args), { ok: true, content: `Sunny in ${String(args["city"])}` }))
}
const task: Task = { id: "t1", query: "Weather in Paris and Rome?", tools: { name: "meteo", tools: [weather] } }
const finish = (final_answer: string) => ({
  toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer } }]
})

const run = (
  method: typeof react | typeof dfsdt,
  script: Array<unknown>,
  options: Record<string, unknown>,
  on: Task = task
) => {
  const requests: Array<GenerateRequest> = []
  const recorded: Script = script.map(
    (reply) => (request: GenerateRequest) => (requests.push(request), reply as object)
  )
  return Effect.runPromise(method(options)(on).pipe(Effect.provide(scriptedLayer(recorded)))).then((trajectory) => ({
    trajectory,
    requests
  }))
}

describe("ReAct and DFSDT under the reference profile (StableToolBench as it runs them)", () => {
  const reference = chainProfileOptions("reference")

  it("samples at 1.0, sends no reminder after a reply without a call, executes both calls of a reply and keeps both in the conversation", async () => {
    for (const method of [react, dfsdt]) {
      calls.length = 0
      const { trajectory, requests } = await run(
        method,
        [
          "Let me think.",
          {
            toolCalls: [
              { name: "weather_for_meteo", arguments: { city: "Paris" } },
              { name: "weather_for_meteo", arguments: { city: "Rome" } }
            ]
          },
          finish("Sunny in both")
        ],
        reference
      )
      expect(trajectory.finishType).toBe("give_answer")
      expect(requests.map((r) => r.options?.temperature)).toEqual([1, 1, 1])
      // after the prose reply the next request ends with that reply itself: no nudge
      expect(requests[1]!.messages.at(-1)).toMatchObject({ role: "assistant", content: "Let me think." })
      expect(requests[1]!.messages.some((m) => m.role === "user" && m !== requests[1]!.messages[1])).toBe(false)
      expect(calls).toEqual([{ city: "Paris" }, { city: "Rome" }])
      const last = requests[2]!.messages
      const tools = last.filter((m) => m.role === "tool")
      expect(tools.map((m) => JSON.parse(m.content).response)).toEqual(["Sunny in Paris", "Sunny in Rome"])
      expect(last.find((m) => m.role === "assistant" && m.toolCalls)!.toolCalls!.length).toBe(2)
      expect(trajectory.events.filter((e) => isKind(e, "tool_call")).length).toBe(2)
    }
  })

  it("improved (the default): a reminder after prose, only the first call of a reply, the model's own temperature", async () => {
    calls.length = 0
    const { requests } = await run(
      react,
      [
        "Let me think.",
        {
          toolCalls: [
            { name: "weather_for_meteo", arguments: { city: "Paris" } },
            { name: "weather_for_meteo", arguments: { city: "Rome" } }
          ]
        },
        finish("ok")
      ],
      {}
    )
    expect(requests.map((r) => r.options?.temperature)).toEqual([undefined, undefined, undefined])
    expect(requests[1]!.messages.at(-1)!.role).toBe("user")
    expect(calls).toEqual([{ city: "Paris" }])
  })

  it("sends the arguments as the model wrote them: the environment answers, no validation in between", async () => {
    calls.length = 0
    const { requests } = await run(
      react,
      [{ toolCalls: [{ name: "weather_for_meteo", arguments: { town: 7 } }] }, finish("ok")],
      reference
    )
    expect(calls).toEqual([{ town: 7 }])
    expect(JSON.parse(requests[1]!.messages.at(-1)!.content).error).toBe("")
    // ours reports the violation as an error observation and calls nothing
    calls.length = 0
    const ours = await run(
      react,
      [{ toolCalls: [{ name: "weather_for_meteo", arguments: { town: 7 } }] }, finish("ok")],
      {}
    )
    expect(calls).toEqual([])
    expect(JSON.parse(ours.requests[1]!.messages.at(-1)!.content).error).toContain("invalid arguments")
  })
})

describe("tool lines of the task description", () => {
  const env: ToolEnvironment = { name: "none", serve: () => Effect.succeed(undefined) } as unknown as ToolEnvironment
  const doc = (tool: string, api: string, extra: Record<string, unknown> = {}) => ({
    category_name: "Data",
    tool_name: tool,
    api_name: api,
    api_description: `${api} of ${tool}`,
    required_parameters: [],
    optional_parameters: [],
    ...extra
  })

  it("carry the tool's own description, else its first described API's: never None for a described tool", () => {
    const library = toolbenchLibrary(
      "t",
      [
        doc("Meteo", "today", { tool_description: "Weather everywhere." }),
        doc("Meteo", "tomorrow"),
        doc("Geo Coder", "lookup")
      ],
      env
    )
    expect(toolLines(library)).toBe("1.meteo: Weather everywhere.\n2.geo_coder: lookup of Geo Coder\n")
  })

  const long = "A very long description of what this endpoint returns. ".repeat(40)
  const docs = Array.from({ length: 12 }, (_, k) =>
    doc("Big Tool", `endpoint ${k}`, { api_description: long, tool_description: long })
  )
  const query = `Which endpoint? ${"Some detail about the request. ".repeat(30)}`
  const big: Task = { id: "t2", query, tools: toolbenchLibrary("big", docs, env) }
  /** A scripted model with a small context window. */
  const small = (contextTokens: number, requests: Array<GenerateRequest>) =>
    Layer.sync(LanguageModel, () => {
      const model = makeScriptedModel([(request: GenerateRequest) => (requests.push(request), finish("done"))])
      return LanguageModel.of({ ...model, info: { ...model.info, contextTokens } })
    })

  it("a task whose tools would leave the query too little room gets shorter tool descriptions, never a shorter query", async () => {
    const requests: Array<GenerateRequest> = []
    const trajectory = await Effect.runPromise(react({})(big).pipe(Effect.provide(small(4096, requests))))
    expect(trajectory.finishType).toBe("give_answer")
    const warning = trajectory.events.find((e) => isKind(e, "guardrail") && e.data["guardrail"] === "context")
    expect(String(warning?.data["error"])).toContain("tool descriptions")
    expect(requests[0]!.messages[1]!.content).toContain(query)
    const sent = requests[0]!.tools!.find((t) => t.name !== "Finish")!
    expect(sent.description.length).toBeLessThan(256)
  })

  it("a task whose query and Finish cannot fit even without descriptions is an error naming --num-ctx, with no model call", async () => {
    const requests: Array<GenerateRequest> = []
    const trajectory = await Effect.runPromise(react({})(big).pipe(Effect.provide(small(1024, requests))))
    expect(trajectory.finishType).toBe("give_up")
    expect(trajectory.error).toContain("--num-ctx")
    expect(requests).toEqual([])
  })
})
