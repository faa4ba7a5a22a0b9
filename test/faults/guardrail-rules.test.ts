// The static-rule guardrail reads every rule kind of a tool's schema (enum, min/max, length, pattern) before the call.
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { checkArgs } from "../../src/agents/guardrails.ts"
import { guardrailDefaults } from "../../src/agents/smurfs-options.ts"
import { makeTool } from "../pipeline-fixtures.ts"

const tool = makeTool(
  "book_flight",
  z.object({
    cabin: z.enum(["economy", "business"]),
    seats: z.number().int().min(1).max(9),
    code: z.string().length(3),
    date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    note: z.string().max(10).optional()
  }),
  () => ({ ok: true, content: "booked" })
)
const valid = { cabin: "economy", seats: 2, code: "LHR", date: "2026-01-31" }

describe("static rules guardrail", () => {
  it("accepts arguments within the rules", () => {
    expect(checkArgs(tool, valid, guardrailDefaults, "")).toBeUndefined()
  })

  it.each([
    ["enum", { cabin: "first" }, /cabin/],
    ["minimum", { seats: 0 }, /seats/],
    ["maximum", { seats: 12 }, /seats/],
    ["integer", { seats: 1.5 }, /seats/],
    ["exact length", { code: "LONDON" }, /code/],
    ["pattern", { date: "31/01/2026" }, /date/],
    ["max length of an optional field", { note: "far too long a note" }, /note/],
    ["type", { seats: "two" }, /seats/]
  ])("names the broken rule: %s", (_rule, change, field) => {
    const problem = checkArgs(tool, { ...valid, ...change }, guardrailDefaults, "")
    expect(problem?.guardrail).toBe("param_rules")
    expect(problem?.error).toMatch(field)
    expect(problem?.error).toContain('the tool "book_flight"')
  })

  it("a missing required parameter is its own guardrail, and switching rules off lets a violation through", () => {
    const { seats: _dropped, ...missing } = valid
    expect(checkArgs(tool, missing, guardrailDefaults, "")?.guardrail).toBe("missing_params")
    expect(checkArgs(tool, { ...valid, seats: 99 }, { ...guardrailDefaults, paramRules: false }, "")).toBeUndefined()
  })

  it("undeclared parameters are not a rule problem (they are dropped)", () => {
    expect(checkArgs(tool, { ...valid, loyalty: "gold" }, guardrailDefaults, "")).toBeUndefined()
  })
})
