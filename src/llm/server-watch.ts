// Which model-layer failures mean the server failed (not the model's reply), and a per-task watch that stops calling it then.
import * as Effect from "effect/Effect"
import { emit } from "../trace/events.ts"
import { redactText } from "../trace/redact.ts"
import {
  type GenerateError,
  type ModelNotFound,
  ModelServerError,
  ModelUnreachable,
  type Overloaded,
  Timeout
} from "./errors.ts"
import { type GenerateRequest, LanguageModel, type LanguageModelShape } from "./language-model.ts"

/** A failure of the model server: no reply came, whatever the model would have said. */
export type ServerFailure = ModelUnreachable | ModelNotFound | Overloaded | Timeout | ModelServerError

/**
 * True for failures of the server: refused or reset connections, a missing model or endpoint (404),
 * 429/503 that outlasted the retries, timeouts, HTTP 5xx and cut replies. A malformed reply, a tool
 * call the server could not parse, or a prompt too long for the context window are the model's and
 * the task's, not the server's. Each error class says which it is (`serverFault`).
 */
export const isServerFailure = (e: GenerateError): e is ServerFailure => e.serverFault

/**
 * A server fault worth sending the call again for: an HTTP 5xx, a reply cut or garbled mid-body, a connection reset.
 * Not a refused connection (nobody listens), a missing model or endpoint, refused credentials, or a timeout (a hung
 * server would cost one timeout per try).
 */
export const isTransientServerFailure = (e: GenerateError): boolean =>
  (e instanceof ModelServerError && e.serverFault && (e.status === undefined || e.status >= 500)) ||
  (e instanceof ModelUnreachable && (e.cause === "ECONNRESET" || e.cause === "EPIPE"))

export interface ServerWatchOptions {
  /**
   * Timed-out calls sent once more before the server counts as failed. 0 in a bench (the first
   * timeout of a task marks the endpoint suspect: the task ends as `error` and a resume redoes it);
   * 1 for `smurfs run` (one retry, then it gives up).
   */
  readonly timeoutRetries?: number | undefined
  /**
   * A call that met a transient server fault (isTransientServerFailure) is sent again at most this many times, after
   * `transientBackoffMs`, doubled each time; each failed answer is a `model_call` event marked `retried` (counted in
   * the record's `totals.serverRetries`). 0 (the default): the first such fault ends the task.
   */
  readonly transientRetries?: number | undefined
  readonly transientBackoffMs?: number | undefined
}

export const SERVER_WATCH_DEFAULTS = { timeoutRetries: 0, transientRetries: 0, transientBackoffMs: 250 } as const

export interface ServerWatch {
  /** The model to give the task: once the server failed, every further call fails at once with that failure. */
  readonly model: LanguageModelShape
  /** The first server failure the task met, if any. */
  readonly failure: () => ServerFailure | undefined
}

/**
 * Watch one task's calls. After the first server failure the task's remaining calls are not sent:
 * a hung server costs one timeout per task, not one per call, and a dead one a single refused
 * connection; the task is then a server failure, never a result (the runner records it as `error`).
 */
export const watchServer = (model: LanguageModelShape, options: ServerWatchOptions = {}): ServerWatch => {
  const timeoutRetries = options.timeoutRetries ?? SERVER_WATCH_DEFAULTS.timeoutRetries
  const transientRetries = options.transientRetries ?? SERVER_WATCH_DEFAULTS.transientRetries
  const backoffMs = options.transientBackoffMs ?? SERVER_WATCH_DEFAULTS.transientBackoffMs
  let failure: ServerFailure | undefined
  let timeoutsRetried = 0
  const generate = (request: GenerateRequest, retry = 0): ReturnType<LanguageModelShape["generate"]> =>
    Effect.suspend(() => {
      if (failure) return Effect.fail(failure)
      const started = Date.now()
      return model.generate(request).pipe(
        Effect.catch((e) => {
          if (!isServerFailure(e)) return Effect.fail(e)
          if (e instanceof Timeout && timeoutsRetried < timeoutRetries) {
            timeoutsRetried++
            return generate(request)
          }
          if (retry < transientRetries && isTransientServerFailure(e))
            // the fault stays in the record: the answer that failed is an event of its own, marked retried
            return emit("model_call", {
              role: request.role,
              model: "",
              promptTokens: 0,
              completionTokens: 0,
              durationMs: Date.now() - started,
              attempt: retry + 1,
              ok: false,
              error: redactText(e.message),
              retried: true
            }).pipe(Effect.andThen(Effect.sleep(backoffMs * 2 ** retry)), Effect.andThen(generate(request, retry + 1)))
          failure ??= e
          return Effect.fail(e)
        })
      )
    })
  return {
    model: LanguageModel.of({ info: model.info, generate: (request) => generate(request) }),
    failure: () => failure
  }
}
