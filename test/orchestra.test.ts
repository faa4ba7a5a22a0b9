// Human in the loop (ask_user answered by the caller) and agents as tools (a pipeline nested in another's trace).
import { CloudEvent } from "cloudevents"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { AgentDepth, defineAgentTool } from "../src/agents/agent-tool.ts"
import type { UserQuestion } from "../src/agents/ask-user.ts"
import type { GenerateRequest } from "../src/llm/language-model.ts"
import { isKind } from "../src/trace/events.ts"
import {
  callsOf,
  eventsOf,
  fromObservation,
  heightTool,
  makeTool,
  paperLoop,
  percentTool,
  runSmurfs,
  systemPrompt
} from "./pipeline-fixtures.ts"

const solved = { status: "solved", reason: "the answer gives what was asked" }
const text = (r: GenerateRequest) => r.messages.map((m) => m.content).join("\n")
/** The user text of a request: every user message (a request that continues an agent's exchange has several). */
const userText = (r: GenerateRequest) =>
  r.messages
    .filter((m) => m.role === "user")
    .map((m) => m.content)
    .join("\n")
/** The subtask a call is about: the last entry of its prompt's list of subtasks. */
const subtaskOf = (r: GenerateRequest) => /\d+\. (.*)\n\nSteps taken for subtask/.exec(userText(r))?.[1] ?? "?"

const weatherTool = () =>
  makeTool("weather", z.object({ city: z.string() }), (args) => ({
    ok: true,
    content: `It is sunny in ${String(args["city"])}.`
  }))

const askScript = {
  planner: [{ subtasks: ["What is the weather in the user's city?"] }],
  "executor.thought": [{ thought: "I do not know the city; ask the user." }, { thought: "Now get the weather." }],
  "executor.choose": [{ tool: "ask_user" }, { tool: "weather" }],
  // the city comes from the person's reply, which the executor sees in its memory
  "executor.args": [
    { question: "Which city are you in?" },
    (r: GenerateRequest) => ({ city: /Paris|Rome|Lima/.exec(userText(r))?.[0] ?? "UNKNOWN" })
  ],
  "answerer.step": [fromObservation((obs) => ({ answer: obs }))],
  verifier: [
    { status: "pending", reason: "the city alone is not the weather", hint: "call weather for the city" },
    solved
  ],
  "answerer.final": [(r: GenerateRequest) => ({ answer: /Answer: (.*sunny.*)/.exec(text(r))?.[1] ?? "?" })]
}

describe("ask_user", () => {
  it("the executor asks the person through the caller's callback and continues with the reply", async () => {
    const questions: Array<UserQuestion> = []
    const weather = weatherTool()
    const t = await runSmurfs("What is the weather where I am?", [weather], askScript, {
      askUser: async (q) => (questions.push(q), "Paris")
    })
    expect(questions).toEqual([{ question: "Which city are you in?" }])
    expect(eventsOf(t, "ask_user")).toEqual([{ question: "Which city are you in?", reply: "Paris" }])
    // the reply reached the next step's arguments through memory
    const args = callsOf(t, "executor.args")[1]!
    expect(args.messages.map((m) => m.content).join("\n")).toContain("Paris")
    expect(weather.calls).toEqual([{ city: "Paris" }])
    expect(t.finalAnswer).toBe("It is sunny in Paris.")
    // the executor was offered the pseudo-tool with its description from prompts/
    expect(systemPrompt(callsOf(t, "executor.thought")[0]!)).toContain(
      "- ask_user: Ask the person you are working for one short question"
    )
  })

  it("fails as a tool when nobody answers, and is not offered without a callback (bench)", async () => {
    const weather = weatherTool()
    const t = await runSmurfs(
      "What is the weather where I am?",
      [weather],
      {
        ...askScript,
        "executor.args": [{ question: "Which city are you in?" }, { city: "Rome" }],
        verifier: [solved],
        "answerer.final": [{ answer: "It is sunny in Rome." }]
      },
      { askUser: () => undefined }
    )
    const failed = eventsOf(t, "tool_call").find((d) => d["tool"] === "ask_user")!
    expect(failed["ok"]).toBe(false)
    expect(failed["error"]).toContain("the person gave no answer")
    expect(eventsOf(t, "tool_call").at(-1)!["tool"]).toBe("weather")
    const off = await runSmurfs("What is the weather in Rome?", [weatherTool()], {
      planner: [{ subtasks: ["weather in Rome"] }],
      "executor.thought": [{ thought: "get it" }],
      "executor.choose": [{ tool: "weather" }],
      "executor.args": [{ city: "Rome" }],
      "answerer.step": [{ answer: "sunny" }],
      verifier: [solved],
      "answerer.final": [{ answer: "sunny" }]
    })
    expect(systemPrompt(callsOf(off, "executor.thought")[0]!)).not.toContain("ask_user")
  })
})

describe("defineAgentTool", () => {
  const agentScript = () => ({
    planner: [{ subtasks: ["Find the height of K2 in feet", "Compute 12% of the height of K2"] }],
    "executor.thought": [(r: GenerateRequest) => ({ thought: `Work on ${subtaskOf(r)}` })],
    "executor.choose": [
      (r: GenerateRequest) => {
        const s = subtaskOf(r)
        return {
          tool: s.startsWith("Compute") ? "percent_of" : s.startsWith("How high") ? "mountain_height" : "mountain_agent"
        }
      }
    ],
    "executor.args": [
      (r: GenerateRequest) => {
        const s = subtaskOf(r)
        if (s.startsWith("Compute")) return { percent: 12, value: Number(/K2 is (\d+) feet/.exec(text(r))?.[1] ?? -1) }
        return s.startsWith("How high") ? { name: "K2" } : { task: "How high is K2 in feet?" }
      }
    ],
    "answerer.step": [fromObservation((obs) => ({ answer: obs }))],
    verifier: [solved],
    "answerer.final": [
      (r: GenerateRequest) =>
        /Question: How high is K2/.test(userText(r))
          ? { answer: /Answer: (K2 is \d+ feet high\.)/.exec(text(r))?.[1] ?? "?" }
          : { answer: `12% of K2 is ${/Compute[^\n]*\n\s*Answer: (.*)/.exec(text(r))?.[1]} feet.` }
    ],
    $cycle: true
  })

  it("solves a subtask of the parent with its own pipeline and tools, nested in the parent's trace", async () => {
    const height = heightTool()
    const agent = defineAgentTool({
      name: "mountain_agent",
      description: "Answers questions about mountains.",
      tools: [height],
      // the agent's own pipeline runs the paper's loop too: the script answers its three requests per step
      options: paperLoop({ planner: false })
    })
    const t = await runSmurfs("What is 12% of the height of K2?", [agent, percentTool()], agentScript())
    expect(t.finalAnswer).toBe(`12% of K2 is ${(12 * 28251) / 100} feet.`)
    expect(height.calls).toEqual([{ name: "K2" }])
    // the parent sees one call of the agent, whose result is the agent's final answer
    const top = t.events
      .filter((e) => isKind(e, "tool_call") && e.agent === undefined)
      .map((e) => [e.data["tool"], e.data["content"]])
    expect(top).toEqual([
      ["mountain_agent", "K2 is 28251 feet high."],
      ["percent_of", "3390.12"]
    ])
    // the agent's own events are nested in the parent's trace: marked with its name and depth, linked to the parent's task and subtask
    const nested = t.events.filter((e) => e.agent === "mountain_agent")
    expect(nested.length).toBeGreaterThan(5)
    expect(
      nested.every(
        (e) =>
          e.agentdepth === 1 &&
          e.parentsubtask === 0 &&
          e.correlationid === "task-1" &&
          e.subject === "mountain_agent-1"
      )
    ).toBe(true)
    expect(nested.filter((e) => isKind(e, "tool_call")).map((e) => e.data["tool"])).toEqual(["mountain_height"])
    expect(nested.map((e) => e.type)).toContain("dev.smurfs.task_finished")
    for (const e of t.events) expect(new CloudEvent<unknown>({ ...e }, true).validate()).toBe(true)
    // the agent's model calls count in the parent's totals: they were made for the parent's task
    expect(t.totals.modelCalls).toBe(t.events.filter((e) => isKind(e, "model_call")).length)
  })

  it("fails as a tool beyond its depth limit", async () => {
    const inner = defineAgentTool({ name: "inner", description: "x", tools: [heightTool()], maxDepth: 1 })
    const result = await Effect.runPromise(
      inner.call({ task: "How high is K2?" }).pipe(Effect.provideService(AgentDepth, 1))
    )
    expect(result.ok).toBe(false)
    expect(result.error).toContain('agent "inner" would run at depth 2, deeper than its limit 1')
  })
})
