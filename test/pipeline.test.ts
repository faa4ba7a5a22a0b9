// The Smurfs pipeline end to end with scripted models: planning, DFS over tools, answers, verification.
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { ModelUnreachable } from "../src/llm/errors.ts"
// the error built by hand below reads its wording from the ollama provider, registered when its module loads (as on every real path)
import "../src/llm/providers/ollama.ts"
import { LanguageModel } from "../src/llm/language-model.ts"
import {
  callsOf,
  eventsOf,
  fromObservation,
  fromPrompt,
  heightTool,
  makeTool,
  modelLayer,
  percentTool,
  runSmurfs,
  systemPrompt,
  userPrompt
} from "./pipeline-fixtures.ts"

const query = "What is 12% of the height of Mount Everest in feet?"
const solved = { status: "solved", reason: "the answer gives what was asked" }

describe("smurfs pipeline", () => {
  it("solves a two-subtask query through real tool calls", async () => {
    const height = heightTool()
    const percent = percentTool()
    const t = await runSmurfs(query, [height, percent], {
      planner: [{ subtasks: ["Find the height of Mount Everest in feet", "Compute 12% of 29032 feet"] }],
      "executor.thought": [{ thought: "Look up the height." }, { thought: "Compute the percentage." }],
      "executor.choose": [{ tool: "mountain_height" }, { tool: "percent_of" }],
      "executor.args": [{ name: "Mount Everest" }, { percent: 12, value: 29032 }],
      // the step answer is read from the tool response the pipeline put in the prompt
      "answerer.step": [fromObservation((obs) => ({ answer: obs }))],
      verifier: [solved, solved],
      "answerer.final": [
        fromPrompt(/2\. Compute[^\n]*\n\s*Answer: (.*)/, (a) => ({
          answer: `12% of Mount Everest's height is ${a} feet.`
        }))
      ],
      $cycle: true
    })
    expect(t.finishType).toBe("give_answer")
    expect(t.error).toBeUndefined()
    expect(t.finalAnswer).toBe(`12% of Mount Everest's height is ${(12 * 29032) / 100} feet.`)
    expect(height.calls).toEqual([{ name: "Mount Everest" }])
    expect(percent.calls).toEqual([{ percent: 12, value: 29032 }])
    expect(eventsOf(t, "plan")[0]!["subtasks"]).toHaveLength(2)
    expect(eventsOf(t, "subtask_answered").map((d) => [d["answer"], d["source"]])).toEqual([
      ["Mount Everest is 29032 feet high.", "verified"],
      ["3483.84", "verified"]
    ])
    expect(t.totals.toolCalls).toBe(2)
    // the second subtask's executor sees the first subtask's answer
    const thoughts = callsOf(t, "executor.thought")
    expect(userPrompt(thoughts[0]!)).toContain("Subtasks:\n1. Find the height of Mount Everest in feet\n\nSteps taken")
    expect(userPrompt(thoughts[1]!)).toContain(
      "1. Find the height of Mount Everest in feet\n   Answer: Mount Everest is 29032 feet high.\n2. Compute 12% of 29032 feet"
    )
    expect(t.totals.backtracks).toBe(0)
    expect(t.events.map((e) => e.type).at(0)).toBe("dev.smurfs.task_started")
    expect(t.events.map((e) => e.type).at(-1)).toBe("dev.smurfs.task_finished")
    // every request of the task starts with one prefix (system text, tools, query: issue 23, a server's prefix
    // cache reuses it); the verifier continues the step's exchange, so it reads the answer the Answer agent gave
    expect(userPrompt(callsOf(t, "planner")[0]!)).toContain(query)
    const verifier = callsOf(t, "verifier")[0]!
    expect(systemPrompt(verifier)).toBe(systemPrompt(thoughts[0]!))
    expect(systemPrompt(callsOf(t, "planner")[0]!)).toBe(systemPrompt(thoughts[0]!))
    expect(verifier.messages.at(-2)).toMatchObject({ role: "assistant", content: expect.stringContaining("29032") })
  })

  it("excludes a failing tool at this depth and uses another", async () => {
    const broken = makeTool("broken_height", z.object({ name: z.string() }), () => ({
      ok: false,
      content: "",
      error: "HTTP 500"
    }))
    const height = heightTool()
    const formats: Array<unknown> = []
    const t = await runSmurfs("How high is K2?", [broken, height], {
      planner: [{ subtasks: ["How high is K2 in feet?"] }],
      "executor.thought": [{ thought: "Look it up." }],
      "executor.choose": [
        (r) => (formats.push(r.format), { tool: "broken_height" }),
        (r) => (formats.push(r.format), { tool: "mountain_height" })
      ],
      "executor.args": [{ name: "K2" }],
      "answerer.step": [{ answer: "K2 is 28251 feet high." }],
      verifier: [solved],
      "answerer.final": [{ answer: "K2 is 28251 feet high." }],
      $cycle: true
    })
    expect(t.finalAnswer).toBe("K2 is 28251 feet high.")
    expect(eventsOf(t, "tool_call").map((d) => [d["tool"], d["ok"]])).toEqual([
      ["broken_height", false],
      ["mountain_height", true]
    ])
    const choose = callsOf(t, "executor.choose")
    // the retry names the tool that failed; the schema's enum holds the ones left
    expect(userPrompt(choose[1]!)).toContain("Executor agent, tool (not broken_height)")
    expect(JSON.stringify(formats[0])).toContain("broken_height")
    expect(JSON.stringify(formats[1])).not.toContain("broken_height")
    // the thought stands: the next choice continues the thought's exchange with the failed call and its error
    const thoughts = callsOf(t, "executor.thought")
    expect(thoughts).toHaveLength(1)
    expect(choose[1]!.messages.slice(0, thoughts[0]!.messages.length)).toEqual(thoughts[0]!.messages)
    expect(choose[1]!.messages.at(-3)).toMatchObject({ role: "assistant", content: '{"thought":"Look it up."}' })
    expect(choose[1]!.messages.at(-2)).toMatchObject({ role: "tool", content: "Error: HTTP 500" })
    expect(userPrompt(choose[1]!)).toContain("That call failed (its response is above).")
  })

  it("with rules.rethink, thinks anew after a failed call, naming the failed tool", async () => {
    const broken = makeTool("broken_height", z.object({ name: z.string() }), () => ({
      ok: false,
      content: "",
      error: "HTTP 500"
    }))
    const t = await runSmurfs(
      "How high is K2?",
      [broken, heightTool()],
      {
        planner: [{ subtasks: ["How high is K2 in feet?"] }],
        "executor.thought": [{ thought: "Look it up." }],
        "executor.choose": [{ tool: "broken_height" }, { tool: "mountain_height" }],
        "executor.args": [{ name: "K2" }],
        "answerer.step": [{ answer: "K2 is 28251 feet high." }],
        verifier: [solved],
        "answerer.final": [{ answer: "K2 is 28251 feet high." }],
        $cycle: true
      },
      { rules: { rethink: true } }
    )
    expect(t.finalAnswer).toBe("K2 is 28251 feet high.")
    const thoughts = callsOf(t, "executor.thought")
    expect(thoughts).toHaveLength(2)
    expect(userPrompt(thoughts[1]!)).toContain("Tools that failed at this step: broken_height")
    expect(userPrompt(callsOf(t, "executor.choose")[1]!)).not.toContain("That call failed")
  })

  it("backtracks when every tool fails at a depth, excluding the popped tool one level up", async () => {
    // a works once then fails; b fails once then works
    const a = makeTool("tool_a", z.object({ q: z.string() }), (_, n) =>
      n === 1 ? { ok: true, content: "partial from a" } : { ok: false, content: "", error: "a broke" }
    )
    const b = makeTool("tool_b", z.object({ q: z.string() }), (_, n) =>
      n === 1 ? { ok: false, content: "", error: "b broke" } : { ok: true, content: "full answer from b" }
    )
    const t = await runSmurfs(
      "Find the thing",
      [a, b],
      {
        "executor.thought": [{ thought: "next" }],
        "executor.choose": [{ tool: "tool_a" }, { tool: "tool_a" }, { tool: "tool_b" }, { tool: "tool_b" }],
        "executor.args": [{ q: "thing" }],
        "answerer.step": [fromObservation((obs) => ({ answer: obs }))],
        verifier: [{ status: "pending", reason: "only partial", hint: "find more" }, solved],
        "answerer.final": [{ answer: "done" }],
        $cycle: true
      },
      { planner: false, maxSteps: 5 }
    )
    const backtracks = eventsOf(t, "backtrack")
    expect(backtracks).toEqual([{ subtask: 0, fromDepth: 1, toDepth: 0, tool: "tool_a", excluded: ["tool_a"] }])
    expect(t.totals.backtracks).toBe(1)
    // after the backtrack only tool_b may be chosen at depth 0
    const lastChoose = callsOf(t, "executor.choose").at(-1)!
    expect(userPrompt(lastChoose)).toContain("Executor agent, tool (one of: tool_b)")
    expect(eventsOf(t, "subtask_answered")[0]!["answer"]).toBe("full answer from b")
    // the popped step no longer appears in the executor's local memory after the backtrack
    expect(userPrompt(callsOf(t, "executor.thought").at(-1)!)).toContain("(no steps yet)")
    expect(eventsOf(t, "tool_call").map((d) => [d["tool"], d["ok"]])).toEqual([
      ["tool_a", true],
      ["tool_a", false],
      ["tool_b", false],
      ["tool_b", true]
    ])
  })

  it("feeds the verifier's hint into the next executor step", async () => {
    const height = heightTool()
    const t = await runSmurfs(
      "How high is K2?",
      [height],
      {
        "executor.thought": [{ thought: "look up" }, { thought: "look up K2 precisely" }],
        "executor.choose": [{ tool: "mountain_height" }],
        "executor.args": [{ name: "Mount Everest" }, { name: "K2" }],
        "answerer.step": [fromObservation((obs) => ({ answer: obs }))],
        verifier: [
          { status: "pending", reason: "wrong mountain", hint: "Use the name K2 instead of Mount Everest." },
          solved
        ],
        "answerer.final": [{ answer: "K2 is 28251 feet high." }],
        $cycle: true
      },
      { planner: false }
    )
    const thoughts = callsOf(t, "executor.thought")
    expect(thoughts).toHaveLength(2)
    expect(userPrompt(thoughts[0]!)).toContain("Hint: none\n")
    expect(userPrompt(thoughts[1]!)).toContain("Hint: Use the name K2 instead of Mount Everest.")
    // the first step is on the path, so the second step's memory shows it
    expect(userPrompt(thoughts[1]!)).toContain("Mount Everest is 29032 feet high.")
    expect(eventsOf(t, "verdict").map((d) => d["status"])).toEqual(["pending", "solved"])
    expect(eventsOf(t, "subtask_answered")[0]!["answer"]).toBe("K2 is 28251 feet high.")
  })

  it("answers a subtask from global memory when the step limit is reached", async () => {
    const height = heightTool()
    const t = await runSmurfs(
      "How high is K2?",
      [height],
      {
        "executor.thought": [{ thought: "look up" }],
        "executor.choose": [{ tool: "mountain_height" }],
        "executor.args": [{ name: "K2" }, { name: "Mount Everest" }],
        "answerer.step": [fromObservation((obs) => ({ answer: `step says: ${obs}` }))],
        verifier: [{ status: "pending", reason: "not sure", hint: "check again" }],
        "answerer.subtask": [fromPrompt(/Step 1:[\s\S]*?Answer: (.*)/, (a) => ({ answer: `from memory: ${a}` }))],
        "answerer.final": [fromPrompt(/Answer: (.*)/, (a) => ({ answer: a }))],
        $cycle: true
      },
      { planner: false, maxSteps: 2 }
    )
    expect(height.calls).toHaveLength(2)
    const fallback = callsOf(t, "answerer.subtask")
    expect(fallback).toHaveLength(1)
    expect(userPrompt(fallback[0]!)).toContain("step says: K2 is 28251 feet high.")
    expect(userPrompt(fallback[0]!)).toContain("step says: Mount Everest is 29032 feet high.")
    expect(eventsOf(t, "subtask_answered")[0]).toMatchObject({
      source: "step_limit",
      answer: "from memory: step says: K2 is 28251 feet high."
    })
    expect(t.finalAnswer).toBe("from memory: step says: K2 is 28251 feet high.")
  })

  it("keeps each role's static prompt part byte-identical within a task", async () => {
    const broken = makeTool("broken_height", z.object({ name: z.string() }), () => ({
      ok: false,
      content: "",
      error: "down"
    }))
    const t = await runSmurfs(
      query,
      [broken, heightTool(), percentTool()],
      {
        planner: [{ subtasks: ["Find the height of Mount Everest in feet", "Compute 12% of 29032"] }],
        "executor.thought": [{ thought: "next" }],
        "executor.choose": [
          { tool: "broken_height" },
          { tool: "mountain_height" },
          { tool: "percent_of" },
          { tool: "percent_of" }
        ],
        "executor.args": [
          { name: "Mount Everest" },
          { name: "Mount Everest" },
          { percent: 12, value: 29 },
          { percent: 12, value: 29032 }
        ],
        "answerer.step": [{ answer: "a" }],
        verifier: [solved, { status: "pending", reason: "wrong value", hint: "use 29032" }, solved],
        "answerer.final": [{ answer: "3483.84 feet" }],
        $cycle: true
      },
      { maxSteps: 4 }
    )
    for (const role of ["executor.thought", "executor.choose", "executor.args", "answerer.step", "verifier"]) {
      const calls = callsOf(t, role)
      expect(calls.length, role).toBeGreaterThanOrEqual(3)
      const systems = new Set(calls.map(systemPrompt))
      expect(systems.size, role).toBe(1)
      // the system message comes first and the changing part last
      expect(calls[0]!.messages[0]!.role).toBe("system")
    }
    expect(systemPrompt(callsOf(t, "executor.thought")[0]!)).toContain("- percent_of:")
  })

  it("keeps every prompt within the model's context minus the reserve", async () => {
    const huge = makeTool("huge", z.object({ q: z.string() }), () => ({
      ok: true,
      content: "lorem ipsum dolor ".repeat(4000)
    }))
    const contextTokens = 2048
    const small = await runSmurfs(
      "Tell me everything",
      [huge],
      modelLayer(
        {
          "executor.thought": [{ thought: "ask the huge tool" }],
          "executor.choose": [{ tool: "huge" }],
          "executor.args": [{ q: "all" }],
          "answerer.step": [{ answer: "a long answer ".repeat(60) }],
          verifier: [{ status: "pending", reason: "more", hint: "more" }],
          "answerer.subtask": [{ answer: "summary" }],
          "answerer.final": [{ answer: "summary" }],
          $cycle: true
        },
        contextTokens
      ),
      { planner: false, maxSteps: 6 }
    )
    const calls = eventsOf(small, "model_call")
    expect(calls.length).toBeGreaterThan(10)
    for (const c of calls) expect(c["promptTokens"], c["role"]).toBeLessThanOrEqual(contextTokens - 1024)
    // later executor prompts fold old steps into a summary
    expect(userPrompt(callsOf(small, "executor.thought").at(-1)!)).toContain("Summary of steps")
  })

  it("gives up with the message kept when the model is unreachable", async () => {
    const unreachable = Layer.succeed(
      LanguageModel,
      LanguageModel.of({
        info: { spec: "ollama:none", provider: "ollama", model: "none", contextTokens: 4096, supportsTools: false },
        generate: () => Effect.fail(new ModelUnreachable({ provider: "ollama", host: "http://127.0.0.1:1" }))
      })
    )
    const t = await runSmurfs(query, [heightTool()], unreachable)
    expect(t.finishType).toBe("give_up")
    expect(t.finalAnswer).toBe("")
    expect(t.error).toContain("Cannot reach Ollama at http://127.0.0.1:1")
    expect(eventsOf(t, "give_up")).toHaveLength(1)
    expect(eventsOf(t, "model_call")).toHaveLength(1)
  })

  it("stops at the model-call budget instead of looping", async () => {
    const t = await runSmurfs(
      query,
      [heightTool()],
      {
        "*": [
          {
            status: "pending",
            reason: "x",
            hint: "y",
            thought: "t",
            tool: "mountain_height",
            name: "K2",
            answer: "a",
            subtasks: ["s1", "s2", "s3"]
          }
        ],
        $cycle: true
      },
      { maxModelCalls: 7, maxSteps: 50 }
    )
    expect(t.error).toContain("budget of 7 model calls")
    expect(t.totals.modelCalls).toBeLessThanOrEqual(7 + 2)
  })

  it("records a failed agent call and goes on when the script has no reply for a role", async () => {
    const t = await runSmurfs("How high is K2?", [heightTool()], {
      "executor.thought": [{ thought: "look up" }],
      "executor.choose": [{ tool: "mountain_height" }],
      "executor.args": [{ name: "K2" }],
      "answerer.step": [{ answer: "K2 is 28251 feet high." }],
      verifier: [solved],
      "answerer.final": [{ answer: "K2 is 28251 feet high." }]
    })
    // no planner replies: the planner's failure is recorded and the query becomes the only subtask
    expect(eventsOf(t, "error")[0]).toMatchObject({ role: "planner", tag: "ModelServerError" })
    expect(eventsOf(t, "plan")[0]!["subtasks"]).toEqual(["How high is K2?"])
    expect(t.finalAnswer).toBe("K2 is 28251 feet high.")
  })

  it("bounds the plan and turns an empty plan into the query itself", async () => {
    const base = {
      "executor.thought": [{ thought: "t" }],
      "executor.choose": [{ tool: "mountain_height" }],
      "executor.args": [{ name: "K2" }],
      "answerer.step": [{ answer: "K2 is 28251 feet high." }],
      verifier: [solved],
      "answerer.final": [{ answer: "K2 is 28251 feet high." }],
      $cycle: true
    }
    const many = await runSmurfs(
      "How high is K2?",
      [heightTool()],
      { ...base, planner: [{ subtasks: ["a", "b", "c", "d", "e"] }] },
      { maxSubtasks: 2 }
    )
    expect(eventsOf(many, "plan")[0]!["subtasks"]).toEqual(["a", "b"])
    expect(eventsOf(many, "subtask_started")).toHaveLength(2)
    const empty = await runSmurfs("How high is K2?", [heightTool()], { ...base, planner: [{ subtasks: ["  ", ""] }] })
    expect(eventsOf(empty, "plan")[0]!["subtasks"]).toEqual(["How high is K2?"])
  })

  it("turns a crashing tool into a failed call and reflects a re-chosen failed tool", async () => {
    const crashing = makeTool("crashing", z.object({ name: z.string() }), () => {
      throw new Error("boom")
    })
    const t = await runSmurfs(
      "How high is K2?",
      [crashing, heightTool()],
      {
        "executor.thought": [{ thought: "t" }],
        "executor.choose": [{ tool: "crashing" }, { tool: "crashing" }, { tool: "mountain_height" }],
        "executor.args": [{ name: "K2" }],
        "answerer.step": [{ answer: "K2 is 28251 feet high." }],
        verifier: [solved],
        "answerer.final": [{ answer: "K2 is 28251 feet high." }],
        $cycle: true
      },
      { planner: false }
    )
    expect(eventsOf(t, "tool_call")[0]).toMatchObject({
      tool: "crashing",
      ok: false,
      error: expect.stringContaining("boom")
    })
    expect(eventsOf(t, "guardrail")[0]).toMatchObject({ guardrail: "excluded_tool", role: "executor.choose" })
    expect(t.finalAnswer).toBe("K2 is 28251 feet high.")
  })
})
