import { describe, expect, it } from "vitest"
import { z } from "zod"
import { Verdict } from "../agents/verifier.ts"
import { jsonSchemaOf } from "../llm/structured.ts"
import { jsonShape } from "./json-shape.ts"
import { loadTemplate, renderTemplate } from "./prompt-template.ts"

describe("jsonShape", () => {
  it("shows a schema's fields in order: example wording, else the enum's options, else a value of the type", () => {
    const schema = z.object({
      status: z.enum(["solved", "pending"]),
      reason: z.string(),
      hint: z.string().nullish(),
      ok: z.boolean(),
      n: z.number(),
      tools: z.array(z.string())
    })
    expect(jsonShape(jsonSchemaOf(schema), { reason: "why", hint: "next step", tools: "best | next" })).toBe(
      '{"status": "solved" or "pending", "reason": "why", "hint": "next step", "ok": true, "n": 0, "tools": ["best", "next"]}'
    )
  })

  it("follows the schema: a new field or option shows in the prompt, an example for a field the schema lacks is an error", () => {
    const verifier = loadTemplate("verifier")
    const wider = Verdict.extend({ status: z.enum(["solved", "pending", "impossible"]), confidence: z.number() })
    expect(jsonShape(jsonSchemaOf(wider), verifier.examples)).toContain(
      '"status": "solved" or "pending" or "impossible"'
    )
    expect(jsonShape(jsonSchemaOf(wider), verifier.examples)).toContain('"confidence": 0}')
    expect(() => jsonShape(jsonSchemaOf(z.object({ answer: z.string() })), verifier.examples)).toThrow(
      /names hint, which/
    )
  })

  it("renders the verifier's prompt shape from its schema and the template's wording", () => {
    const prompt = renderTemplate("verifier", {
      subtask: "s",
      answer: "a",
      format: jsonShape(jsonSchemaOf(Verdict), loadTemplate("verifier").examples)
    })
    expect(prompt.user).toContain(
      '{"status": "solved" or "pending", "hint": "what is missing and the next step, when pending"}'
    )
    expect(prompt.user).not.toContain("---examples---")
  })
})
