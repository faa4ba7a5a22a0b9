// Model-output faults: over a thousand seeded bad replies across every Smurfs role (three-call and fused executors);
// no crash, no lost task, exact guardrail counts.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { rngFor } from "../../bench/eval/rng.ts"
import {
  BAD_KINDS,
  badReply,
  FUSED_ROLES,
  goodReply,
  kindsFor,
  NATIVE_KINDS,
  SMURFS_ROLES
} from "../../instruments/faults/bad-replies.ts"
import { formatModelOutputReport, runModelOutputFaults } from "../../instruments/faults/model-output.ts"
import { AnswerVerdict } from "../../src/agents/answer-verify.ts"
import { fusedJson } from "../../src/agents/executor-fused.ts"
import { argsSchema } from "../../src/agents/guardrails.ts"
import type { GenerateRequest } from "../../src/llm/language-model.ts"
import { jsonSchemaOf } from "../../src/llm/structured.ts"
import { demoLibrary } from "../../src/tools/demo/index.ts"

describe("model-output fault suite", () => {
  it("survives 1,000+ bad replies over every role: every task answered or a recorded give-up, guardrail counts add up", async () => {
    const report = await Effect.runPromise(runModelOutputFaults({ seed: 7, tasks: 100 }))
    console.log(formatModelOutputReport(report))
    expect(report.badReplies).toBeGreaterThanOrEqual(1000)
    for (const role of SMURFS_ROLES) expect(report.faultsByRole[role], role).toBeGreaterThan(0)
    for (const kind of BAD_KINDS) expect(report.faultsByKind[kind], kind).toBeGreaterThan(0)
    expect(report.crashes).toBe(0)
    expect(report.lost).toBe(0)
    expect(report.answered + report.gaveUp).toBe(report.tasks)
    expect(report.mismatches).toEqual([])
    // a megabyte reply, valid or not, never pushes a later prompt past the context window
    expect(report.maxPromptTokens).toBeLessThanOrEqual(report.contextTokens)
    // the same count three ways: what the generator sent, the guardrail events, the trajectories' totals
    const caught = Object.fromEntries(Object.entries(report.guardrails).map(([k, f]) => [k, f.caught]))
    expect(caught).toEqual(report.expected)
    expect(report.totals).toEqual(report.guardrails)
    for (const name of ["format", "schema", "unknown_tool", "missing_params", "param_rules", "extra_params"])
      expect(report.expected[name], name).toBeGreaterThan(0)
    // reflections are told apart from the user by their own role
    expect(report.reflections).toBeGreaterThan(500)
    expect(report.reflectionsInOtherRoles).toBe(0)
    // dropping undeclared arguments repairs the reply itself; the others recover only by a valid retry
    expect(report.guardrails["extra_params"]!.recovered).toBe(report.guardrails["extra_params"]!.caught)
    expect(report.guardrails["format"]!.recovered).toBeLessThan(report.guardrails["format"]!.caught)
  }, 300_000)

  it("when nearly every reply is bad, tasks end in recorded give-ups, none lost", async () => {
    const report = await Effect.runPromise(runModelOutputFaults({ seed: 5, tasks: 20, hugeChars: 1000, badRate: 0.97 }))
    expect(report.gaveUp).toBeGreaterThan(0)
    expect(report.crashes + report.lost).toBe(0)
    expect(report.answered + report.gaveUp).toBe(20)
    expect(report.mismatches).toEqual([])
  })

  it("is deterministic for a seed", async () => {
    const once = () => Effect.runPromise(runModelOutputFaults({ seed: 3, tasks: 6, hugeChars: 1000 }))
    const [a, b] = [await once(), await once()]
    expect(a.badReplies).toBeGreaterThan(0)
    expect(a.faultsByKind).toEqual(b.faultsByKind)
    expect(a.guardrails).toEqual(b.guardrails)
  })

  it("with the format guardrail off, a bad reply is not retried and the counts still add up", async () => {
    const report = await Effect.runPromise(
      runModelOutputFaults({ seed: 11, tasks: 20, hugeChars: 1000, guardrails: { format: false } })
    )
    expect(report.crashes + report.lost).toBe(0)
    expect(report.mismatches).toEqual([])
    expect(report.reflections).toBe(0)
    expect(report.guardrails["format"]!.recovered).toBe(0)
  })
})

describe("model-output fault suite, fused executor", () => {
  // both fused roles get bad replies; the planner and the final answers too, as with three calls
  const modes = [
    {
      toolCalling: "native",
      guardrails: [
        "no_tool_call",
        "tool_call_parse",
        "unknown_tool",
        "bad_args",
        "missing_params",
        "param_rules",
        "extra_params",
        "format"
      ]
    },
    {
      toolCalling: "json",
      guardrails: ["format", "schema", "repair", "unknown_tool", "missing_params", "param_rules", "extra_params"]
    }
  ] as const

  for (const mode of modes)
    it(`survives hundreds of bad replies with ${mode.toolCalling} tool calls: every kind of each fused role, exact guardrail counts`, async () => {
      const report = await Effect.runPromise(
        runModelOutputFaults({ seed: 7, tasks: 60, executor: "fused", toolCalling: mode.toolCalling })
      )
      console.log(formatModelOutputReport(report))
      expect(report.badReplies).toBeGreaterThanOrEqual(300)
      const native = mode.toolCalling === "native"
      for (const role of ["executor.fused", "answerer.verify"])
        for (const kind of kindsFor(role, role === "executor.fused" && native))
          expect(report.faultsByRoleKind[`${role}/${kind}`], `${role}/${kind}`).toBeGreaterThan(0)
      // no request of a three-call role is made
      expect(Object.keys(report.faultsByRole).every((r) => (FUSED_ROLES as ReadonlyArray<string>).includes(r))).toBe(
        true
      )
      expect(report.crashes).toBe(0)
      expect(report.lost).toBe(0)
      expect(report.answered + report.gaveUp).toBe(report.tasks)
      expect(report.mismatches).toEqual([])
      expect(report.maxPromptTokens).toBeLessThanOrEqual(report.contextTokens)
      // the same count three ways
      const caught = Object.fromEntries(Object.entries(report.guardrails).map(([k, f]) => [k, f.caught]))
      expect(caught).toEqual(report.expected)
      expect(report.totals).toEqual(report.guardrails)
      for (const name of mode.guardrails) expect(report.expected[name], name).toBeGreaterThan(0)
      expect(report.reflections).toBeGreaterThan(100)
      expect(report.reflectionsInOtherRoles).toBe(0)
      expect(report.guardrails["extra_params"]!.recovered).toBe(report.guardrails["extra_params"]!.caught)
      // with native calls, some steps reached the JSON fallback (three parse errors in a row), and matched too
      if (native) expect(report.fusedJsonRequests).toBeGreaterThan(0)
    }, 120_000)

  it("is deterministic for a seed, in both modes", async () => {
    for (const toolCalling of ["native", "json"] as const) {
      const once = () =>
        Effect.runPromise(runModelOutputFaults({ seed: 3, tasks: 8, hugeChars: 1000, executor: "fused", toolCalling }))
      const [a, b] = [await once(), await once()]
      expect(a.badReplies).toBeGreaterThan(0)
      expect(a.faultsByRoleKind).toEqual(b.faultsByRoleKind)
      expect(a.guardrails).toEqual(b.guardrails)
      expect(a.byKind).toEqual(b.byKind)
    }
  })

  it("when nearly every reply is bad, tasks end answered or in recorded give-ups, none lost", async () => {
    for (const toolCalling of ["native", "json"] as const) {
      const report = await Effect.runPromise(
        runModelOutputFaults({ seed: 5, tasks: 20, hugeChars: 1000, badRate: 0.97, executor: "fused", toolCalling })
      )
      expect(report.crashes + report.lost).toBe(0)
      expect(report.answered + report.gaveUp).toBe(20)
      expect(report.mismatches).toEqual([])
    }
  })
})

describe("bad reply generator", () => {
  const calculator = demoLibrary().tools.find((t) => t.name === "calculator")!
  const requests = {
    planner: { role: "planner", messages: [{ role: "user" as const, content: "Question: What is 2+2?" }] },
    choose: {
      role: "executor.choose",
      messages: [],
      format: {
        type: "object",
        properties: { tool: { type: "string", enum: ["calculator", "lookup_fact"] } },
        required: ["tool"]
      }
    },
    args: { role: "executor.args", messages: [], format: jsonSchemaOf(argsSchema(calculator)) }
  }
  // the fused executor's requests offer the calculator only: its native tool, or its function in the JSON request's values
  const functions = [
    { name: calculator.name, description: calculator.description, parameters: jsonSchemaOf(argsSchema(calculator)) }
  ]
  const fused: Record<"native" | "json" | "verify", GenerateRequest> = {
    native: { role: "executor.fused", messages: [], tools: functions },
    json: {
      role: "executor.fused",
      messages: [{ role: "user", content: "", values: { functions } }],
      format: jsonSchemaOf(fusedJson(["calculator"]))
    },
    verify: { role: "answerer.verify", messages: [] }
  }

  it("gives valid replies for a request's schema", () => {
    const rng = rngFor(1, "good")
    expect(goodReply(requests.planner, rng)).toMatchObject({ subtasks: [expect.stringContaining("What is 2+2?")] })
    expect(["calculator", "lookup_fact"]).toContain(goodReply(requests.choose, rng)["tool"])
    expect(calculator.parameters.safeParse(goodReply(requests.args, rng)).success).toBe(true)
    const native = goodReply(fused.native, rng) as { toolCalls: Array<{ name: string; arguments: unknown }> }
    expect(native.toolCalls[0]!.name).toBe("calculator")
    expect(calculator.parameters.safeParse(native.toolCalls[0]!.arguments).success).toBe(true)
    const json = fusedJson(["calculator"]).parse(goodReply(fused.json, rng))
    expect(calculator.parameters.safeParse(json.arguments).success).toBe(true)
    expect(AnswerVerdict.safeParse(goodReply(fused.verify, rng)).success).toBe(true)
  })

  it("classifies the fused executor's bad replies by the guardrail of actFused that must catch them", () => {
    const rng = rngFor(1, "fused")
    expect(kindsFor("executor.fused", true)).toEqual(expect.arrayContaining([...NATIVE_KINDS]))
    expect(kindsFor("executor.fused", false)).not.toContain("unparseable_args")
    // native: a reply without a call, however it reads, is no_tool_call; the arguments have their guardrails
    for (const kind of ["random_text", "empty", "huge", "call_as_text"] as const) {
      const bad = badReply(fused.native, kind, rng, { badRate: 1, hugeChars: 100 })
      expect(typeof bad.reply, kind).toBe("string")
      expect(bad.guardrail, kind).toBe("no_tool_call")
    }
    expect(badReply(fused.native, "unparseable_args", rng)).toMatchObject({
      reply: { toolCalls: [{ name: "calculator", arguments: {}, argumentsError: expect.any(String) }] },
      guardrail: "bad_args"
    })
    expect(badReply(fused.native, "wrong_arg_types", rng)).toMatchObject({
      reply: { toolCalls: [{ arguments: { expression: 12345 } }] },
      guardrail: "param_rules"
    })
    expect(badReply(fused.native, "missing_args", rng)).toMatchObject({
      reply: { toolCalls: [{ arguments: {} }] },
      guardrail: "missing_params"
    })
    expect(badReply(fused.native, "extra_keys", rng).guardrail).toBe("extra_params")
    expect(badReply(fused.native, "huge_valid", rng).guardrail).toBeUndefined()
    expect(badReply(fused.native, "unparsed_call", rng).guardrail).toBe("tool_call_parse")
    // JSON: the reply's shape first, then the call's checks
    expect(badReply(fused.json, "wrong_types", rng).guardrail).toBe("schema")
    expect(badReply(fused.json, "missing_keys", rng).guardrail).toBe("schema")
    expect(badReply(fused.json, "unknown_tool", rng)).toMatchObject({
      reply: { thought: expect.any(String), arguments: expect.any(Object) },
      guardrail: "unknown_tool"
    })
    expect(badReply(fused.json, "wrong_arg_types", rng)).toMatchObject({
      reply: { tool: "calculator", arguments: { expression: 12345 } },
      guardrail: "param_rules"
    })
    expect(badReply(fused.json, "extra_keys", rng)).toMatchObject({
      reply: { arguments: { unexpected_key: "surprise" } },
      guardrail: "extra_params"
    })
    // answer+verdict: extra keys are tolerated, a verdict-less answer is a schema error
    expect(badReply(fused.verify, "extra_keys", rng).guardrail).toBeUndefined()
    expect(badReply(fused.verify, "missing_keys", rng)).toMatchObject({
      reply: { answer: expect.any(String) },
      guardrail: "schema"
    })
  })

  it("classifies each bad reply by the guardrail that must catch it", () => {
    const rng = rngFor(1, "bad")
    expect(badReply(requests.args, "missing_keys", rng).guardrail).toBe("missing_params")
    expect(badReply(requests.args, "wrong_types", rng)).toMatchObject({
      reply: { expression: 12345 },
      guardrail: "param_rules"
    })
    expect(badReply(requests.planner, "wrong_types", rng)).toMatchObject({
      reply: { subtasks: "not a list" },
      guardrail: "schema"
    })
    expect(badReply(requests.planner, "extra_keys", rng).guardrail).toBeUndefined()
    expect(badReply(requests.choose, "unknown_tool", rng).guardrail).toBe("unknown_tool")
    const huge = badReply(requests.planner, "huge", rng).reply as string
    expect(huge.length).toBe(1_000_000)
    for (let i = 0; i < 50; i++) {
      const cut = badReply(requests.args, "truncated_json", rng).reply as string
      expect(() => JSON.parse(cut)).toThrow()
    }
  })
})
