// The simulated final answerer condenses what it reads (issue 33): a raw tool response given as a subtask's answer
// (a short response is the step's answer as it is) is written as the step answerer writes it, never copied whole.
import { describe, expect, it } from "vitest"
import type { GenerateRequest } from "../../src/llm/language-model.ts"
import { decide, digest } from "./policy.ts"

const finalRequest = (answers: ReadonlyArray<string>): GenerateRequest => ({
  role: "answerer.final",
  messages: [{ role: "user", content: "Answer agent, final.", values: { answers } }],
  format: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }
})

const answerOf = (request: GenerateRequest): string => {
  const intent = decide(request, undefined, undefined, () => 0.5)
  if (intent.kind !== "object") throw new Error(`expected an object reply, got ${intent.kind}`)
  return (intent.value as { answer: string }).answer
}

describe("the simulated final answer", () => {
  it("condenses a raw response to the step answerer's digest and keeps a written answer as it is", () => {
    const raw = JSON.stringify({ error: "", response: { items: Array.from({ length: 80 }, (_, i) => `item ${i}`) } })
    const written = "The tool returned: Paris is 1,234 km away."
    const answer = answerOf(finalRequest([raw, written]))
    expect(answer).toBe(`Here is what I found: ${digest(raw)} ${written}`)
    // the raw response (over 600 characters) is not copied whole
    expect(raw.length).toBeGreaterThan(600)
    expect(answer.length).toBeLessThan(raw.length)
  })
})
