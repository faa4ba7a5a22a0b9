import { countTokens } from "gpt-tokenizer"
import { describe, expect, it } from "vitest"
import { ContextBudget } from "./context-budget.ts"
import { GlobalMemory } from "./global-memory.ts"
import { LocalMemory } from "./local-memory.ts"
import type { Step } from "./step.ts"

const step = (n: number, answerChars = 40): Step => ({
  thought: `thought ${n}`,
  tool: `tool_${n}`,
  args: { n },
  observation: `observation ${n}`,
  answer: `answer ${n} ${"x".repeat(answerChars)}`
})

describe("LocalMemory and GlobalMemory", () => {
  it("backtracking pops the local path while global memory keeps every step, marked", () => {
    const local = new LocalMemory()
    const global = new GlobalMemory()
    for (const n of [0, 1]) {
      global.record(0, local.depth, step(n))
      local.push(step(n))
    }
    expect(local.depth).toBe(2)
    const popped = local.pop()
    global.markBacktracked(0, local.depth)
    expect(popped?.tool).toBe("tool_1")
    expect(local.steps.map((s) => s.tool)).toEqual(["tool_0"])
    expect(global.steps.map((s) => [s.tool, s.backtracked])).toEqual([
      ["tool_0", false],
      ["tool_1", true]
    ])
    expect(local.pop()?.tool).toBe("tool_0")
    expect(local.pop()).toBeUndefined()
  })

  it("keeps failed calls and answers per subtask", () => {
    const global = new GlobalMemory()
    global.record(0, 0, step(0), true)
    global.record(1, 0, step(1))
    global.markBacktracked(0, 0) // a failed call is never on the path, so nothing to mark
    global.answer("first", "A")
    expect(global.stepsOf(0)).toHaveLength(1)
    expect(global.stepsOf(0)[0]).toMatchObject({ failed: true, backtracked: false })
    expect(global.answers).toEqual([{ subtask: "first", answer: "A", index: 0 }])
  })
})

describe("ContextBudget", () => {
  it("renders every step in full when they fit", () => {
    const budget = new ContextBudget({ contextTokens: 8192 })
    const text = budget.steps([step(0), step(1)], 1000)
    expect(text).toContain("Step 1:")
    expect(text).toContain("Thought: thought 1")
    expect(text).not.toContain("Summary")
  })

  it("folds the oldest steps into a summary so the memory stays within its room", () => {
    const budget = new ContextBudget({ contextTokens: 8192 })
    const steps = Array.from({ length: 10 }, (_, n) => step(n, 400))
    const full = budget.steps(steps, 100_000)
    const room = Math.floor(budget.count(full) / 2)
    const folded = budget.steps(steps, room)
    expect(budget.count(folded)).toBeLessThanOrEqual(room)
    expect(folded).toContain("Summary of steps 1-")
    // the latest step stays in full
    expect(folded).toContain("Step 10:")
    expect(folded).toContain("Thought: thought 9")
  })

  it("cuts even the summary when the room is tiny, keeping its end", () => {
    const budget = new ContextBudget({ contextTokens: 8192 })
    const steps = Array.from({ length: 30 }, (_, n) => step(n, 400))
    const text = budget.steps(steps, 50)
    expect(budget.count(text)).toBeLessThanOrEqual(50)
    expect(text).toContain("tool_29")
  })

  it("truncates observations to the limit and leaves short ones alone", () => {
    const budget = new ContextBudget({ contextTokens: 4096, maxObservationTokens: 100 })
    expect(budget.observation("short")).toBe("short")
    const cut = budget.observation("y".repeat(5000))
    expect(budget.count(cut)).toBeLessThanOrEqual(100)
    expect(cut).toContain("[truncated]")
  })

  it("accepts a real tokenizer and respects the reserve", () => {
    const budget = new ContextBudget({ contextTokens: 2000, reserveTokens: 500, countTokens })
    expect(budget.promptTokens).toBe(1500)
    const text = "the quick brown fox jumps over the lazy dog ".repeat(200)
    const cut = budget.truncate(text, 120)
    expect(countTokens(cut)).toBeLessThanOrEqual(120)
    expect(budget.room("a".repeat(400))).toBe(1500 - countTokens("a".repeat(400)))
  })

  it("fits a conversation: the task stays whole, the largest later texts are cut first, short ones are left alone", () => {
    const budget = new ContextBudget({ contextTokens: 2048, reserveTokens: 1024 })
    const task = [
      { role: "system" as const, content: "s".repeat(1000) },
      { role: "user" as const, content: "q".repeat(1000) }
    ]
    const later = [
      {
        role: "assistant" as const,
        content: "a".repeat(4000),
        toolCalls: [{ id: "call_1", name: "calculator", arguments: { expression: "6 * 7" } }]
      },
      { role: "tool" as const, content: "42", toolCallId: "call_1", toolName: "calculator" },
      { role: "assistant" as const, content: "b".repeat(1200) }
    ]
    const fitted = budget.conversation([...task, ...later], 2, 100)
    const total = 100 + fitted.reduce((n, m) => n + budget.messageTokens(m), 0)
    expect(total).toBeLessThanOrEqual(budget.promptTokens)
    expect(fitted.slice(0, 2)).toEqual(task)
    expect(fitted[2]!.content).toContain("[truncated]")
    expect(fitted[2]!.toolCalls).toEqual(later[0]!.toolCalls)
    expect(fitted[3]!.content).toBe("42")
    // Cutting the largest text was enough: the shorter thought is kept whole.
    expect(fitted[4]!.content).toBe(later[2]!.content)
    // A conversation that already fits is sent as it is.
    expect(budget.conversation(task, 2, 100)).toEqual(task)
  })
})
