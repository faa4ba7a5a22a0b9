// Spans that no exporter would read are not recorded: Effect's own tracer keeps them for nobody otherwise.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"

/**
 * No spans at all, where none would be exported: Effect's own tracer keeps each span (its clock reads,
 * attributes and a context of its own) for nobody to read, which cost about a tenth of the CPU of a model
 * call. Spans still name themselves (`Effect.currentSpan`) and take annotations; they are not recorded.
 */
export const untracedLayer = Layer.succeed(References.TracerEnabled, false)

/**
 * `effect` without recorded spans unless a tracer of someone's own is in place (a layer the caller gave
 * may bring one): for a program with no exporter, such as `solve`'s own runtime.
 */
export const withoutUnexportedSpans = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.service(Tracer.Tracer), (tracer) =>
    tracer === Tracer.nativeTracer ? Effect.withTracerEnabled(effect, false) : effect
  )
