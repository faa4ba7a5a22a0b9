// A seed per attempt: the same prompt sent again never carries the seed of an earlier send; base null sends none.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describe, expect, it } from "vitest"
import { attemptSeedsLayer, makeSendCounts } from "./attempt-seeds.ts"
import { type GenerateRequest, LanguageModel } from "./language-model.ts"

/** The seeds the layer below received, in order, for these requests. */
const seedsSent = (base: number | null, requests: ReadonlyArray<GenerateRequest>) => {
  const seen: Array<number | null | undefined> = []
  const recording = Layer.succeed(
    LanguageModel,
    LanguageModel.of({
      info: { spec: "rec", provider: "rec", model: "rec", contextTokens: 4096, supportsTools: true },
      generate: (request) =>
        Effect.sync(() => {
          seen.push(request.options?.seed)
          return { text: "ok", usage: { promptTokens: 1, completionTokens: 1 }, model: "rec", durationMs: 0 }
        })
    })
  )
  const program = Effect.gen(function* () {
    const model = yield* LanguageModel
    for (const r of requests) yield* model.generate(r)
  })
  Effect.runSync(program.pipe(Effect.provide(Layer.provide(attemptSeedsLayer({ base }), recording))))
  return seen
}

const ask = (content: string, seed?: number): GenerateRequest => ({
  role: "planner",
  messages: [{ role: "user", content }],
  ...(seed === undefined ? {} : { options: { seed } })
})

describe("attempt seeds", () => {
  it("each send of the same prompt gets the next seed; another prompt starts at the base", () => {
    expect(seedsSent(42, [ask("plan"), ask("plan"), ask("other"), ask("plan")])).toEqual([42, 43, 42, 44])
  })

  it("base null sends no seed, however often the prompt is resent", () => {
    expect(seedsSent(null, [ask("plan"), ask("plan")])).toEqual([null, null])
  })

  it("a request's own seed is its first attempt's", () => {
    expect(seedsSent(null, [ask("judge", 7), ask("judge", 7)])).toEqual([7, 8])
  })

  it("a resend with another output limit is still the same prompt (the reference agents' rest of the window moves)", () => {
    const limited = (maxTokens: number): GenerateRequest => ({ ...ask("plan"), options: { maxTokens } })
    expect(seedsSent(5, [limited(8087), limited(8086), limited(8086)])).toEqual([5, 6, 7])
  })

  it("remembers the most recently sent prompts: past the bound the least recently sent is forgotten and starts again", () => {
    const counts = makeSendCounts(2)
    expect([counts.next("a"), counts.next("b"), counts.next("a"), counts.next("c")]).toEqual([0, 0, 1, 0])
    // "b" was the least recently sent when "c" came: forgotten; "a" was kept
    expect([counts.next("a"), counts.next("b")]).toEqual([2, 0])
  })
})
