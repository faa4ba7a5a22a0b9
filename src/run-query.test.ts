import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { InvalidRunSettings, runQuery, runSettings } from "./run-query.ts"
import { taskIdOf } from "./solve.ts"
import { isKind, type RunEvent } from "./trace/events.ts"

const demoScript = fileURLToPath(new URL("../examples/demo-script.json", import.meta.url))
const query = "What is 12% of the height of Mount Everest in feet?"

describe("RunSettings", () => {
  it("fills the defaults", () => {
    const s = runSettings({ query: "q" })
    expect([s.tools, s.toolset, s.profile, s.planner, s.answerer, s.verifier, s.rerank]).toEqual([
      ["demo"],
      "all",
      "improved",
      true,
      true,
      true,
      false
    ])
    // no executor asked for: the profile's (ours fused, the authors' three requests under reference)
    expect(s.executor).toBe("fused")
    expect(runSettings({ query: "q", profile: "reference" }).executor).toBe("three-call")
  })

  it("refuses settings that do not go together, naming the fix", () => {
    expect(() => runSettings({})).toThrow(/give the query to solve/)
    expect(() => runSettings({ query: "q", data: "/d" })).toThrow(
      /--data and --env choose a ToolBench task's tools: add --query-id <id>/
    )
    expect(() => runSettings({ query: "q", toolset: "relevant" })).toThrow(
      /--toolset relevant takes a ToolBench task's relevant APIs/
    )
    expect(() => runSettings({ query: "q", rerank: true })).toThrow(/choose how tools are retrieved/)
    expect(() => runSettings({ query: "q", toolset: "retrieve:x" })).toThrow(InvalidRunSettings)
    expect(runSettings({ queryId: "588", toolset: "relevant" }).queryId).toBe("588")
    expect(() => runSettings({ query: "q", executor: "fused", profile: "reference" })).toThrow(
      /--executor fused is an option of the improved profile/
    )
  })
})

describe("runQuery", () => {
  it("solves a query from settings alone: the trajectory as a value, every event to the hook, no server failure", async () => {
    const events: Array<RunEvent> = []
    const { trajectory, failure } = await Effect.runPromise(
      runQuery(runSettings({ query, model: `scripted:${demoScript}` }), { onEvent: (e) => events.push(e) })
    )
    expect(failure).toBeUndefined()
    expect(trajectory.finishType).toBe("give_answer")
    expect(trajectory.finalAnswer).toContain("3483.86 feet")
    expect(trajectory.taskId).toBe(taskIdOf(query))
    expect(trajectory.totals.toolCalls).toBe(3)
    expect(events.length).toBeGreaterThan(0)
  })

  it("runs the fused executor by default, the three-call one when the settings ask for it", async () => {
    const rolesOf = async (executor?: "three-call") => {
      const { trajectory } = await Effect.runPromise(
        runQuery(runSettings({ query, model: "sim", ...(executor ? { executor } : {}) }))
      )
      return new Set(trajectory.events.filter((e) => isKind(e, "model_call")).map((e) => e.data["role"]))
    }
    const threeCall = ["executor.thought", "executor.choose", "executor.args"]
    const fused = await rolesOf()
    expect(fused.has("executor.fused")).toBe(true)
    expect(threeCall.some((r) => fused.has(r))).toBe(false)
    const three = await rolesOf("three-call")
    expect(threeCall.every((r) => three.has(r))).toBe(true)
    expect(three.has("executor.fused")).toBe(false)
  })
})
