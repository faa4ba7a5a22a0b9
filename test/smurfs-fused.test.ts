// The fused executor (`executor: "fused"`, the default): one request for thought, tool and arguments (one JSON object,
// or native tool calling with `toolCalling: "native"`), one for the step answer with its verdict; the three-call
// guardrails still apply.
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { ModelServerError } from "../src/llm/errors.ts"
import { type GenerateRequest, LanguageModel } from "../src/llm/language-model.ts"
import { makeScriptedModel } from "../src/llm/scripted.ts"
import { eventsOf, fromObservation, heightTool, makeTool, runSmurfs } from "./pipeline-fixtures.ts"

const solved = { status: "solved", reason: "the answer gives what was asked" }
const pending = { status: "pending", reason: "only partial", hint: "ask tool_b instead" }

/** A native tool call reply: the thought as the text, one call. */
const call = (name: string, args: Record<string, unknown>, thought = `call ${name}`) => ({
  text: thought,
  toolCalls: [{ id: "c1", name, arguments: args }]
})

/** A tool that answers on the calls listed in `works` (1-based) and fails on the others. */
const flaky = (name: string, works: ReadonlyArray<number>) =>
  makeTool(name, z.object({ q: z.string() }), (_, n) =>
    works.includes(n)
      ? { ok: true, content: `${name} answer ${n}` }
      : { ok: false, content: "", error: `${name} broke` }
  )

const roles = (t: Awaited<ReturnType<typeof runSmurfs>>) => eventsOf(t, "model_call").map((d) => d["role"])

describe("smurfs with the fused executor", () => {
  it("solves a task in two requests per step where three-call needs five", async () => {
    const script = {
      "executor.thought": [{ thought: "look up K2" }],
      "executor.choose": [{ tool: "mountain_height" }],
      "executor.args": [{ name: "K2" }],
      "executor.fused": [call("mountain_height", { name: "K2" }, "look up K2")],
      "answerer.step": [fromObservation((obs) => ({ answer: obs }))],
      "answerer.verify": [fromObservation((obs) => ({ answer: obs, ...solved }))],
      verifier: [solved],
      "answerer.final": [{ answer: "K2 is 28251 feet high." }]
    }
    const options = { planner: false, maxSteps: 1 }
    const fused = await runSmurfs("How high is K2?", [heightTool()], script, {
      ...options,
      executor: "fused",
      toolCalling: "native"
    })
    const three = await runSmurfs("How high is K2?", [heightTool()], script, options)
    expect(roles(fused)).toEqual(["executor.fused", "answerer.verify", "answerer.final"])
    expect(roles(three)).toEqual([
      "executor.thought",
      "executor.choose",
      "executor.args",
      "answerer.step",
      "verifier",
      "answerer.final"
    ])
    expect(fused.finalAnswer).toBe("K2 is 28251 feet high.")
    expect(eventsOf(fused, "thought")[0]).toMatchObject({ thought: "look up K2" })
    expect(eventsOf(fused, "verdict")[0]).toMatchObject({ status: "solved" })
    expect(eventsOf(fused, "subtask_answered")[0]).toMatchObject({
      answer: "K2 is 28251 feet high.",
      source: "verified"
    })
  })

  it("declares the task's tools as the request's tools, in the subtask's shared prefix", async () => {
    const requests: Array<GenerateRequest> = []
    const run = (toolCalling?: "native") =>
      runSmurfs(
        "How high is K2?",
        [heightTool(), flaky("tool_b", [1])],
        {
          "executor.fused": [
            (r) => (
              requests.push(r),
              toolCalling
                ? call("mountain_height", { name: "K2" })
                : { thought: "call mountain_height", tool: "mountain_height", arguments: { name: "K2" } }
            )
          ],
          "answerer.verify": [(r) => (requests.push(r), { answer: "28251 feet", ...solved })],
          "answerer.final": [{ answer: "done" }]
        },
        { planner: false, executor: "fused", toolCalling }
      )
    // the default (--tool-calling auto) is one JSON object here, unlike ReAct's auto: no tools field, the reply's format
    await run()
    expect(requests[0]!.tools).toBeUndefined()
    expect(requests[0]!.format).toMatchObject({ required: expect.arrayContaining(["thought", "tool", "arguments"]) })
    // native tool calls only when asked for
    requests.length = 0
    const t = await run("native")
    expect(t.finishType).toBe("give_answer")
    const [act, verify] = requests
    expect(act!.tools!.map((s) => s.name)).toEqual(["mountain_height", "tool_b"])
    expect(act!.tools![0]!.parameters).toMatchObject({ properties: { name: { type: "string" } } })
    expect(act!.format).toBeUndefined()
    // one system text for every request of the subtask, and the same start of the user message
    expect(act!.messages[0]!.content).toBe(verify!.messages[0]!.content)
    const subtaskStart = verify!.messages[1]!.content
    expect(act!.messages[1]!.content.startsWith(subtaskStart)).toBe(true)
    expect(verify!.format).toMatchObject({ required: expect.arrayContaining(["answer", "status"]) })
  })

  it("reflects an unknown tool name back, naming the valid tools", async () => {
    const seen: Array<GenerateRequest> = []
    const t = await runSmurfs(
      "How high is K2?",
      [heightTool()],
      {
        "executor.fused": [
          call("mountain_heights", { name: "K2" }),
          (r) => (seen.push(r), call("mountain_height", { name: "K2" }))
        ],
        "answerer.verify": [{ answer: "28251 feet", ...solved }],
        "answerer.final": [{ answer: "done" }]
      },
      { planner: false, executor: "fused", toolCalling: "native" }
    )
    const guard = eventsOf(t, "guardrail").find((g) => g["guardrail"] === "unknown_tool")
    expect(guard).toMatchObject({ role: "executor.fused", recovered: true })
    expect(guard!["error"]).toContain('Did you mean "mountain_height"?')
    // the bad call is answered by a tool message carrying the reflection
    const reply = seen[0]!.messages.at(-1)!
    expect(reply).toMatchObject({ role: "tool", toolName: "mountain_heights" })
    expect(reply.content).toContain('there is no tool named "mountain_heights"')
    expect(eventsOf(t, "tool_call").map((d) => d["tool"])).toEqual(["mountain_height"])
  })

  it("reflects arguments that break the tool's schema, then calls with the corrected ones", async () => {
    const t = await runSmurfs(
      "How high is K2?",
      [heightTool()],
      {
        "executor.fused": [call("mountain_height", { mountain: "K2" }), call("mountain_height", { name: "K2" })],
        "answerer.verify": [{ answer: "28251 feet", ...solved }],
        "answerer.final": [{ answer: "done" }]
      },
      { planner: false, executor: "fused", toolCalling: "native" }
    )
    expect(eventsOf(t, "guardrail").find((g) => g["guardrail"] === "missing_params")).toMatchObject({
      role: "executor.fused",
      recovered: true
    })
    // the undeclared name was dropped, the call went out with the valid arguments only
    expect(eventsOf(t, "tool_call").map((d) => d["args"])).toEqual([{ name: "K2" }])
  })

  it("traces its guardrails in the order of the replies, as the three-call executor does", async () => {
    // a reply missing a required argument, then one with an undeclared argument (dropped, and the call made)
    const run = (executor: "fused" | "three-call") =>
      runSmurfs(
        "How high is K2?",
        [heightTool()],
        {
          "executor.fused": [call("mountain_height", {}), call("mountain_height", { name: "K2", unit: "ft" })],
          "executor.thought": [{ thought: "look up K2" }],
          "executor.choose": [{ tool: "mountain_height" }],
          "executor.args": [{}, { name: "K2", unit: "ft" }],
          "answerer.verify": [{ answer: "28251 feet", ...solved }],
          "answerer.step": [{ answer: "28251 feet" }],
          verifier: [solved],
          "answerer.final": [{ answer: "done" }]
        },
        { planner: false, executor, toolCalling: "native" }
      )
    const order = (t: Awaited<ReturnType<typeof runSmurfs>>) =>
      eventsOf(t, "guardrail").map((g) => [g["guardrail"], g["recovered"]])
    const expected = [
      ["missing_params", true],
      ["extra_params", true]
    ]
    expect(order(await run("three-call"))).toEqual(expected)
    expect(order(await run("fused"))).toEqual(expected)
  })

  it("excludes a tool whose arguments stay invalid, without calling it", async () => {
    const a = flaky("tool_a", [1])
    const b = makeTool("tool_b", z.object({ n: z.number() }), () => ({ ok: true, content: "b answered" }))
    const offered: Array<ReadonlyArray<string>> = []
    const act = (name: string, args: Record<string, unknown>) => (r: GenerateRequest) => {
      offered.push(r.tools!.map((s) => s.name))
      return call(name, args)
    }
    const t = await runSmurfs(
      "Find the thing",
      [b, a],
      {
        // the first request and its two reflections: tool_b with a text where a number goes
        "executor.fused": [
          act("tool_b", { n: "x" }),
          act("tool_b", { n: "y" }),
          act("tool_b", { n: "z" }),
          act("tool_a", { q: "thing" })
        ],
        "answerer.verify": [{ answer: "found", ...solved }],
        "answerer.final": [{ answer: "done" }]
      },
      { planner: false, executor: "fused", toolCalling: "native" }
    )
    expect(b.calls).toHaveLength(0)
    expect(a.calls).toHaveLength(1)
    expect(eventsOf(t, "guardrail").filter((g) => g["guardrail"] === "param_rules")).toHaveLength(3)
    // traced as the three-call executor traces its failed arguments request
    const errors = eventsOf(t, "error")
    expect(errors.map((e) => [e["role"], e["tag"]])).toEqual([["executor.fused", "MalformedOutput"]])
    expect(String(errors[0]!["error"])).toContain("not valid after 3 attempts")
    // tool_b is no longer offered at this depth
    expect(offered).toEqual([["tool_b", "tool_a"], ["tool_b", "tool_a"], ["tool_b", "tool_a"], ["tool_a"]])
  })

  it("excludes a tool whose arguments were rejected when the later replies call nothing, in both modes", async () => {
    const offeredIn = async (toolCalling: "native" | "json") => {
      const a = flaky("tool_a", [1])
      const b = makeTool("tool_b", z.object({ n: z.number() }), () => ({ ok: true, content: "b answered" }))
      const offered: Array<ReadonlyArray<string>> = []
      const act = (reply: string | object) => (r: GenerateRequest) => {
        const tool = (r.format?.["properties"] as Record<string, { enum?: ReadonlyArray<string> }> | undefined)?.[
          "tool"
        ]
        offered.push(r.tools ? r.tools.map((s) => s.name) : (tool?.enum ?? []))
        return reply
      }
      const native = toolCalling === "native"
      const t = await runSmurfs(
        "Find the thing",
        [b, a],
        {
          // tool_b with a text where a number goes, then two replies that call nothing
          "executor.fused": [
            act(native ? call("tool_b", { n: "x" }) : { thought: "b", tool: "tool_b", arguments: { n: "x" } }),
            act("I am not sure which tool to use."),
            act("Still thinking."),
            act(native ? call("tool_a", { q: "thing" }) : { thought: "a", tool: "tool_a", arguments: { q: "thing" } })
          ],
          "answerer.verify": [{ answer: "found", ...solved }],
          "answerer.final": [{ answer: "done" }]
        },
        { planner: false, executor: "fused", toolCalling }
      )
      expect(b.calls).toHaveLength(0)
      expect(a.calls).toHaveLength(1)
      expect(eventsOf(t, "guardrail").map((g) => [g["guardrail"], g["recovered"]])).toEqual([
        ["param_rules", false],
        [native ? "no_tool_call" : "format", false],
        [native ? "no_tool_call" : "format", false]
      ])
      expect(eventsOf(t, "error").map((e) => [e["role"], e["tag"]])).toEqual([["executor.fused", "MalformedOutput"]])
      return offered
    }
    // as with three calls (the arguments' request failed): tool_b is failed at this depth, not offered again
    const expected = [["tool_b", "tool_a"], ["tool_b", "tool_a"], ["tool_b", "tool_a"], ["tool_a"]]
    expect(await offeredIn("json")).toEqual(expected)
    expect(await offeredIn("native")).toEqual(expected)
  })

  it("excludes a failing tool at its depth and backtracks", async () => {
    // depth 0: a works (pending); depth 1: a and b fail -> backtrack; depth 0: b works (solved)
    const a = flaky("tool_a", [1])
    const b = flaky("tool_b", [2])
    const offered: Array<ReadonlyArray<string>> = []
    const act = (name: string) => (r: GenerateRequest) => {
      offered.push(r.tools!.map((s) => s.name))
      return call(name, { q: "thing" })
    }
    const t = await runSmurfs(
      "Find the thing",
      [a, b],
      {
        "executor.fused": [act("tool_a"), act("tool_a"), act("tool_b"), act("tool_b")],
        "answerer.verify": [
          fromObservation((obs) => ({ answer: obs, ...pending })),
          { answer: "b found it", ...solved }
        ],
        "answerer.final": [{ answer: "done" }]
      },
      { planner: false, executor: "fused", toolCalling: "native" }
    )
    expect(eventsOf(t, "tool_call").map((d) => [d["tool"], d["ok"]])).toEqual([
      ["tool_a", true],
      ["tool_a", false],
      ["tool_b", false],
      ["tool_b", true]
    ])
    // a failed tool is not offered again at its depth; after the backtrack, the popped tool is excluded above
    expect(offered).toEqual([["tool_a", "tool_b"], ["tool_a", "tool_b"], ["tool_b"], ["tool_b"]])
    expect(eventsOf(t, "backtrack")).toEqual([
      { subtask: 0, fromDepth: 1, toDepth: 0, tool: "tool_a", excluded: ["tool_a"] }
    ])
    expect(eventsOf(t, "subtask_answered")[0]).toMatchObject({ answer: "b found it", source: "verified" })
  })

  it("a pending verdict sends its hint to the next fused request", async () => {
    const seen: Array<GenerateRequest> = []
    const t = await runSmurfs(
      "Find the thing",
      [flaky("tool_a", [1]), flaky("tool_b", [1])],
      {
        "executor.fused": [call("tool_a", { q: "thing" }), (r) => (seen.push(r), call("tool_b", { q: "thing" }))],
        "answerer.verify": [fromObservation((obs) => ({ answer: obs, ...pending })), { answer: "both", ...solved }],
        "answerer.final": [{ answer: "done" }]
      },
      { planner: false, executor: "fused", toolCalling: "native" }
    )
    expect(eventsOf(t, "verdict").map((v) => [v["status"], v["hint"]])).toEqual([
      ["pending", "ask tool_b instead"],
      ["solved", null]
    ])
    const user = seen[0]!.messages.find((m) => m.role === "user")!
    expect(user.content).toContain("Hint from the verifier: ask tool_b instead")
    // the second request's memory holds the first step and its answer
    expect(user.content).toContain("tool_a answer 1")
  })

  it("falls back to one JSON object when tool calling is json", async () => {
    const seen: Array<GenerateRequest> = []
    const t = await runSmurfs(
      "How high is K2?",
      [heightTool()],
      {
        "executor.fused": [
          (r) => (seen.push(r), { thought: "look up K2", tool: "mountain_heigth", arguments: { name: "K2" } }),
          { thought: "look up K2", tool: "mountain_height", arguments: { name: "K2" } }
        ],
        "answerer.verify": [{ answer: "28251 feet", ...solved }],
        "answerer.final": [{ answer: "done" }]
      },
      { planner: false, executor: "fused", toolCalling: "json" }
    )
    expect(seen[0]!.tools).toBeUndefined()
    expect(seen[0]!.format).toMatchObject({ required: expect.arrayContaining(["thought", "tool", "arguments"]) })
    expect(eventsOf(t, "guardrail").find((g) => g["guardrail"] === "unknown_tool")).toMatchObject({ recovered: true })
    expect(eventsOf(t, "tool_call").map((d) => d["args"])).toEqual([{ name: "K2" }])
  })

  it("reflects a reply that calls no tool", async () => {
    const t = await runSmurfs(
      "How high is K2?",
      [heightTool()],
      {
        "executor.fused": ["I would look up K2.", call("mountain_height", { name: "K2" })],
        "answerer.verify": [{ answer: "28251 feet", ...solved }],
        "answerer.final": [{ answer: "done" }]
      },
      { planner: false, executor: "fused", toolCalling: "native" }
    )
    expect(eventsOf(t, "guardrail").find((g) => g["guardrail"] === "no_tool_call")).toMatchObject({ recovered: true })
    expect(eventsOf(t, "tool_call").map((d) => d["tool"])).toEqual(["mountain_height"])
  })

  it("falls back to JSON when the server cannot parse the model's native calls", async () => {
    const script = makeScriptedModel({
      "executor.fused": [{ thought: "look up K2", tool: "mountain_height", arguments: { name: "K2" } }],
      "answerer.verify": [{ answer: "28251 feet", ...solved }],
      "answerer.final": [{ answer: "done" }]
    })
    // every native request fails as Ollama's "error parsing tool call"; JSON requests are answered
    const layer = Layer.succeed(
      LanguageModel,
      LanguageModel.of({
        ...script,
        generate: (request) =>
          request.tools
            ? Effect.fail(
                new ModelServerError({
                  status: 500,
                  host: "h",
                  detail: "error parsing tool call",
                  unparsedToolCall: true
                })
              )
            : script.generate(request)
      })
    )
    const t = await runSmurfs("How high is K2?", [heightTool()], layer, {
      planner: false,
      executor: "fused",
      toolCalling: "native"
    })
    expect(eventsOf(t, "guardrail").filter((g) => g["guardrail"] === "tool_call_parse")).toHaveLength(3)
    expect(eventsOf(t, "tool_call").map((d) => d["args"])).toEqual([{ name: "K2" }])
    expect(t.finalAnswer).toBe("done")
  })

  /** A model whose server cannot parse the native calls of the requests numbered in `failing` (1-based); the others get the script. */
  const unparsedOn = (failing: ReadonlyArray<number>, script: Parameters<typeof makeScriptedModel>[0]) => {
    const model = makeScriptedModel(script)
    let native = 0
    return Layer.succeed(
      LanguageModel,
      LanguageModel.of({
        ...model,
        generate: (request) =>
          request.tools && failing.includes(++native)
            ? Effect.fail(
                new ModelServerError({
                  status: 500,
                  host: "h",
                  detail: "error parsing tool call",
                  unparsedToolCall: true
                })
              )
            : model.generate(request)
      })
    )
  }
  const guardrailsOf = (t: Awaited<ReturnType<typeof runSmurfs>>) =>
    eventsOf(t, "guardrail").map((g) => [g["guardrail"], g["recovered"]])

  it("traces its guardrails in the order of the replies across a fallback to JSON", async () => {
    // a reply without a call; then the server fails to parse three calls; the JSON fallback's first reply is no JSON
    const t = await runSmurfs(
      "How high is K2?",
      [heightTool()],
      unparsedOn([2, 3, 4], {
        "executor.fused": [
          "I would look it up",
          "not json",
          { thought: "look up K2", tool: "mountain_height", arguments: { name: "K2" } }
        ],
        "answerer.verify": [{ answer: "28251 feet", ...solved }],
        "answerer.final": [{ answer: "done" }]
      }),
      { planner: false, executor: "fused", toolCalling: "native" }
    )
    expect(guardrailsOf(t)).toEqual([
      ["no_tool_call", true],
      ["tool_call_parse", true],
      ["tool_call_parse", true],
      ["tool_call_parse", true],
      ["format", true]
    ])
    expect(eventsOf(t, "tool_call").map((d) => d["args"])).toEqual([{ name: "K2" }])
  })

  it("a fallback whose arguments stay invalid recovers none of the server's parse errors, and excludes the tool", async () => {
    const height = heightTool()
    const t = await runSmurfs(
      "How high is K2?",
      [height],
      unparsedOn([1, 2, 3], {
        "executor.fused": [
          { thought: "t", tool: "mountain_height", arguments: { name: 1 } },
          { thought: "t", tool: "mountain_height", arguments: { name: 2 } },
          { thought: "t", tool: "mountain_height", arguments: { name: 3 } }
        ],
        "answerer.final": [{ answer: "no height found" }]
      }),
      { planner: false, executor: "fused", toolCalling: "native" }
    )
    // as ReAct's parse errors when its fallback fails, and as the native replies' rejections before an exclusion
    expect(guardrailsOf(t)).toEqual([
      ["tool_call_parse", false],
      ["tool_call_parse", false],
      ["tool_call_parse", false],
      ["param_rules", false],
      ["param_rules", false],
      ["param_rules", false]
    ])
    expect(height.calls).toHaveLength(0)
    expect(eventsOf(t, "subtask_answered")[0]).toMatchObject({ source: "exhausted" })
  })

  it("with --tool-calling json asks for one JSON object inside the task's shared prefix, and the answer+verdict continues its exchange", async () => {
    const requests: Array<GenerateRequest> = []
    const seen =
      <A>(reply: A) =>
      (r: GenerateRequest) => (requests.push(r), reply)
    const t = await runSmurfs(
      "How high is K2?",
      [heightTool()],
      {
        planner: [seen({ subtasks: ["Find the height of K2"] })],
        "executor.fused": [seen({ thought: "look up K2", tool: "mountain_height", arguments: { name: "K2" } })],
        "answerer.verify": [(r) => (requests.push(r), { answer: "28251 feet", ...solved })],
        "answerer.final": [seen({ answer: "K2 is 28251 feet high." })]
      },
      { executor: "fused", toolCalling: "json" }
    )
    expect(t.finalAnswer).toBe("K2 is 28251 feet high.")
    const [planner, act, verify, final] = requests
    expect(requests.map((r) => r.role)).toEqual(["planner", "executor.fused", "answerer.verify", "answerer.final"])
    // no native tools: the reply is a JSON object, its format sent; the tool's parameters are in the shared tool list
    expect(act!.tools).toBeUndefined()
    expect(act!.format).toMatchObject({ required: expect.arrayContaining(["thought", "tool", "arguments"]) })
    const system = planner!.messages[0]!.content
    expect(system).toContain("- mountain_height: ")
    // each tool's parameters rendered compactly: its properties, then the required names
    expect(system).toContain('  Parameters: {"name":{"type":"string"}}; required: name')
    // one system message for every request of the task; the user message starts with the question, as the planner's
    for (const r of [act, verify, final]) expect(r!.messages[0]).toEqual(planner!.messages[0])
    const question = "Question: How high is K2?\n\n"
    expect(planner!.messages[1]!.content.startsWith(question)).toBe(true)
    expect(act!.messages[1]!.content.startsWith(`${question}Subtasks:\n1. Find the height of K2\n`)).toBe(true)
    // answer+verdict: the executor's request, its reply with the call on it, the response as a tool message
    expect(verify!.messages.slice(0, act!.messages.length).map((m) => m.content)).toEqual(
      act!.messages.map((m) => m.content)
    )
    const [reply, response] = verify!.messages.slice(act!.messages.length)
    expect(reply).toMatchObject({
      role: "assistant",
      toolCalls: [{ name: "mountain_height", arguments: { name: "K2" } }]
    })
    expect(JSON.parse(reply!.content)).toMatchObject({ tool: "mountain_height" })
    expect(response).toMatchObject({ role: "tool", content: "K2 is 28251 feet high." })
    expect(eventsOf(t, "verdict")[0]).toMatchObject({ status: "solved" })
  })

  it("is ignored with the authors' agents: reference keeps its three-call loop", async () => {
    const { resolveOptions } = await import("../src/agents/smurfs-options.ts")
    const reference = { source: {}, sampling: {} } as never
    expect(resolveOptions({ executor: "fused", reference }).executor).toBe("three-call")
    expect(resolveOptions({ executor: "fused" }).executor).toBe("fused")
    // no executor asked for: fused with JSON replies (issue 33), and the authors' three requests under reference
    expect(resolveOptions({}).executor).toBe("fused")
    expect(resolveOptions({}).toolCalling).toBe("auto")
    expect(resolveOptions({ reference }).executor).toBe("three-call")
  })
})
