// The skip rule of issue 33 (`rules.answerShortResponses`): a tool response no longer than the limit is the step's
// answer as it is, with no Answer agent call; the verifier then continues the arguments' exchange with the response.

import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { smurfs } from "../src/agents/smurfs.ts"
import { callsOf, eventsOf, heightTool, makeTool, modelLayer, runSmurfs } from "./pipeline-fixtures.ts"

const query = "How high is Mount Everest in feet?"
const script = {
  planner: [{ subtasks: ["Find the height of Mount Everest in feet"] }],
  "executor.thought": [{ thought: "Look up the height." }],
  "executor.choose": [{ tool: "mountain_height" }],
  "executor.args": [{ name: "Mount Everest" }],
  "answerer.step": [{ answer: "Mount Everest is 29032 feet high." }],
  verifier: [{ status: "solved", reason: "the height is given" }],
  "answerer.final": [{ answer: "29032 feet" }]
}

/** The same tool, answering with a long text (more than 300 characters) around the height. */
const verboseHeightTool = () =>
  makeTool("mountain_height", z.object({ name: z.string() }), () => ({
    ok: true,
    content: `Mount Everest is 29032 feet high. ${"Survey notes follow. ".repeat(20)}`
  }))

const roles = (t: Awaited<ReturnType<typeof runSmurfs>>) =>
  eventsOf(t, "model_call")
    .filter((d) => d["ok"] === true)
    .map((d) => String(d["role"]))

describe("smurfs: short tool responses as the step's answer", () => {
  it("asks the Answer agent on every step in the paper's loop (rules.answerShortResponses undefined)", async () => {
    const t = await runSmurfs(query, [heightTool()], script, { rules: { answerShortResponses: undefined } })
    expect(roles(t)).toContain("answerer.step")
  })

  it("skips it by default for a response of at most 1,024 characters, and asks it for a longer one", async () => {
    // the library's own defaults (no paperLoop): the fused executor, short responses as answers
    const run = (tool: ReturnType<typeof heightTool>, answers: ReadonlyArray<unknown>) =>
      Effect.runPromise(
        smurfs()({ id: "t", query, tools: { name: "test", tools: [tool] } }).pipe(
          Effect.provide(
            modelLayer({
              planner: script.planner,
              "executor.fused": [
                { thought: "Look up the height.", tool: "mountain_height", arguments: { name: "Mount Everest" } }
              ],
              "answerer.verify": answers as Array<Record<string, unknown>>,
              verifier: [{ status: "solved" }],
              "answerer.final": script["answerer.final"]
            })
          )
        )
      )
    const short = await run(heightTool(), [])
    expect(short.finishType).toBe("give_answer")
    expect(roles(short)).toEqual(["planner", "executor.fused", "verifier", "answerer.final"])
    const long = makeTool("mountain_height", z.object({ name: z.string() }), () => ({
      ok: true,
      content: `Mount Everest is 29032 feet high. ${"Survey notes follow. ".repeat(60)}`
    }))
    const t = await run(long, [{ answer: "Mount Everest is 29032 feet high.", status: "solved" }])
    expect(roles(t)).toEqual(["planner", "executor.fused", "answerer.verify", "answerer.final"])
  })

  it("skips the Answer agent for a response within the limit; the verifier reads the response after the call", async () => {
    const t = await runSmurfs(query, [heightTool()], script, { rules: { answerShortResponses: 300 } })
    expect(t.finishType).toBe("give_answer")
    expect(roles(t)).toEqual([
      "planner",
      "executor.thought",
      "executor.choose",
      "executor.args",
      "verifier",
      "answerer.final"
    ])
    // the step's answer is the response itself
    expect(eventsOf(t, "answer").map((a) => a["answer"])).toEqual(["Mount Everest is 29032 feet high."])
    // the verifier continues the arguments' exchange: their request and reply, the call's response as a tool message
    const [args] = callsOf(t, "executor.args")
    const [verifier] = callsOf(t, "verifier")
    expect(verifier!.messages.slice(0, args!.messages.length)).toEqual(args!.messages)
    const tool = verifier!.messages.find((m) => m.role === "tool")
    expect(tool?.content).toContain("Mount Everest is 29032 feet high.")
  })

  it("still asks the Answer agent for a response longer than the limit", async () => {
    const t = await runSmurfs(query, [verboseHeightTool()], script, { rules: { answerShortResponses: 300 } })
    expect(roles(t)).toContain("answerer.step")
    expect(eventsOf(t, "answer").map((a) => a["answer"])).toEqual(["Mount Everest is 29032 feet high."])
  })

  it("with the fused executor too: the verifier alone continues the call's exchange with a short response", async () => {
    const t = await runSmurfs(
      query,
      [heightTool()],
      {
        planner: [{ subtasks: ["Find the height of Mount Everest in feet"] }],
        "executor.fused": [
          { thought: "Look up the height.", tool: "mountain_height", arguments: { name: "Mount Everest" } }
        ],
        verifier: [{ status: "solved" }],
        "answerer.final": [{ answer: "29032 feet" }]
      },
      { executor: "fused", toolCalling: "json", rules: { answerShortResponses: 300 } }
    )
    expect(t.finishType).toBe("give_answer")
    expect(roles(t)).toEqual(["planner", "executor.fused", "verifier", "answerer.final"])
    expect(eventsOf(t, "answer").map((a) => a["answer"])).toEqual(["Mount Everest is 29032 feet high."])
    const [act] = callsOf(t, "executor.fused")
    const [verifier] = callsOf(t, "verifier")
    expect(verifier!.messages.slice(0, act!.messages.length)).toEqual(act!.messages)
    expect(verifier!.messages.find((m) => m.role === "tool")?.content).toContain("Mount Everest is 29032 feet high.")
  })
})
