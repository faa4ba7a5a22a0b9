import { Cause, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { type GenerateRequest, LanguageModel } from "../../src/llm/language-model.ts"
import { scriptedLayer } from "../../src/llm/scripted.ts"
import { type JudgeInput, judgeInputFromRecord } from "./judge-input.ts"
import { fitJudgeValues, JUDGE_REPLY_TOKENS, judgePass, ruleLabel } from "./pass-rate.ts"
import { fakeRecord } from "./test-fixtures.ts"

const input = (over: Partial<Parameters<typeof fakeRecord>[0]> = {}): JudgeInput =>
  judgeInputFromRecord(
    fakeRecord({
      taskId: "7",
      query: "What is the weather in Paris?",
      finalAnswer: "It is 18 C and sunny in Paris.",
      calls: [
        { tool: "weather_for_meteo", ok: true, content: '{"temp": 18, "sky": "sunny"}', args: { city: "Paris" } },
        { tool: "forecast_for_meteo", ok: false, content: "" }
      ],
      ...over
    })
  )

/** Run the judge on a script; every request the judge makes is recorded. */
const judgeWith = (script: Record<string, ReadonlyArray<unknown>>, judged: JudgeInput) => {
  const seen: Array<GenerateRequest> = []
  const recorded = Object.fromEntries(
    Object.entries(script).map(([role, replies]) => [
      role,
      replies.map((reply) => (request: GenerateRequest) => (seen.push(request), reply as object))
    ])
  )
  return Effect.runPromise(judgePass(judged).pipe(Effect.provide(scriptedLayer(recorded)))).then((label) => ({
    label,
    seen
  }))
}

describe("ruleLabel (ToolEval's Unsolved without a judge)", () => {
  it("labels a run that did not end with a Finish/give_answer Unsolved", () => {
    expect(ruleLabel(input({ finishType: "give_up" }))).toMatchObject({ label: "Unsolved", stage: "rule" })
  })
  it("labels an empty or blank final answer Unsolved", () => {
    expect(ruleLabel(input({ finalAnswer: "" }))?.label).toBe("Unsolved")
    // ToolEval compares the converted final_answer (the Finish arguments) with "" exactly
    expect(ruleLabel({ ...input(), answer: { ...input().answer, final_answer: "" } })?.label).toBe("Unsolved")
  })
  it("labels a give_up_and_restart answer Unsolved", () => {
    expect(ruleLabel(input({ finalAnswer: "give_up_and_restart" }))?.label).toBe("Unsolved")
  })
  it("leaves a finished, non-empty answer to the judge", () => {
    expect(ruleLabel(input())).toBeUndefined()
  })
  it("makes no model call for a rule label", async () => {
    // An empty script fails on any call, so success proves no call was made.
    const { label, seen } = await judgeWith({}, input({ finishType: "give_up" }))
    expect(label.label).toBe("Unsolved")
    expect(seen).toHaveLength(0)
  })
})

describe("judgePass (two steps)", () => {
  it("stops after the answer-only check when it is decisive", async () => {
    const { label, seen } = await judgeWith(
      { "judge.check_answer_status": [{ answer_status: "Solved", reason: "complete" }] },
      input()
    )
    expect(label).toEqual({ label: "Solved", reason: "complete", stage: "answer" })
    expect(seen).toHaveLength(1)
  })

  it("on Unsure shows the trajectory in a second call, and only there", async () => {
    const { label, seen } = await judgeWith(
      {
        "judge.check_answer_status": [{ answer_status: "Unsure", reason: "cannot tell" }],
        "judge.parse_answer_status": [{ answer_status: "Solved", reason: "the numbers match the tool output" }]
      },
      input()
    )
    expect(label).toEqual({ label: "Solved", reason: "the numbers match the tool output", stage: "trajectory" })
    expect(seen.map((r) => r.role)).toEqual(["judge.check_answer_status", "judge.parse_answer_status"])
    const text = (r: GenerateRequest) => r.messages.map((m) => m.content).join("\n")
    // as ToolEval: one user message per call; the first sees the converted final_answer, the second json.dumps of the whole answer
    for (const r of seen) {
      expect(r.messages.map((m) => m.role)).toEqual(["user"])
      expect(text(r)).toContain("What is the weather in Paris?")
      expect(r.options?.temperature).toBe(0.2)
    }
    expect(text(seen[0]!)).toContain(input().answer.final_answer)
    expect(text(seen[0]!)).not.toContain("weather_for_meteo")
    expect(text(seen[1]!)).toContain('"answer_details": [{"role": "system", "message": "", "next": [{"role": "user"')
    expect(text(seen[1]!)).toContain('"name": "weather_for_meteo"')
    expect(text(seen[1]!)).toContain('\\"temp\\": 18')
    expect(text(seen[1]!)).toContain("forecast_for_meteo")
    expect(text(seen[1]!)).not.toContain("modelCalls")
  })

  it("keeps a second Unsure (cannot be verified)", async () => {
    const { label } = await judgeWith(
      {
        "judge.check_answer_status": [{ answer_status: "Unsure", reason: "?" }],
        "judge.parse_answer_status": [{ answer_status: "Unsure", reason: "not verifiable" }]
      },
      input()
    )
    expect(label).toMatchObject({ label: "Unsure", stage: "trajectory" })
  })
})

describe("judge prompts that do not fit the judge's context", () => {
  const render = (v: Readonly<Record<string, string>>) => `Judge this.\nQuery: ${v["query"]}\nAnswer: ${v["answer"]}`

  it("are fitted: the answer is cut first, with a note saying so, and the result fits", () => {
    const fitted = fitJudgeValues(render, { query: "Q".repeat(300), answer: "A".repeat(20_000) }, 4096)!
    expect(render(fitted.values).length).toBeLessThanOrEqual((4096 - JUDGE_REPLY_TOKENS) * 3)
    expect(fitted.values["query"]).toBe("Q".repeat(300))
    expect(fitted.values["answer"]).toMatch(
      /^A+\n\[\.\.\. \d+ characters cut here to fit the judge's context of 4096 tokens\]$/
    )
    expect(fitted.cut).toBeGreaterThan(10_000)
    // a prompt that fits is left alone
    expect(fitJudgeValues(render, { query: "q", answer: "a" }, 4096)).toEqual({
      values: { query: "q", answer: "a" },
      cut: 0
    })
  })

  it("are refused with ContextOverflow when even the cut prompt cannot fit, before any request", async () => {
    const requests: Array<unknown> = []
    const tiny = Layer.succeed(
      LanguageModel,
      LanguageModel.of({
        info: { spec: "test:tiny", provider: "test", model: "tiny", contextTokens: 1100, supportsTools: false },
        generate: (r) =>
          Effect.sync(
            () => (
              requests.push(r),
              { text: "{}", usage: { promptTokens: 1, completionTokens: 1 }, model: "tiny", durationMs: 1 }
            )
          )
      })
    )
    const input = judgeInputFromRecord(fakeRecord({ taskId: "1", finalAnswer: "B".repeat(5000) }))
    const exit = await Effect.runPromiseExit(judgePass(input).pipe(Effect.provide(tiny)))
    expect(exit._tag).toBe("Failure")
    expect(String(Cause.squash((exit as { cause: Cause.Cause<unknown> }).cause))).toMatch(
      /judge\.check_answer_status prompt needs about \d+ tokens but the context window is 1100\. Raise --num-ctx/
    )
    expect(requests).toHaveLength(0)
  })
})
