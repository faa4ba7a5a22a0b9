// Plans with dependencies run as a graph (independent subtasks at the same time, each dependent one
// seeing exactly its dependencies' answers); invalid plans are reflected then fall back; failures stay partial.
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { planProblem } from "../src/agents/plan-graph.ts"
import { liveView } from "../src/cli/live-view.ts"
import { type GenerateRequest, LanguageModel } from "../src/llm/language-model.ts"
import { makeScriptedModel, type Script } from "../src/llm/scripted.ts"
import { callsOf, eventsOf, fromObservation, makeTool, runSmurfs, userPrompt } from "./pipeline-fixtures.ts"

const solved = { status: "solved", reason: "the answer gives what was asked" }
const values: Record<string, number> = { alpha: 3, beta: 4 }

const lookupTool = () =>
  makeTool("lookup_value", z.object({ name: z.string() }), (args) => {
    const v = values[String(args["name"])]
    return v === undefined
      ? { ok: false, content: "", error: `no value named ${String(args["name"])}` }
      : { ok: true, content: `${String(args["name"])} is ${v}` }
  })
const addTool = () =>
  makeTool("add", z.object({ a: z.number(), b: z.number() }), (args) => ({
    ok: true,
    content: String(Number(args["a"]) + Number(args["b"]))
  }))

const text = (r: { readonly messages: ReadonlyArray<{ readonly content: string }> }) =>
  r.messages.map((m) => m.content).join("\n")
/** The subtask an executor, answerer or verifier call is about (its prompt's last entry in the list of subtasks). */
const subtaskOf = (r: { readonly messages: ReadonlyArray<{ readonly content: string }> }) =>
  /\d+\. (.*)\n\nSteps taken for subtask/.exec(text(r))?.[1] ?? "?"

const A = "Find the value of alpha"
const B = "Find the value of beta"
const C = "Add the value of alpha and the value of beta"

/** The executor's replies depend on the subtask in its prompt, so that concurrent subtasks can share one script. */
const executor: Script = {
  "executor.thought": [(r) => ({ thought: `Work on: ${subtaskOf(r)}` })],
  "executor.choose": [(r) => ({ tool: subtaskOf(r) === C ? "add" : "lookup_value" })],
  "executor.args": [
    (r) => {
      const s = subtaskOf(r)
      if (s !== C) return { name: s.split(" ").at(-1)! }
      // the two numbers come from the dependencies' answers in the prompt
      const a = /alpha is (\d+)/.exec(text(r))?.[1]
      const b = /beta is (\d+)/.exec(text(r))?.[1]
      return { a: Number(a ?? -100), b: Number(b ?? -100) }
    }
  ],
  "answerer.step": [fromObservation((obs) => ({ answer: obs }))],
  verifier: [solved],
  "answerer.final": [
    (r) => ({ answer: `alpha + beta = ${/Add the value[^\n]*\n\s*Answer: (.*)/.exec(text(r))?.[1] ?? "?"}` })
  ],
  $cycle: true
}

interface Span {
  readonly subtask: string
  readonly role: string
  readonly start: number
  readonly end: number
}

/** The scripted model with a fixed latency per call, recording when each call ran. */
const slowModel = (script: Script, latencyMs: number, spans: Array<Span>) =>
  Layer.sync(LanguageModel, () => {
    const model = makeScriptedModel(script)
    return LanguageModel.of({
      info: model.info,
      generate: (request) =>
        Effect.gen(function* () {
          const start = performance.now()
          yield* Effect.sleep(latencyMs)
          const response = yield* model.generate(request)
          spans.push({ subtask: subtaskOf(request), role: request.role, start, end: performance.now() })
          return response
        })
    })
  })

const diamond = {
  subtasks: [
    { task: A, dependsOn: [] },
    { task: B, dependsOn: [] },
    { task: C, dependsOn: [0, 1] }
  ]
}

describe("plans with dependencies", () => {
  it("runs a diamond plan: A and B at the same time, C after both with exactly their answers", async () => {
    const spans: Array<Span> = []
    const t = await runSmurfs(
      "What is alpha + beta?",
      [lookupTool(), addTool()],
      slowModel({ planner: [diamond], ...executor }, 20, spans)
    )
    expect(t.finishType).toBe("give_answer")
    expect(t.finalAnswer).toBe("alpha + beta = 7")
    expect(eventsOf(t, "plan")[0]!["dependsOn"]).toEqual([[], [], [0, 1]])
    const of = (s: string) => spans.filter((x) => x.subtask === s)
    // A's and B's model calls overlap in time: some call of one starts before a call of the other has ended
    const overlap = of(A).some((a) => of(B).some((b) => a.start < b.end && b.start < a.end))
    expect(overlap).toBe(true)
    // C starts only once A and B are both answered
    const cStart = Math.min(...of(C).map((x) => x.start))
    expect(cStart).toBeGreaterThanOrEqual(Math.max(...[...of(A), ...of(B)].map((x) => x.end)))
    // C's executor saw both answers, A and B none (they depend on nothing)
    const thoughts = callsOf(t, "executor.thought")
    const promptOf = (s: string) => userPrompt(thoughts.find((c) => subtaskOf(c) === s)!)
    expect(promptOf(C)).toContain(`1. ${A}\n   Answer: alpha is 3\n`)
    expect(promptOf(C)).toContain(`2. ${B}\n   Answer: beta is 4\n`)
    expect(promptOf(A)).toContain(`Subtasks:\n1. ${A}\n\nSteps taken`)
    expect(promptOf(B)).toContain(`Subtasks:\n2. ${B}\n\nSteps taken`)
    // every event of a subtask names it, even though A's and B's events interleave
    const calls = eventsOf(t, "tool_call")
    expect(calls.map((d) => d["tool"]).sort()).toEqual(["add", "lookup_value", "lookup_value"])
    const linked = t.events.filter((e) => e.type === "dev.smurfs.tool_call").map((e) => [e.subtask, e.data["tool"]])
    expect(linked).toContainEqual([2, "add"])
  })

  it("the live view shows the dependencies and tags each line with its subtask", async () => {
    const lines: Array<string> = []
    await runSmurfs(
      "What is alpha + beta?",
      [lookupTool(), addTool()],
      { planner: [diamond], ...executor },
      { onEvent: liveView((l) => lines.push(l)) }
    )
    expect(lines).toContain("Plan (independent subtasks run at the same time):")
    expect(lines).toContain(`  3. ${C} (after 1, 2)`)
    expect(lines).toContain(`[1]   thought: Work on: ${A}`)
    expect(lines).toContain(`[3]   call add {"a":3,"b":4}`)
  })

  it("a dependent subtask sees only its own dependencies' answers", async () => {
    const plan = {
      subtasks: [
        { task: A, dependsOn: [] },
        { task: B, dependsOn: [] },
        { task: "Double the value of beta", dependsOn: [1] }
      ]
    }
    const t = await runSmurfs("Double beta, and alpha", [lookupTool(), addTool()], {
      planner: [plan],
      ...executor,
      "executor.choose": [() => ({ tool: "lookup_value" })],
      "executor.args": [(r: GenerateRequest) => ({ name: subtaskOf(r).split(" ").at(-1)! })],
      "answerer.final": [{ answer: "done" }]
    })
    const third = callsOf(t, "executor.thought").find((c) => subtaskOf(c).startsWith("Double"))!
    expect(userPrompt(third)).toContain(`2. ${B}\n   Answer: beta is 4\n`)
    expect(userPrompt(third)).not.toContain("alpha is 3")
  })

  it("with maxParallelSubtasks 1 the independent subtasks run one at a time", async () => {
    const spans: Array<Span> = []
    await runSmurfs(
      "What is alpha + beta?",
      [lookupTool(), addTool()],
      slowModel({ planner: [diamond], ...executor }, 5, spans),
      { maxParallelSubtasks: 1 }
    )
    const of = (s: string) => spans.filter((x) => x.subtask === s)
    expect(of(A).some((a) => of(B).some((b) => a.start < b.end && b.start < a.end))).toBe(false)
  })

  it("reflects an invalid plan back to the planner, then falls back to running its subtasks in order", async () => {
    const t = await runSmurfs("What is alpha + beta?", [lookupTool(), addTool()], {
      planner: [
        {
          subtasks: [
            { task: A, dependsOn: [1] },
            { task: B, dependsOn: [0] },
            { task: C, dependsOn: [0, 1] }
          ]
        },
        { subtasks: [{ task: A, dependsOn: [0] }, { task: B }, { task: C, dependsOn: [0, 1] }] },
        { subtasks: [{ task: A }, { task: B }, { task: C, dependsOn: [0, 7] }] }
      ],
      ...executor
    })
    const planner = callsOf(t, "planner")
    expect(planner).toHaveLength(3)
    // each reflection names the exact problem
    const reflection = (i: number) => planner[i]!.messages.at(-1)!.content
    expect(reflection(1)).toContain("the dependencies form a cycle (0 -> 1 -> 0)")
    expect(reflection(2)).toContain("subtask 0 depends on itself")
    expect(
      eventsOf(t, "guardrail")
        .filter((g) => g["guardrail"] === "plan_dependencies")
        .map((g) => g["error"])
    ).toHaveLength(3)
    const invalid = eventsOf(t, "plan_invalid")
    expect(invalid).toHaveLength(1)
    expect(invalid[0]!["error"]).toContain("subtask 2 depends on 7, but the subtasks are numbered 0 to 2")
    // the fallback: the same subtasks, sequential (no dependsOn), each seeing every earlier answer
    const plan = eventsOf(t, "plan")[0]!
    expect(plan["subtasks"]).toEqual([A, B, C])
    expect(plan["dependsOn"]).toBeUndefined()
    expect(t.finalAnswer).toBe("alpha + beta = 7")
  })

  it("uses the corrected plan when the reflection fixes it", async () => {
    const t = await runSmurfs("What is alpha + beta?", [lookupTool(), addTool()], {
      planner: [{ subtasks: [{ task: A, dependsOn: [2] }, { task: B }, { task: C, dependsOn: [0, 1] }] }, diamond],
      ...executor
    })
    expect(eventsOf(t, "plan_invalid")).toHaveLength(0)
    expect(eventsOf(t, "plan")[0]!["dependsOn"]).toEqual([[], [], [0, 1]])
    expect(eventsOf(t, "guardrail").map((g) => [g["guardrail"], g["recovered"]])).toEqual([["plan_dependencies", true]])
  })

  it("degrades an unparseable plan to the query as the one subtask", async () => {
    const query = "What is the value of alpha"
    const t = await runSmurfs(query, [lookupTool()], {
      planner: ["no plan here", "still { not json", "[1, 2"],
      ...executor,
      "executor.choose": [() => ({ tool: "lookup_value" })],
      "executor.args": [() => ({ name: "alpha" })],
      "answerer.final": [{ answer: "alpha is 3" }]
    })
    expect(eventsOf(t, "plan")[0]!["subtasks"]).toEqual([query])
    expect(t.finishType).toBe("give_answer")
    expect(t.finalAnswer).toBe("alpha is 3")
  })

  it("a failing subtask is reported as unavailable; the others still answer and a dependent one is skipped", async () => {
    const G = "Find the value of gamma" // no tool knows gamma: every call fails
    const t = await runSmurfs("alpha, gamma and gamma + alpha?", [lookupTool()], {
      planner: [
        {
          subtasks: [
            { task: A, dependsOn: [] },
            { task: G, dependsOn: [] },
            { task: "Add the value of gamma and 3", dependsOn: [1] }
          ]
        }
      ],
      ...executor,
      "executor.choose": [() => ({ tool: "lookup_value" })],
      "executor.args": [(r: GenerateRequest) => ({ name: subtaskOf(r).split(" ").at(-1)! })],
      "answerer.subtask": [{ answer: "The value could not be found." }],
      "answerer.final": [(r: GenerateRequest) => ({ answer: /Answer: (alpha is \d+)/.exec(text(r))?.[1] ?? "?" })]
    })
    expect(t.finishType).toBe("give_answer")
    // the answer keeps what was found and names what is missing
    expect(t.finalAnswer).toContain("alpha is 3")
    expect(t.finalAnswer).toContain(
      `Unavailable: ${G} (no tool call succeeded (last: lookup_value: The call failed: no value named gamma))`
    )
    expect(t.finalAnswer).toContain(
      "Unavailable: Add the value of gamma and 3 (it needs the answer of subtask 2, which is unavailable)"
    )
    const answered = eventsOf(t, "subtask_answered")
    expect(answered.find((d) => d["index"] === 2)!["source"]).toBe("skipped")
    expect(answered.find((d) => d["index"] === 1)!["available"]).toBe(false)
    // the final answerer was told the subtask is unavailable, not given the failed attempt as a fact
    const final = userPrompt(callsOf(t, "answerer.final")[0]!)
    expect(final).toContain(`${G}\n   Answer: unavailable (no tool call succeeded`)
    expect(eventsOf(t, "final_answer")[0]!["unavailable"]).toEqual([1, 2])
    // the skipped subtask cost no model call
    expect(callsOf(t, "executor.thought").some((c) => userPrompt(c).includes("gamma and 3"))).toBe(false)
  })

  const failingSecond = {
    planner: [{ subtasks: [A, "Find the value of gamma"] }],
    ...executor,
    "executor.choose": [() => ({ tool: "lookup_value" })],
    "executor.args": [(r: GenerateRequest) => ({ name: subtaskOf(r).split(" ").at(-1)! })],
    "answerer.subtask": [{ answer: "not found" }],
    "answerer.final": [{ answer: "alpha is 3; gamma is not known" }]
  }

  it("a sequential plan with a failing subtask still answers with the others", async () => {
    const t = await runSmurfs("alpha and gamma?", [lookupTool()], failingSecond)
    expect(t.finalAnswer).toBe(
      "alpha is 3; gamma is not known\n\nUnavailable: Find the value of gamma (no tool call succeeded (last: lookup_value: The call failed: no value named gamma))"
    )
  })

  it("leaves the note out with reportUnavailable off (bench: ToolEval labels such answers Unsolved), still naming them in the trace", async () => {
    const t = await runSmurfs("alpha and gamma?", [lookupTool()], failingSecond, { reportUnavailable: false })
    expect(t.finalAnswer).toBe("alpha is 3; gamma is not known")
    expect(eventsOf(t, "final_answer")[0]!["unavailable"]).toEqual([1])
  })
})

describe("planProblem", () => {
  it("names unknown indices, self-references and cycles; accepts a valid graph", () => {
    const p = (deps: Array<Array<number>>) => planProblem(deps.map((d, i) => ({ task: `t${i}`, dependsOn: d })))
    expect(p([[], [0], [0, 1]])).toBeUndefined()
    expect(p([[1], []])).toBeUndefined() // a forward reference without a cycle is still a valid order
    expect(p([[], [5]])).toBe("subtask 1 depends on 5, but the subtasks are numbered 0 to 1.")
    expect(p([[-1]])).toContain("depends on -1")
    expect(p([[0]])).toBe("subtask 0 depends on itself.")
    expect(p([[2], [0], [1]])).toContain("cycle (0 -> 2 -> 1 -> 0)")
    expect(planProblem([{ task: " ", dependsOn: [] }])).toBe("subtask 0 is empty.")
  })
})
