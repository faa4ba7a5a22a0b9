import { describe, expect, it } from "vitest"
import { makeTokenCounter } from "../../bench/sim/tokens.ts"
import { makeEvent } from "../../src/trace/events.ts"
import type { Trajectory } from "../../src/trace/trajectory.ts"
import { makePrefixReuse, makeSubtaskReuse } from "./measures.ts"
import { listSchedule, quantile } from "./stats.ts"

const call = (role: string, system: string, user: string) =>
  makeEvent("t", "model_call", {
    role,
    ok: true,
    promptTokens: 0,
    messages: [
      { role: "system", content: system },
      { role: "user", content: user }
    ]
  })

const trajectory = (events: Trajectory["events"]): Trajectory => ({
  taskId: "t",
  query: "q",
  method: "smurfs",
  model: "sim",
  finalAnswer: "",
  finishType: "give_answer",
  events,
  totals: {
    modelCalls: 0,
    promptTokens: 0,
    completionTokens: 0,
    toolCalls: 0,
    backtracks: 0,
    wallMs: 0,
    guardrails: {}
  }
})

describe("perf measures", () => {
  it("measures prefix reuse per role within a subtask, and says where prompts start to differ", () => {
    const system = "You are the Executor agent. ".repeat(20)
    const reuse = makePrefixReuse(makeTokenCounter())
    reuse.add(
      trajectory([
        makeEvent("t", "subtask_started", { index: 0 }),
        call("executor.thought", system, "Subtask: a\n\nSteps: none"),
        call("verifier", "Verify. ".repeat(10), "Answer: x"),
        call("executor.thought", system, "Subtask: a\n\nSteps: one"),
        makeEvent("t", "subtask_started", { index: 1 }),
        call("executor.thought", system, "Subtask: b\n\nSteps: none")
      ]),
      "smurfs"
    )
    const figures = reuse.figures()
    const thought = figures.find((f) => f.role === "executor.thought")!
    // only the second prompt of subtask 0 has a predecessor in its subtask; it repeats all but its last line
    expect(thought.compared).toBe(1)
    expect(thought.reuseShare).toBeGreaterThan(0.9)
    expect(thought.reuseShare).toBeLessThan(1)
    expect(thought.firstChange).toContain('user message 2, line "Steps:"')
    // against the previous prompt in the task, subtask 1's prompt still shares the system part
    expect(thought.taskReuseShare).toBeGreaterThan(0.8)
    const anyRole = figures.find((f) => f.role.startsWith("(any role"))!
    expect(anyRole.compared).toBe(3)
    expect(anyRole.reuseShare).toBeLessThan(thought.reuseShare)
  })

  it("measures, per role, the tokens shared with the previous request of the same subtask, whatever its role", () => {
    const tokens = makeTokenCounter()
    const reuse = makeSubtaskReuse(tokens)
    const shared = "You are an agent of a team. ".repeat(20)
    reuse.add(
      trajectory([
        call("planner", "Plan it.", "Query: q"),
        makeEvent("t", "subtask_started", { index: 0, subtask: "a" }),
        call("executor.thought", shared, "Subtask: a\n\nThink."),
        call("executor.choose", shared, "Subtask: a\n\nChoose."),
        makeEvent("t", "subtask_answered", { index: 0, subtask: "a", answer: "x", source: "verified" }),
        makeEvent("t", "subtask_started", { index: 1, subtask: "b" }),
        call("executor.thought", shared, "Subtask: b\n\nThink."),
        makeEvent("t", "subtask_answered", { index: 1, subtask: "b", answer: "y", source: "verified" }),
        call("answerer.final", "Answer it.", "Query: q")
      ]),
      "smurfs/improved"
    )
    const of = (role: string) => reuse.figures().find((f) => f.role === role)!
    // the choice repeats the thought's request up to its last line, in tokens as the prefix cache counts them
    const thought = tokens.encodePrompt({
      messages: [
        { role: "system", content: shared },
        { role: "user", content: "Subtask: a\n\nThink." }
      ]
    })
    const choose = tokens.encodePrompt({
      messages: [
        { role: "system", content: shared },
        { role: "user", content: "Subtask: a\n\nChoose." }
      ]
    })
    const common = thought.findIndex((id, i) => id !== choose[i])
    expect(of("executor.choose")).toMatchObject({ prompts: 1, compared: 1, reuseShare: common / choose.length })
    // each subtask's first request has nothing before it in its subtask; the final answer follows the planner
    expect(of("executor.thought")).toMatchObject({ prompts: 2, compared: 0 })
    expect(of("answerer.final").compared).toBe(1)
    expect(of("answerer.final").reuseShare).toBeLessThan(0.5)
  })

  it("list-schedules tasks in order and takes quantiles", () => {
    expect(listSchedule([4, 1, 1, 1, 1], 2)).toBe(4)
    expect(listSchedule([1, 1, 1, 4], 2)).toBe(5)
    expect(listSchedule([2, 2, 2], 1)).toBe(6)
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5)
    expect(quantile([5], 0.95)).toBe(5)
  })
})
