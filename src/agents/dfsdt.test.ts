import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import type { GenerateRequest } from "../llm/language-model.ts"
import { type Script, scriptedLayer } from "../llm/scripted.ts"
import type { Tool } from "../tools/tool.ts"
import { isKind } from "../trace/events.ts"
import { type DfsdtOptions, dfsdt } from "./dfsdt.ts"
import type { Task } from "./task.ts"

const search: Tool = {
  name: "search_for_web",
  description: "Search the web",
  parameters: z.object({ q: z.string() }),
  call: (args) => Effect.succeed({ ok: true, content: `results for ${String(args["q"])}` })
}
const task: Task = { id: "t1", query: "Find x", tools: { name: "web", tools: [search] } }

const finish = (final_answer: string) => ({
  toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer } }]
})
const giveUp = { toolCalls: [{ name: "Finish", arguments: { return_type: "give_up_and_restart" } }] }
const searchFor = (q: string) => ({ toolCalls: [{ name: "search_for_web", arguments: { q } }] })
const DIVERSITY = "every earlier attempt failed"

const run = (script: Array<unknown>, options: DfsdtOptions = {}) => {
  const requests: Array<GenerateRequest> = []
  const recorded: Script = script.map(
    (reply) => (request: GenerateRequest) => (requests.push(request), reply as object)
  )
  return Effect.runPromise(dfsdt(options)(task).pipe(Effect.provide(scriptedLayer(recorded)))).then((trajectory) => ({
    trajectory,
    requests
  }))
}
const hasDiversity = (request: GenerateRequest) => request.messages.some((m) => m.content.includes(DIVERSITY))

describe("dfsdt", () => {
  it("after a give-up, expands a sibling with the diversity prompt naming the earlier candidate", async () => {
    const { trajectory, requests } = await run([searchFor("x"), giveUp, finish("x is 42")], { giveUpBackLength: 1 })
    expect(trajectory.finishType).toBe("give_answer")
    expect(trajectory.finalAnswer).toBe("x is 42")
    expect(trajectory.method).toBe("DFS_woFilter_w2")
    expect(requests.map(hasDiversity)).toEqual([false, false, true])
    const diversity = requests[2]!.messages.at(-1)!.content
    expect(diversity).toContain('"name": "Finish"')
    expect(diversity).toContain("give_up_and_restart")
    // the sibling shares its parent's state: the search observation is in its conversation
    expect(requests[2]!.messages.some((m) => m.role === "tool" && m.content.includes("results for x"))).toBe(true)
    const final = trajectory.events.find((e) => isKind(e, "final_answer"))!
    expect((final.data["chain"] as Array<{ tool: string }>).map((s) => s.tool)).toEqual(["search_for_web", "Finish"])
    expect(trajectory.totals.backtracks).toBe(1)
  })

  it("by default (StableToolBench's prune_back_length 2), a give-up abandons its parent state and retries from the grandparent", async () => {
    const { trajectory, requests } = await run([searchFor("x"), giveUp, searchFor("y"), finish("y it is")])
    expect(trajectory.finalAnswer).toBe("y it is")
    expect(requests.map(hasDiversity)).toEqual([false, false, true, false])
    // the third request is made from the root: start messages + the diversity prompt listing the first search
    expect(requests[2]!.messages).toHaveLength(requests[0]!.messages.length + 1)
    expect(requests[2]!.messages.at(-1)!.content).toContain("search_for_web")
    // the diversity prompt is not kept in the chosen branch's conversation
    expect(hasDiversity(requests[3]!)).toBe(false)
    const final = trajectory.events.find((e) => isKind(e, "final_answer"))!
    expect((final.data["chain"] as Array<{ arguments: string }>)[0]!.arguments).toContain('"y"')
  })

  it("stops at the budget of model calls with a give-up", async () => {
    const { trajectory, requests } = await run(
      Array.from({ length: 50 }, (_, i) => searchFor(`q${i}`)),
      { budget: 7, singleChainMaxStep: 6 }
    )
    expect(requests).toHaveLength(7)
    expect(trajectory.finishType).toBe("give_up")
    expect(trajectory.error).toContain("budget")
    expect(trajectory.totals.modelCalls).toBe(7)
  })

  it("stays bounded when the model only writes prose: each reply is a thought node", async () => {
    const { trajectory, requests } = await run(Array.from({ length: 400 }, () => ({ text: "Let me think." })))
    expect(requests).toHaveLength(200)
    // depth 12 at most: the start, then a reply and a reminder per node
    const start = requests[0]!.messages.length
    expect(Math.max(...requests.map((r) => r.messages.length))).toBeLessThanOrEqual(start + 2 * 11 + 1)
    expect(trajectory.finishType).toBe("give_up")
  })

  it("cuts a branch at 12 tree nodes: 4 calls with thoughts, then the sibling of the last one", async () => {
    const thinking = (q: string) => ({ ...searchFor(q), text: `I search ${q}` })
    const { requests } = await run([...["a", "b", "c", "d", "e"].map(thinking), finish("found")])
    // the fifth reply is cut too; the sixth comes from the state after two calls, again with the diversity prompt
    expect(requests.map(hasDiversity)).toEqual([false, false, false, false, true, true])
    expect(requests[5]!.messages.filter((m) => m.role === "tool")).toHaveLength(2)
    // the fifth request expands the state after three calls again, naming the fourth call and that state's observation
    const fifth = requests[4]!
    expect(fifth.messages.filter((m) => m.role === "tool")).toHaveLength(3)
    expect(fifth.messages.at(-1)!.content).toContain('"arguments": "{\\n  \\"q\\": \\"d\\"\\n}"')
    expect(fifth.messages.at(-1)!.content).toContain("results for c")
  })

  it("gives up when every branch gives up", async () => {
    // back length 2: the root's own give-up ends the search, as in StableToolBench; with 1 the sibling is tried too
    const { trajectory, requests } = await run(Array.from({ length: 10 }, () => giveUp))
    expect(requests).toHaveLength(1)
    expect(
      (
        await run(
          Array.from({ length: 10 }, () => giveUp),
          { giveUpBackLength: 1 }
        )
      ).requests
    ).toHaveLength(2)
    expect(trajectory.finishType).toBe("give_up")
  })

  it("works with the JSON fallback", async () => {
    const { trajectory, requests } = await run(
      [
        { thought: "t", action: "search_for_web", action_input: { q: "z" } },
        { thought: "t", action: "Finish", action_input: { return_type: "give_answer", final_answer: "z found" } }
      ],
      { toolCalling: "json" }
    )
    expect(trajectory.finalAnswer).toBe("z found")
    expect(requests[0]!.format).toBeDefined()
    expect(requests[1]!.messages.at(-1)!.content).toContain("results for z")
  })
})
