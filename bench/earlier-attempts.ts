// A task the model server failed is run again (within the run, or by --resume); what its failed attempts met is kept
// in the record of the attempt that replaced it (`earlierAttempts`), so that no fault disappears from the run.
import * as Effect from "effect/Effect"
import { isKind } from "../src/trace/events.ts"
import type { EarlierAttempt } from "../src/trace/record.ts"
import type { TaskResult } from "./execute-task.ts"
import type { TaskRecord } from "./run-format.ts"

/** A task whose server failed with a transient fault is run again within the run this many times... */
export const TASK_RETRIES = 2
/** ...after this long, doubled each time. */
export const TASK_RETRY_BASE_MS = 1000

/** What one failed attempt met, from its record. */
export const attemptOf = (record: TaskRecord, redoneBy: EarlierAttempt["redoneBy"]): EarlierAttempt => ({
  redoneBy,
  startedAt: record.startedAt,
  finishedAt: record.finishedAt,
  ...(record.error === undefined ? {} : { error: record.error }),
  ...(record.errorTag === undefined ? {} : { errorTag: record.errorTag }),
  modelCalls: record.totals.modelCalls,
  failedCalls: record.events.filter((e) => isKind(e, "model_call") && e.data.ok === false && !e.data.retried).length,
  serverRetries: record.totals.serverRetries ?? 0,
  guardrails: Object.values(record.totals.guardrails).reduce((a, b) => a + b, 0)
})

/** `record` with the attempts before it, oldest first: `earlier`'s own earlier ones, `earlier`, then its own. */
export const after = (record: TaskRecord, earlier: TaskRecord, redoneBy: EarlierAttempt["redoneBy"]): TaskRecord => ({
  ...record,
  earlierAttempts: [...(earlier.earlierAttempts ?? []), attemptOf(earlier, redoneBy), ...(record.earlierAttempts ?? [])]
})

/**
 * Run a task, and again (at most `retries` times, backing off from `baseMs`) while it ends as `error` because of a
 * transient server fault (a 5xx, a cut or reset reply, 429/503 past the call's own retries); the record it ends with
 * keeps each failed attempt in `earlierAttempts`.
 */
export const withTaskRetries = <E, R>(
  run: Effect.Effect<TaskResult, E, R>,
  retries = TASK_RETRIES,
  baseMs = TASK_RETRY_BASE_MS
): Effect.Effect<TaskResult, E, R> => {
  const attempt = (n: number): Effect.Effect<TaskResult, E, R> =>
    Effect.flatMap(run, (result) => {
      if (n >= retries || result.kind !== "record" || result.record.finishType !== "error" || !result.transient)
        return Effect.succeed(result)
      const failed = result.record
      return Effect.sleep(baseMs * 2 ** n).pipe(
        Effect.andThen(attempt(n + 1)),
        Effect.map(
          (next): TaskResult =>
            next.kind === "record" ? { ...next, record: after(next.record, failed, "retry") } : next
        )
      )
    })
  return attempt(0)
}
