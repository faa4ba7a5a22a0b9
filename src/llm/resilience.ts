// Wraps a model with what a shared local server needs: bounded concurrency, a timeout, retries of overload only.
import type * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import * as Schedule from "effect/Schedule"
import * as Semaphore from "effect/Semaphore"
import { emit } from "../trace/events.ts"
import { redactText } from "../trace/redact.ts"
import { Overloaded, type ProviderError, Timeout } from "./errors.ts"
import type { GenerateRequest, LanguageModelShape } from "./language-model.ts"

export interface ResilienceOptions {
  /** Requests in flight at once against the endpoint; match the server's parallelism (OLLAMA_NUM_PARALLEL). */
  readonly concurrency: number
  /** Retries after the first attempt, for `Overloaded` only. */
  readonly maxRetries: number
  /** First backoff delay; later ones double, with jitter. */
  readonly retryBaseMs: number
  /** The longest single wait between retries, also the cap on a server's Retry-After. */
  readonly maxRetryDelayMs: number
  /** Per-attempt timeout unless the request sets its own. */
  readonly timeoutMs: number
  /** Which server the semaphore guards: provider + host. Models on the same endpoint share slots when EndpointLimits is provided. */
  readonly endpoint: string
}

/**
 * Semaphores by endpoint, so that every model on one server (the agents' and the judge's, say)
 * shares its slots. Optional: without it each model gets its own semaphore.
 */
export class EndpointLimits extends Context.Service<
  EndpointLimits,
  { readonly semaphoreFor: (endpoint: string, permits: number) => Effect.Effect<Semaphore.Semaphore> }
>()("smurfs/EndpointLimits") {}

/** A registry of endpoint semaphores; the first model to use an endpoint sets its size. */
export const endpointLimitsLayer = Layer.sync(EndpointLimits, () => {
  const semaphores = new Map<string, Semaphore.Semaphore>()
  return {
    semaphoreFor: (endpoint: string, permits: number) =>
      Effect.sync(() => {
        const existing = semaphores.get(endpoint)
        if (existing) return existing
        const created = Semaphore.makeUnsafe(Math.max(1, permits))
        semaphores.set(endpoint, created)
        return created
      })
  }
})

/** The wait before the next retry: the server's Retry-After when it gave one, else the backoff; never above the cap. */
export const retryDelayMs = (error: ProviderError, backoffMs: number, capMs: number): number => {
  const hinted = error instanceof Overloaded ? error.retryAfterMs : undefined
  return Math.max(0, Math.min(hinted ?? backoffMs, capMs))
}

/** Jittered exponential backoff, bounded in count and per-step delay, honouring Retry-After. */
export const retrySchedule = (options: Pick<ResilienceOptions, "maxRetries" | "retryBaseMs" | "maxRetryDelayMs">) =>
  Schedule.exponential(Duration.millis(Math.max(1, options.retryBaseMs))).pipe(
    Schedule.jittered,
    Schedule.setInputType<ProviderError>(),
    Schedule.modifyDelay(({ input, duration }) =>
      Effect.succeed(Duration.millis(retryDelayMs(input, Duration.toMillis(duration), options.maxRetryDelayMs)))
    ),
    Schedule.upTo({ times: Math.max(0, options.maxRetries) })
  )

/**
 * `retrySchedule` with retries of retryable errors only, as `Effect.retry({ schedule, while })` builds it,
 * built once per setting: Effect.retry given options builds it again on every call, and a schedule is a
 * description (each call steps through its own), so every model of the same settings shares one.
 */
const retryPolicy = (options: Pick<ResilienceOptions, "maxRetries" | "retryBaseMs" | "maxRetryDelayMs">) => {
  const key = `${options.maxRetries}/${options.retryBaseMs}/${options.maxRetryDelayMs}`
  let policy = retryPolicies.get(key)
  if (policy === undefined) {
    policy = Schedule.passthrough(retrySchedule(options)).pipe(
      Schedule.while(({ input }) => Effect.succeed(input.retryable))
    )
    if (retryPolicies.size >= MAX_RETRY_POLICIES) retryPolicies.clear()
    retryPolicies.set(key, policy)
  }
  return policy
}
const retryPolicies = new Map<string, Schedule.Schedule<ProviderError, ProviderError>>()
const MAX_RETRY_POLICIES = 64

/**
 * `Effect.retry(attempt, policy)` that starts the policy's schedule at the first failure: the schedule's
 * step function, its clock and its metadata are made for every call by Effect.retry, and nearly every
 * model call succeeds at once. Each failure steps the schedule (waiting its delay); when it is done, the
 * last failure is the call's, as with Effect.retry.
 */
const retrying = <A, E, R>(
  attempt: Effect.Effect<A, E, R>,
  policy: Schedule.Schedule<unknown, E>,
  onRetry: (error: E, retry: number) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.catch(attempt, (first) =>
    Effect.flatMap(Schedule.toStepWithMetadata(policy), (step) => {
      let last = first
      let retries = 0
      const after = (error: E): Effect.Effect<A, E | Cause.Done<unknown>, R> =>
        Effect.flatMap(Effect.andThen(step(error), onRetry(error, ++retries)), () =>
          Effect.catch(attempt, (e) => {
            last = e
            return after(e)
          })
        )
      return Pull.catchDone(after(first), () => Effect.fail(last))
    })
  )

/**
 * The model with a semaphore around each attempt (released while backing off), a timeout per
 * attempt, and retries of `Overloaded` only. Every path ends: attempts are timed out, retries are
 * counted and their delays capped.
 */
export const withResilience = (
  model: LanguageModelShape,
  options: ResilienceOptions,
  semaphore: Semaphore.Semaphore
): LanguageModelShape => {
  const policy = retryPolicy(options)
  // a model that keeps this very deadline itself (the HTTP providers abort the request) needs no second
  // timer: a timeout is a race of two fibers, paid on every call
  const ownDeadline = model.timeoutMs === options.timeoutMs
  const generate = (request: GenerateRequest) => {
    const ms = request.options?.timeoutMs ?? options.timeoutMs
    const timed = ownDeadline
      ? model.generate(request)
      : model.generate(request).pipe(
          Effect.timeoutOrElse({
            duration: Duration.millis(ms),
            orElse: () => Effect.fail(new Timeout({ ms, role: request.role }))
          })
        )
    const started = Date.now()
    // each answer that is retried (a 429/503) is an event of the task, so its record says the server pushed back
    const onRetry = (error: ProviderError, retry: number) =>
      emit("model_call", {
        role: request.role,
        model: "",
        promptTokens: 0,
        completionTokens: 0,
        durationMs: Date.now() - started,
        attempt: retry,
        ok: false,
        error: redactText(error.message),
        retried: true
      })
    return retrying(timed.pipe(semaphore.withPermits(1)), policy, onRetry)
  }
  return { info: model.info, generate, ...(model.timeoutMs !== undefined ? { timeoutMs: model.timeoutMs } : {}) }
}

/** `withResilience` with the endpoint's shared semaphore when EndpointLimits is provided, else a new one. */
export const resilient = (model: LanguageModelShape, options: ResilienceOptions): Effect.Effect<LanguageModelShape> =>
  Effect.gen(function* () {
    const limits = yield* Effect.serviceOption(EndpointLimits)
    const semaphore = Option.isSome(limits)
      ? yield* limits.value.semaphoreFor(options.endpoint, options.concurrency)
      : yield* Semaphore.make(Math.max(1, options.concurrency))
    return withResilience(model, options, semaphore)
  })
