// Model-output faults: over a thousand seeded bad replies across every Smurfs role; no crash, no lost task, exact guardrail counts.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { rngFor } from "../../bench/eval/rng.ts"
import { BAD_KINDS, badReply, goodReply, SMURFS_ROLES } from "../../bench/faults/bad-replies.ts"
import { formatModelOutputReport, runModelOutputFaults } from "../../bench/faults/model-output.ts"
import { argsSchema } from "../../src/agents/guardrails.ts"
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

  it("gives valid replies for a request's schema", () => {
    const rng = rngFor(1, "good")
    expect(goodReply(requests.planner, rng)).toMatchObject({ subtasks: [expect.stringContaining("What is 2+2?")] })
    expect(["calculator", "lookup_fact"]).toContain(goodReply(requests.choose, rng)["tool"])
    expect(calculator.parameters.safeParse(goodReply(requests.args, rng)).success).toBe(true)
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
