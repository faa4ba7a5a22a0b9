// A valid but megabyte-long reply from any agent is cut before it reaches a later prompt; tool arguments stay whole.
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { callsOf, eventsOf, makeTool, runSmurfs } from "../pipeline-fixtures.ts"

const MB = "lorem ipsum ".repeat(90_000)

describe("huge valid replies", () => {
  it("keep every prompt within the context window, and reach the tool unchanged", async () => {
    const echo = makeTool("echo", z.object({ text: z.string() }), (args) => ({
      ok: true,
      content: String(args["text"]).slice(0, 50)
    }))
    const t = await runSmurfs("Echo something", [echo], {
      planner: [{ subtasks: [MB] }],
      "executor.thought": [{ thought: MB }],
      "executor.choose": [{ tool: "echo" }],
      "executor.args": [{ text: MB }],
      "answerer.step": [{ answer: MB }],
      verifier: [
        { status: "pending", reason: MB, hint: MB },
        { status: "solved", reason: "ok" }
      ],
      "answerer.final": [{ answer: MB }],
      $cycle: true
    })
    expect(t.finishType).toBe("give_answer")
    const calls = eventsOf(t, "model_call")
    expect(calls.length).toBeGreaterThan(6)
    for (const c of calls) expect(c["promptTokens"], String(c["role"])).toBeLessThanOrEqual(32_768)
    // the tool got the argument exactly as written
    expect(echo.calls[0]!["text"]).toBe(MB)
    // the agents' own text was cut, and says so
    const thought = String(eventsOf(t, "thought")[0]!["thought"])
    expect(thought.length).toBeLessThan(MB.length / 10)
    expect(thought).toContain("[truncated]")
    expect(t.finalAnswer.length).toBeLessThan(MB.length / 10)
    expect(callsOf(t, "executor.choose")).not.toHaveLength(0)
  })
})
