import { Effect, Layer, References, Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { otlpLayer } from "./otlp.ts"
import { untracedLayer, withoutUnexportedSpans } from "./unexported-spans.ts"

/** Whether spans are recorded where `effect` runs, and the name the current span goes by. */
const inSpan = Effect.service(References.TracerEnabled).pipe(
  Effect.flatMap((enabled) => Effect.map(Effect.currentSpan, (span) => ({ enabled, name: span.name }))),
  Effect.withSpan("Test.span")
)

describe("unexported spans", () => {
  it("are not recorded without an exporter; a span still goes by its name", async () => {
    expect(await Effect.runPromise(withoutUnexportedSpans(inSpan))).toEqual({ enabled: false, name: "Test.span" })
    expect(await Effect.runPromise(Effect.provide(inSpan, untracedLayer))).toEqual({
      enabled: false,
      name: "Test.span"
    })
    // a command with no OTLP endpoint, or with export switched off, records none either
    for (const env of [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" }])
      expect(await Effect.runPromise(Effect.provide(inSpan, otlpLayer(env)))).toMatchObject({ enabled: false })
  })

  it("are recorded when a tracer of someone's own is in place", async () => {
    const names: Array<string> = []
    const tracer = Tracer.make({
      span: (options) => {
        names.push(options.name)
        return Tracer.nativeTracer.span(options)
      }
    })
    const traced = withoutUnexportedSpans(inSpan).pipe(Effect.provide(Layer.succeed(Tracer.Tracer, tracer)))
    expect(await Effect.runPromise(traced)).toEqual({ enabled: true, name: "Test.span" })
    expect(names).toEqual(["Test.span"])
  })
})
