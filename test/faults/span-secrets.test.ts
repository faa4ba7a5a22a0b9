import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { otlpLayer } from "../../src/trace/otlp.ts"
import { type FakeOtlp, startFakeOtlp } from "../fake-servers/otlp.ts"

const KEY = "sk-proj-QWERTYuiop1234ASDFghjk"

let collector: FakeOtlp
beforeAll(async () => {
  collector = await startFakeOtlp()
})
afterAll(() => collector.close())

class Echoed extends Data.TaggedError("Echoed")<{ readonly reply: string }> {
  override get message() {
    return `the reply was not valid JSON (${this.reply})`
  }
}

describe("spans exported over OTLP", () => {
  it("carry no key in attributes, status or exception events", async () => {
    const failing = Effect.fail(new Echoed({ reply: `echo: Authorization: Bearer ${KEY}` })).pipe(
      Effect.withSpan("LanguageModel.generate", { attributes: { "request.header": `Bearer ${KEY}` } }),
      Effect.ignore
    )
    await Effect.runPromise(
      failing.pipe(Effect.provide(otlpLayer({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint }, () => undefined)))
    )
    const exported = collector.requests.map((q) => q.body).join("\n")
    expect(exported).toContain("LanguageModel.generate")
    expect(exported).toContain("exception")
    expect(exported).toContain("[REDACTED]")
    expect(exported).not.toContain("QWERTYuiop")
  })
})
