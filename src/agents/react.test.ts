import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { type GenerateRequest, LanguageModel } from "../llm/language-model.ts"
import { makeScriptedModel, type Script, scriptedLayer } from "../llm/scripted.ts"
import type { Tool } from "../tools/tool.ts"
import { isKind } from "../trace/events.ts"
import { react } from "./react.ts"
import type { Task } from "./task.ts"

const calls: Array<Record<string, unknown>> = []
const weather: Tool = {
  name: "weather_for_meteo",
  description: "Weather of a city",
  parameters: z.object({ city: z.string() }),
  call: (args) => Effect.sync(() => (calls.push(args), { ok: true, content: `Sunny in ${String(args["city"])}` }))
}
const big: Tool = {
  name: "dump_for_meteo",
  description: "A huge response",
  parameters: z.object({}),
  call: () => Effect.succeed({ ok: true, content: "x".repeat(3000) })
}
const task: Task = { id: "t1", query: "Weather in Paris?", tools: { name: "meteo", tools: [weather, big] } }

const finish = (final_answer: string) => ({
  toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer } }]
})
const giveUp = { toolCalls: [{ name: "Finish", arguments: { return_type: "give_up_and_restart" } }] }
const call = (name: string, args: Record<string, unknown>, text = "") => ({
  toolCalls: [{ name, arguments: args }],
  text
})

/** Run a method with a script, recording the requests the model saw. */
const run = (script: Array<unknown>, options: Parameters<typeof react>[0] = {}) => {
  const requests: Array<GenerateRequest> = []
  const recorded: Script = script.map(
    (reply) => (request: GenerateRequest) => (requests.push(request), reply as object)
  )
  return Effect.runPromise(react(options)(task).pipe(Effect.provide(scriptedLayer(recorded)))).then((trajectory) => ({
    trajectory,
    requests
  }))
}

describe("react", () => {
  it("calls a tool, sees its observation and reaches Finish give_answer (native tool calling)", async () => {
    const { trajectory, requests } = await run([
      call("weather_for_meteo", { city: "Paris" }, "I look it up"),
      finish("Sunny in Paris")
    ])
    expect(trajectory.finishType).toBe("give_answer")
    expect(trajectory.finalAnswer).toBe("Sunny in Paris")
    expect(trajectory.method).toBe("CoT@1")
    expect(requests[0]!.tools!.map((t) => t.name)).toEqual(["weather_for_meteo", "dump_for_meteo", "Finish"])
    expect(requests[0]!.format).toBeUndefined()
    const observation = requests[1]!.messages.at(-1)!
    expect(observation.role).toBe("tool")
    expect(JSON.parse(observation.content)).toEqual({ error: "", response: "Sunny in Paris" })
    expect(trajectory.totals.toolCalls).toBe(1)
    expect(trajectory.totals.modelCalls).toBe(2)
    const final = trajectory.events.find((e) => isKind(e, "final_answer"))!
    expect((final.data["chain"] as Array<{ tool: string }>).map((s) => s.tool)).toEqual(["weather_for_meteo", "Finish"])
  })

  it("gives up with one try, and with n=2 the second try answers", async () => {
    const once = await run([giveUp])
    expect(once.trajectory.finishType).toBe("give_up")
    expect(once.trajectory.finalAnswer).toBe("")
    const twice = await run([giveUp, finish("second try")], { tries: 2 })
    expect(twice.trajectory.finishType).toBe("give_answer")
    expect(twice.trajectory.finalAnswer).toBe("second try")
    expect(twice.trajectory.method).toBe("CoT@2")
    // the second try starts from a fresh conversation
    expect(twice.requests[1]!.messages).toEqual(twice.requests[0]!.messages)
  })

  it("turns unknown tools and bad arguments into error observations and continues", async () => {
    const { trajectory, requests } = await run([
      call("nope", {}),
      call("weather_for_meteo", { city: 3 }),
      finish("done")
    ])
    expect(trajectory.finishType).toBe("give_answer")
    expect(JSON.parse(requests[1]!.messages.at(-1)!.content).error).toContain("No such function name: nope")
    expect(JSON.parse(requests[2]!.messages.at(-1)!.content).error).toContain("invalid arguments")
    expect(trajectory.totals.guardrails).toEqual({ unknown_tool: 1, bad_args: 1 })
    expect(trajectory.totals.toolCalls).toBe(0)
  })

  it("cuts observations to the limit plus ...", async () => {
    const { requests } = await run([call("dump_for_meteo", {}), finish("ok")], { observationLimit: 100 })
    const content = requests[1]!.messages.at(-1)!.content
    expect(content).toHaveLength(103)
    expect(content.endsWith("...")).toBe(true)
  })

  it("counts tree nodes as StableToolBench's single_chain_max_step (12): 4 calls with thoughts, 6 without, 12 prose replies", async () => {
    const never = (text: string) => Array.from({ length: 20 }, () => call("weather_for_meteo", { city: "Rome" }, text))
    const thinking = await run(never("I check Rome again"))
    expect(thinking.requests).toHaveLength(4)
    expect(thinking.trajectory.finishType).toBe("give_up")
    expect(thinking.trajectory.totals.toolCalls).toBe(4)
    const silent = await run(never(""))
    expect(silent.requests).toHaveLength(6)
    const prose = await run(Array.from({ length: 20 }, () => ({ text: "I am thinking about it." })))
    expect(prose.requests).toHaveLength(12)
    const chain = prose.trajectory.events.find((e) => isKind(e, "give_up"))!.data["chain"] as Array<{ tool: string }>
    expect(chain.map((s) => s.tool)).toEqual(Array.from({ length: 12 }, () => ""))
    const custom = await run(never("again"), { singleChainMaxStep: 6 })
    expect(custom.requests).toHaveLength(2)
  })

  it("a Finish on the last allowed node still answers", async () => {
    const { trajectory } = await run([
      ...Array.from({ length: 3 }, () => call("weather_for_meteo", { city: "Rome" }, "t")),
      { ...finish("Rome is sunny"), text: "done" }
    ])
    expect(trajectory.finishType).toBe("give_answer")
  })

  it("uses a JSON object {thought, action, action_input} when tool calling is off", async () => {
    const { trajectory, requests } = await run(
      [
        { thought: "look it up", action: "weather_for_meteo", action_input: { city: "Oslo" } },
        {
          thought: "done",
          action: "Finish",
          action_input: JSON.stringify({ return_type: "give_answer", final_answer: "Sunny in Oslo" })
        }
      ],
      { toolCalling: "json" }
    )
    expect(trajectory.finalAnswer).toBe("Sunny in Oslo")
    expect(requests[0]!.tools).toBeUndefined()
    expect(requests[0]!.format).toMatchObject({ type: "object" })
    expect(requests[0]!.messages[1]!.content).toContain("weather_for_meteo")
    expect(requests[1]!.messages.at(-1)!.content).toContain("Sunny in Oslo")
    expect(calls.at(-1)).toEqual({ city: "Oslo" })
  })

  it("falls back to JSON by itself when the model does not support tools", async () => {
    const requests: Array<GenerateRequest> = []
    const script: Script = [
      (r: GenerateRequest) => (
        requests.push(r),
        { thought: "t", action: "Finish", action_input: { return_type: "give_answer", final_answer: "ok" } }
      )
    ]
    const noTools = Layer.sync(LanguageModel, () => {
      const inner = makeScriptedModel(script)
      return LanguageModel.of({ ...inner, info: { ...inner.info, supportsTools: false } })
    })
    const trajectory = await Effect.runPromise(react()(task).pipe(Effect.provide(noTools)))
    expect(trajectory.finalAnswer).toBe("ok")
    expect(requests[0]!.tools).toBeUndefined()
    expect(requests[0]!.format).toBeDefined()
  })

  it("records a dead server as an error event and a give-up, without failing", async () => {
    const { trajectory } = await run([])
    expect(trajectory.finishType).toBe("give_up")
    expect(trajectory.events.some((e) => isKind(e, "error") && e.data["tag"] === "ModelServerError")).toBe(true)
  })
})
