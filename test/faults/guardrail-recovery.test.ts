// Recovery is measurable: each rejected reply is one guardrail event that says whether a later attempt of its call was valid.
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { formatEvent } from "../../src/cli/live-view.ts"
import { ModelServerError } from "../../src/llm/errors.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { makeScriptedModel, type ScriptedReply } from "../../src/llm/scripted.ts"
import { generateObject } from "../../src/llm/structured.ts"
import { isKind, kindOf } from "../../src/trace/events.ts"
import { recording, totalsOf } from "../../src/trace/trajectory.ts"

const Answer = z.object({ answer: z.string() })

/** Run one generateObject against replies (an Error entry makes the server fail that call). */
const run = async (replies: ReadonlyArray<ScriptedReply | Error>) => {
  const scripted = makeScriptedModel([...replies.map((r) => (r instanceof Error ? "" : r))])
  let call = 0
  const model = LanguageModel.of({
    info: scripted.info,
    generate: (request) => {
      const entry = replies[call++]
      return entry instanceof Error
        ? Effect.fail(new ModelServerError({ host: "test", detail: entry.message }))
        : scripted.generate(request)
    }
  })
  const program = Effect.result(
    generateObject({ role: "answerer.final", schema: Answer, messages: [{ role: "user", content: "q" }] })
  )
  const { value, events } = await Effect.runPromise(
    recording("t", program).pipe(Effect.provide(Layer.succeed(LanguageModel, model)))
  )
  const guardrails = events.filter((e) => isKind(e, "guardrail"))
  return {
    value,
    events,
    guardrails: guardrails.map((e) => e.data),
    totals: totalsOf(events, 0),
    lines: guardrails.flatMap((e) => formatEvent(e))
  }
}

describe("guardrail recovery", () => {
  it("marks every rejected reply of a call that ends valid as recovered", async () => {
    const r = await run(["not json", { answer: 7 }, { answer: "ok" }])
    expect(r.value._tag).toBe("Success")
    expect(r.guardrails).toEqual([
      expect.objectContaining({ guardrail: "format", attempt: 1, recovered: true }),
      expect.objectContaining({ guardrail: "schema", attempt: 2, recovered: true })
    ])
    expect(r.totals.guardrails).toEqual({ format: 1, schema: 1 })
    expect(r.totals.guardrailsRecovered).toEqual({ format: 1, schema: 1 })
    expect(r.lines[0]).toMatch(/\(recovered\)$/)
  })

  it("marks them not recovered when the retries run out", async () => {
    const r = await run(["", "nope", { wrong: 1 }])
    expect(r.value._tag).toBe("Failure")
    expect(r.guardrails.map((g) => [g["guardrail"], g["recovered"]])).toEqual([
      ["format", false],
      ["format", false],
      ["schema", false]
    ])
    expect(r.totals.guardrailsRecovered).toEqual({})
    expect(r.lines[2]).toMatch(/\(not recovered\)$/)
  })

  it("still records a rejected reply when the call then fails on the server", async () => {
    const r = await run(["not json", new Error("HTTP 500")])
    expect(r.value._tag).toBe("Failure")
    expect(r.guardrails).toEqual([expect.objectContaining({ guardrail: "format", recovered: false })])
  })

  it("traces the events once the call ends, after the model calls they judge", async () => {
    const r = await run(["not json", { answer: "ok" }])
    const kinds = r.events.map((e) => kindOf(e))
    expect(kinds).toEqual(["model_call", "model_call", "guardrail"])
  })
})
