// Guardrails (MARCO) inside the pipeline: format, tool names, undeclared/missing parameters, static rules, grounding.
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { closestName, editDistance } from "../src/agents/guardrails.ts"
import { callsOf, eventsOf, heightTool, makeTool, percentTool, runSmurfs } from "./pipeline-fixtures.ts"

const solved = { status: "solved", reason: "ok" }
const oneStep = {
  "executor.thought": [{ thought: "Look up the height of K2." }],
  "answerer.step": [{ answer: "K2 is 28251 feet high." }],
  verifier: [solved],
  "answerer.final": [{ answer: "K2 is 28251 feet high." }]
}
const reflections = (t: Awaited<ReturnType<typeof runSmurfs>>, role: string) =>
  callsOf(t, role).flatMap((c) => c.messages.filter((m) => m.role === "reflection").map((m) => m.content))

describe("pipeline guardrails", () => {
  it("recovers from malformed JSON by reflection", async () => {
    const t = await runSmurfs(
      "How high is K2?",
      [heightTool()],
      {
        ...oneStep,
        "executor.thought": ["I think I should look it up", { thought: "Look up K2." }],
        "executor.choose": [{ tool: "mountain_height" }],
        "executor.args": [{ name: "K2" }]
      },
      { planner: false }
    )
    expect(t.finishType).toBe("give_answer")
    expect(eventsOf(t, "guardrail")).toEqual([
      expect.objectContaining({ guardrail: "format", role: "executor.thought", attempt: 1 })
    ])
    expect(reflections(t, "executor.thought")[0]).toContain("invalid JSON")
    expect(t.totals.guardrails).toEqual({ format: 1 })
  })

  it("catches a hallucinated tool name, naming the valid tools, and drops an undeclared parameter", async () => {
    const height = heightTool()
    const t = await runSmurfs(
      "How high is K2?",
      [height, percentTool()],
      {
        ...oneStep,
        "executor.choose": [{ tool: "mountain_heigth" }, { tool: "mountain_height" }],
        "executor.args": [{ name: "K2", units: "feet" }]
      },
      { planner: false }
    )
    const reflection = reflections(t, "executor.choose")[0]!
    expect(reflection).toContain('there is no tool named "mountain_heigth"')
    expect(reflection).toContain("Valid tools: mountain_height, percent_of.")
    expect(reflection).toContain('Did you mean "mountain_height"?')
    // the undeclared parameter is dropped without a retry
    expect(height.calls).toEqual([{ name: "K2" }])
    expect(callsOf(t, "executor.args")).toHaveLength(1)
    expect(eventsOf(t, "guardrail").map((g) => g["guardrail"])).toEqual(["unknown_tool", "extra_params"])
    expect(eventsOf(t, "guardrail")[1]).toMatchObject({ recovered: true, error: expect.stringContaining("units") })
    expect(t.totals.guardrails).toEqual({ unknown_tool: 1, extra_params: 1 })
  })

  it("reflects a missing required parameter", async () => {
    const height = heightTool()
    const t = await runSmurfs(
      "How high is K2?",
      [height],
      {
        ...oneStep,
        "executor.choose": [{ tool: "mountain_height" }],
        "executor.args": [{}, { name: "K2" }]
      },
      { planner: false }
    )
    expect(reflections(t, "executor.args")[0]).toContain(
      'missing required parameter(s) "name" of the tool "mountain_height"'
    )
    expect(height.calls).toEqual([{ name: "K2" }])
    expect(t.totals.guardrails).toEqual({ missing_params: 1 })
  })

  it("reflects the exact static-rule error from the tool's schema", async () => {
    const percent = percentTool()
    const t = await runSmurfs(
      "What is 12% of 29032?",
      [percent],
      {
        ...oneStep,
        "executor.choose": [{ tool: "percent_of" }],
        "executor.args": [
          { percent: 1200, value: 29032 },
          { percent: 12, value: 29032 }
        ]
      },
      { planner: false }
    )
    const reflection = reflections(t, "executor.args")[0]!
    expect(reflection).toContain("arguments break the rules")
    expect(reflection).toContain("percent")
    expect(reflection).toMatch(/<=\s*100/)
    expect(percent.calls).toEqual([{ percent: 12, value: 29032 }])
    expect(t.totals.guardrails).toEqual({ param_rules: 1 })
  })

  it("fails the step softly when reflections run out, excluding the tool", async () => {
    const percent = percentTool()
    const t = await runSmurfs(
      "What is 12% of 29032?",
      [percent],
      {
        ...oneStep,
        "executor.choose": [{ tool: "percent_of" }],
        "executor.args": [{ percent: "twelve" }],
        $cycle: true
      },
      { planner: false }
    )
    expect(percent.calls).toHaveLength(0)
    expect(callsOf(t, "executor.args")).toHaveLength(3) // first attempt + 2 reflections
    expect(eventsOf(t, "error")[0]).toMatchObject({ role: "executor.args", tag: "MalformedOutput" })
    // the only tool failed at the root: nothing is left to try, and memory holds no step to answer from
    expect(eventsOf(t, "subtask_answered")[0]).toMatchObject({ source: "exhausted", answer: "" })
    expect(callsOf(t, "answerer.subtask")).toHaveLength(0)
    expect(t.finishType).toBe("give_answer")
  })

  it("flags an argument that appears nowhere in the query, subtask or memory when grounding is on", async () => {
    const script = {
      ...oneStep,
      "executor.choose": [{ tool: "mountain_height" }],
      "executor.args": [{ name: "Mount Everest" }, { name: "K2" }]
    }
    const grounded = heightTool()
    const on = await runSmurfs("How high is K2?", [grounded], script, {
      planner: false,
      guardrails: { grounding: true }
    })
    expect(reflections(on, "executor.args")[0]).toContain('"Mount Everest" appear nowhere')
    expect(grounded.calls).toEqual([{ name: "K2" }])
    const ungroundedTool = heightTool()
    const off = await runSmurfs("How high is K2?", [ungroundedTool], script, { planner: false })
    expect(ungroundedTool.calls).toEqual([{ name: "Mount Everest" }])
    expect(off.totals.guardrails).toEqual({})
  })

  it("switching a guardrail off lets the problem through to the tool", async () => {
    const strict = makeTool("echo", z.object({ text: z.string() }), (args) => ({
      ok: true,
      content: JSON.stringify(args)
    }))
    const t = await runSmurfs(
      "Echo hi",
      [strict],
      {
        ...oneStep,
        "executor.choose": [{ tool: "echo" }],
        "executor.args": [{ text: "hi", extra: 1 }]
      },
      { planner: false, guardrails: { extraParams: false } }
    )
    expect(strict.calls).toEqual([{ text: "hi", extra: 1 }])
    expect(eventsOf(t, "guardrail")).toEqual([])
  })
})

describe("tool-name distance", () => {
  it("suggests only plausible typos", () => {
    expect(editDistance("kitten", "sitting")).toBe(3)
    expect(closestName("get_wether", ["get_weather", "search"])).toBe("get_weather")
    expect(closestName("translate", ["get_weather", "search"])).toBeUndefined()
  })
})
