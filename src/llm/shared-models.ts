// Models shared by the calls of one process that name the same spec and settings (`solve`): one built model, so one
// limit of requests in flight per server, as if one client made every call.
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Hash from "effect/Hash"
import * as Layer from "effect/Layer"
import * as RcMap from "effect/RcMap"
import * as Scope from "effect/Scope"
import { canonicalJson } from "./cache.ts"
import type { InvalidModelSpec } from "./errors.ts"
import type { LanguageModel } from "./language-model.ts"
import type { ModelOptions } from "./model-options.ts"
import { modelLayer, parseModelSpec } from "./spec.ts"

/** How long a shared model outlives the last call that used it: a call that follows at once finds it built. */
export const SHARED_MODEL_IDLE_MS = 1000

/** A spec and its options, equal to another when the spec and the settings it is built from are. */
class ModelKey implements Equal.Equal {
  readonly id: string
  readonly spec: string
  readonly options: ModelOptions
  constructor(id: string, spec: string, options: ModelOptions) {
    this.id = id
    this.spec = spec
    this.options = options
  }
  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof ModelKey && that.id === this.id
  }
  [Hash.symbol](): number {
    return Hash.string(this.id)
  }
}

/**
 * The clock of the timer that releases an idle model: its timer does not keep the process alive, so a program
 * that has finished its calls exits at once (the model's connections are kept-alive sockets Node does not wait for).
 */
const idleClock: Clock.Clock = (() => {
  const clock = Clock.Clock.defaultValue()
  return {
    currentTimeMillisUnsafe: () => clock.currentTimeMillisUnsafe(),
    currentTimeMillis: clock.currentTimeMillis,
    currentTimeNanosUnsafe: () => clock.currentTimeNanosUnsafe(),
    currentTimeNanos: clock.currentTimeNanos,
    monotonicTimeNanosUnsafe: () => clock.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: clock.monotonicTimeNanos,
    sleep: (duration) =>
      Effect.callback<void>((resume) => {
        const timer = setTimeout(() => resume(Effect.void), Math.max(0, Math.ceil(Duration.toMillis(duration))))
        timer.unref()
        return Effect.sync(() => clearTimeout(timer))
      })
  }
})()

/**
 * The models in use, for the whole process: `solve` is a Promise API with no context to hold them in, and the
 * point is that calls which know nothing of each other share their server's limit. Made at the first shared call.
 */
let models: RcMap.RcMap<ModelKey, Context.Context<LanguageModel>, InvalidModelSpec> | undefined
const modelsOf = () => {
  models ??= Effect.runSync(
    RcMap.make({
      lookup: (key: ModelKey) => Layer.build(modelLayer(key.spec, key.options)),
      idleTimeToLive: SHARED_MODEL_IDLE_MS
    }).pipe(Effect.provideService(Scope.Scope, Scope.makeUnsafe()))
  )
  return models
}

/**
 * The key of a spec's model when its provider lets calls share one (`settingsKey`), else undefined. An
 * invalid spec fails here, before anything is kept.
 */
const keyOf = (spec: string, options: ModelOptions): Effect.Effect<ModelKey | undefined, InvalidModelSpec> =>
  Effect.map(parseModelSpec(spec), (parsed) => {
    const settings = parsed.registered.settingsKey?.(parsed.rest, options)
    return settings === undefined
      ? undefined
      : new ModelKey(canonicalJson([spec.trim(), options, settings]), spec.trim(), options)
  })

/**
 * `use` with the model of `spec` in context. Calls at the same time with the same spec and settings (the
 * environment applied) share one built model: one limit of requests in flight per server, one client, one
 * check of the model's tools. The first call builds it; it is released SHARED_MODEL_IDLE_MS after the last one ends. An
 * interrupted call gives its share back and leaves the model to the others; a build that failed is not kept.
 * A provider whose model holds a run's own state (a script's position) has no `settingsKey`: each call builds its own.
 */
export const withSharedModel = <A, E, R>(
  spec: string,
  options: ModelOptions,
  use: Effect.Effect<A, E, R>
): Effect.Effect<A, E | InvalidModelSpec, Exclude<R, LanguageModel>> =>
  Effect.flatMap(keyOf(spec, options), (key) => {
    if (key === undefined) return Effect.provide(use, modelLayer(spec, options))
    const map = modelsOf()
    return Effect.acquireUseRelease(
      Scope.make(),
      (borrow) =>
        RcMap.get(map, key).pipe(
          Scope.provide(borrow),
          // a failed build is dropped at once, so that the next call builds again (and fails again: a build
          // fails only on input that is wrong, with InvalidModelSpec, never because the server is down)
          Effect.tapError(() => RcMap.invalidate(map, key)),
          Effect.flatMap((context) => Effect.provideContext(use, context))
        ),
      (borrow, exit) => Scope.close(borrow, exit).pipe(Effect.provideService(Clock.Clock, idleClock))
    )
  })

/** How many shared models are built now (tests: they are released once idle). */
export const sharedModelCount = (): number =>
  models === undefined ? 0 : Effect.runSync(Effect.map(RcMap.keys(models), (keys) => [...keys].length))
