// One benchmark task (a query, a method) run to its record, here in this process: the runner's and a worker's unit of work.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type { Method, Task } from "../src/agents/task.ts"
import { Overloaded } from "../src/llm/errors.ts"
import { LanguageModel } from "../src/llm/language-model.ts"
import { withModelTask } from "../src/llm/model-task.ts"
import { isTransientServerFailure, watchServer } from "../src/llm/server-watch.ts"
import { SimulatorWatch } from "../src/tools/environments/simulated.ts"
import { isKind, type RunEvent } from "../src/trace/events.ts"
import { redactText, redactValue } from "../src/trace/redact.ts"
import { capRecordSize, SIZE_CAPS } from "../src/trace/size-caps.ts"
import { RecordPrompts } from "../src/trace/trajectory.ts"
import type { BenchQuery } from "./datasets.ts"
import { RUN_FORMAT_VERSION, type TaskRecord } from "./run-format.ts"

/** A task to run: which method on which query. */
export interface TaskJob {
  readonly method: string
  readonly query: BenchQuery
  /** The agent run (`bench --runs N`), when the run has several; its record says so. */
  readonly run?: number | undefined
  /** That agent run's sampling seed, given to every request that sets none. */
  readonly seed?: number | undefined
}

/**
 * What running a task gave: its record (an `error` record when the model server failed: not a
 * result, a resume redoes it), or a crash of the method (nothing recorded, a resume redoes it).
 */
export type TaskResult =
  | {
      readonly kind: "record"
      readonly record: TaskRecord
      /** An `error` record's server fault was transient (a 5xx, a cut or reset reply, 429/503): worth running again. */
      readonly transient?: boolean | undefined
    }
  | { readonly kind: "crashed"; readonly error: string }

/** Where the runner sends its tasks: this process (the default) or a queue of workers. */
export interface TaskExecutor<E = never> {
  /** Run a task; an executor fails only when it cannot go on at all (a queue whose Redis is gone). */
  readonly execute: (job: TaskJob) => Effect.Effect<TaskResult, E>
  /** The runner wrote the job's record (or gave up on it): a queue may forget its copy. */
  readonly settled?: ((job: TaskJob) => Effect.Effect<void>) | undefined
}

export interface ExecuteOptions {
  /** The model spec recorded in the task record. */
  readonly modelSpec: string
  /** Keep every prompt in the model_call events (large); by default only replies are kept. */
  readonly fullTrace: boolean
  /** Bytes a task record may take as a file (default SIZE_CAPS.recordBytes, 1 MiB); long strings are cut harder past it. */
  readonly maxRecordBytes?: number | undefined
}

/** A model call that met a transient server fault (a 5xx, a cut or reset reply) is sent again at most this many times. */
export const TRANSIENT_CALL_RETRIES = 2

/** Drop prompts from model_call events unless a full trace was asked for: they dominate a record's size. */
export const slimEvents = (events: ReadonlyArray<RunEvent>, full: boolean): Array<RunEvent> =>
  full
    ? [...events]
    : events.map((e) => {
        if (!isKind(e, "model_call") || !("messages" in e.data)) return e
        const { messages: _dropped, ...data } = e.data
        return { ...e, data }
      })

/** Run `method` on `task` and build its record; a failed server or a crash is a TaskResult too, never a failure. */
export const executeTask = (
  method: Method,
  task: Task,
  job: TaskJob,
  options: ExecuteOptions
): Effect.Effect<TaskResult, never, LanguageModel> =>
  Effect.gen(function* () {
    const base = yield* LanguageModel
    const startedAt = new Date().toISOString()
    // Watch this task's model calls: a transient fault (5xx, a cut or reset reply) is sent again, twice at most; once
    // the server fails for good (dead, 404, hung, or past those retries), the task is not a result.
    const watch = watchServer(base, { transientRetries: TRANSIENT_CALL_RETRIES })
    // and the tool simulator's: a task whose tool calls it could not answer is not a result either
    const simulator: SimulatorWatch = { failure: undefined }
    const exit = yield* Effect.exit(
      Effect.suspend(() => method(task)).pipe(
        // every request of the task on one slot of a server that keeps them (--slot-affinity)
        withModelTask(`${job.method} ${job.query.group} ${job.query.id}`),
        Effect.provideService(LanguageModel, watch.model),
        Effect.provideService(SimulatorWatch, simulator),
        // the prompts the record would drop are not held while the task runs
        Effect.provideService(RecordPrompts, options.fullTrace)
      )
    )
    if (exit._tag === "Failure") {
      if (Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
      return {
        kind: "crashed",
        error: redactText(Cause.pretty(exit.cause).split("\n")[0] ?? "the method crashed")
      } as const
    }
    const trajectory = exit.value
    const modelFailure = watch.failure()
    const failure =
      modelFailure ??
      (simulator.failure === undefined
        ? undefined
        : { message: `the tool simulator failed: ${simulator.failure.message}`, _tag: simulator.failure.tag })
    const record: TaskRecord = {
      formatVersion: RUN_FORMAT_VERSION,
      taskId: job.query.id,
      group: job.query.group,
      method: job.method,
      model: options.modelSpec,
      query: job.query.query,
      availableTools: task.tools.tools.map((t) => t.name),
      finalAnswer: trajectory.finalAnswer,
      // whatever the method made of it, a task whose server failed is not done: a resume redoes it
      finishType: failure ? "error" : trajectory.finishType,
      ...(failure
        ? { error: failure.message, errorTag: failure._tag }
        : trajectory.error !== undefined
          ? { error: trajectory.error }
          : {}),
      ...(trajectory.guards !== undefined && trajectory.guards.length > 0 ? { guards: [...trajectory.guards] } : {}),
      totals: { ...trajectory.totals, guardrails: { ...trajectory.totals.guardrails } },
      events: slimEvents(trajectory.events, options.fullTrace),
      startedAt,
      finishedAt: new Date().toISOString(),
      ...(job.run === undefined ? {} : { run: job.run }),
      ...(job.seed === undefined ? {} : { seed: job.seed })
    }
    // a model or tool may have echoed an API key or an Authorization header; none reaches the disk.
    // Then every string is capped, and the record as a whole, so that huge replies or observations cannot blow it up.
    return {
      kind: "record",
      record: capRecordSize(redactValue(record), options.maxRecordBytes ?? SIZE_CAPS.recordBytes),
      ...(modelFailure === undefined
        ? {}
        : { transient: modelFailure instanceof Overloaded || isTransientServerFailure(modelFailure) })
    } as const
  })
