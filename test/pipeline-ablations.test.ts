// Ablations of the paper's Table 4: each agent switched off is never called and its job is done the simple way.
import { describe, expect, it } from "vitest"
import { callsOf, eventsOf, heightTool, runSmurfs } from "./pipeline-fixtures.ts"

const script = {
  planner: [{ subtasks: ["How high is K2 in feet?"] }],
  "executor.thought": [{ thought: "Look it up." }],
  "executor.choose": [{ tool: "mountain_height" }],
  "executor.args": [{ name: "K2" }, { name: "Mount Everest" }],
  "answerer.step": [{ answer: "K2: 28251 ft" }],
  verifier: [
    { status: "pending", reason: "check", hint: "try again" },
    { status: "solved", reason: "ok" }
  ],
  "answerer.subtask": [{ answer: "from memory" }],
  "answerer.final": [{ answer: "K2 is 28251 feet high." }],
  $cycle: true
}
const roles = (t: Awaited<ReturnType<typeof runSmurfs>>) => new Set(eventsOf(t, "model_call").map((c) => c["role"]))

describe("ablation switches", () => {
  it("all agents on uses every role", async () => {
    const t = await runSmurfs("How high is K2?", [heightTool()], script)
    expect([...roles(t)].sort()).toEqual([
      "answerer.final",
      "answerer.step",
      "executor.args",
      "executor.choose",
      "executor.thought",
      "planner",
      "verifier"
    ])
  })

  it("planner off: the query is the only subtask", async () => {
    const t = await runSmurfs("How high is K2?", [heightTool()], script, { planner: false })
    expect(roles(t).has("planner")).toBe(false)
    expect(eventsOf(t, "plan")[0]!["subtasks"]).toEqual(["How high is K2?"])
    expect(t.finishType).toBe("give_answer")
  })

  it("answerer off: the raw observation is the step's answer; the final answer is still written", async () => {
    const t = await runSmurfs("How high is K2?", [heightTool()], script, { answerer: false })
    expect([...roles(t)].filter((r) => String(r).startsWith("answerer"))).toEqual(["answerer.final"])
    expect(eventsOf(t, "answer")[0]!["answer"]).toBe("K2 is 28251 feet high.")
    expect(callsOf(t, "verifier")[0]!.messages.at(-1)!.content).toContain("Answer: K2 is 28251 feet high.")
    expect(t.finalAnswer).toBe("K2 is 28251 feet high.")
  })

  it("verifier off: no verdicts, the search runs to the step limit", async () => {
    const height = heightTool()
    const t = await runSmurfs("How high is K2?", [height], script, { verifier: false })
    expect(roles(t).has("verifier")).toBe(false)
    expect(height.calls).toHaveLength(3)
    expect(eventsOf(t, "subtask_answered")[0]).toMatchObject({ source: "step_limit", answer: "from memory" })
  })
})
