// The coordinator's side of the distributed bench: tasks go to a BullMQ queue on Redis, records come back through it.
import { createHash } from "node:crypto"
import { Job, Queue, QueueEvents } from "bullmq"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Redis, type RedisOptions } from "ioredis"
import type { TaskExecutor, TaskJob, TaskResult } from "../execute-task.ts"
import { TaskRecord } from "../run-format.ts"
import type { JobSettings } from "../settings.ts"
import { BENCH_SETTINGS_VERSION } from "../settings.ts"
import { connectionOf, probeRedis, QUEUE_DEFAULTS, QueueUnavailable, TASK_QUEUE } from "./connection.ts"
import {
  jobIdOf,
  newNonce,
  QueuedTask,
  queueSecret,
  readFailure,
  SignedResult,
  signatureMatches,
  signatureOf,
  signedResultOf,
  TaskCalls
} from "./job.ts"

export interface QueueExecutorSettings {
  readonly queueUrl: string
  readonly runId: string
  /** The run's options workers build each task with (an allow-list: nothing of this machine's own). */
  readonly settings: JobSettings
  /** The secret jobs and results are signed with; default SMURFS_QUEUE_SECRET (none: unsigned). */
  readonly secret?: string | undefined
  /** Attempts of a task before it is reported as failed (model-server failures are retried with backoff). */
  readonly attempts: number
  /** First backoff delay between attempts; later ones double. */
  readonly backoffMs: number
  /** How often to look for results whose event was missed (Redis reconnects, a coordinator restarted). */
  readonly sweepMs: number
  /** How long to wait for Redis at start. */
  readonly connectTimeoutMs: number
  /** How long Redis may stay gone mid-run before the run stops with QueueUnavailable (exit 4); default SMURFS_QUEUE_LOST_MS, else 30 s. */
  readonly lostAfterMs?: number | undefined
  /** How long closing waits for BullMQ before dropping its connections (Redis gone: a close would wait forever). */
  readonly closeTimeoutMs?: number | undefined
  /** Tell the progress view that a worker took a task. */
  readonly onActive?: ((jobId: string) => void) | undefined
  /** Jobs waited for were gone from Redis (restarted empty, flushed) and were queued again; say so. */
  readonly onRequeued?: ((count: number) => void) | undefined
  /** A running task's model calls and tokens so far, as its worker reports them (the live counts). */
  readonly onTaskCalls?: ((job: TaskJob, calls: TaskCalls) => void) | undefined
  /** With `--toolset retrieve`: a task's recorded set and corpus, sent with it so the worker runs the same task. */
  readonly retrievalOf?: ((job: TaskJob) => QueuedTask["retrieval"]) | undefined
  /** A result was refused and not counted (for a job already done, a replay); say so. */
  readonly onRefused?: ((message: string) => void) | undefined
}

export { QUEUE_DEFAULTS, QueueUnavailable } from "./connection.ts"

/** How long Redis may stay gone mid-run when SMURFS_QUEUE_LOST_MS does not say. */
export const QUEUE_LOST_AFTER_MS = 30_000

/** How long Redis may stay gone mid-run: SMURFS_QUEUE_LOST_MS (milliseconds), else 30 s. */
export const queueLostAfterMs = (environment: NodeJS.ProcessEnv = process.env): number => {
  const value = Number(environment["SMURFS_QUEUE_LOST_MS"])
  return Number.isInteger(value) && value > 0 ? value : QUEUE_LOST_AFTER_MS
}

/**
 * A job's return value, read back as the record of the job that was sent; anything else is a crash of
 * the worker: a reply that is not a record, a record of another task, or (with a secret) one not signed with it.
 */
const resultOf = (
  value: unknown,
  jobId: string,
  job: TaskJob | undefined,
  secret: string | undefined,
  nonce: string | undefined
): TaskResult => {
  let parsed = parseReturn(value)
  if (parsed === undefined) return { kind: "crashed", error: "a worker sent a result that is not JSON" }
  const signed = SignedResult.safeParse(parsed)
  if (secret !== undefined) {
    // signed for this job and the sending waited for: a result of an earlier sending of the same id is not taken
    if (
      !signed.success ||
      !signatureMatches(secret, signedResultOf(jobId, nonce, signed.data.result), signed.data.signature)
    )
      return {
        kind: "crashed",
        error:
          "a result came back without a valid signature for its job and sending (SMURFS_QUEUE_SECRET differs, it answers another sending of the job, or it was written by hand); refused"
      }
  }
  if (signed.success) parsed = signed.data.result
  const record = TaskRecord.safeParse(parsed)
  if (!record.success)
    return { kind: "crashed", error: `a worker sent an invalid record: ${record.error.issues[0]?.message ?? "?"}` }
  const { method, group, taskId } = record.data
  if (job !== undefined && (method !== job.method || group !== job.query.group || taskId !== job.query.id))
    return {
      kind: "crashed",
      error: `a worker sent the record of another task (${method} ${group}/${taskId}) for ${job.method} ${job.query.group}/${job.query.id}; refused`
    }
  return { kind: "record", record: record.data }
}

/** A digest of a job's return value, to tell a result seen twice from another one. */
const digestOf = (value: unknown): string =>
  createHash("sha256")
    .update(JSON.stringify(parseReturn(value)) ?? "")
    .digest("hex")

/** A job's return value as stored by BullMQ (JSON text, or already parsed); undefined when it is not JSON. */
export const parseReturn = (value: unknown): unknown => {
  if (typeof value !== "string") return value
  try {
    return JSON.parse(value)
  } catch {
    return undefined
  }
}

/** A job that failed for good: its worker could not run it (a model-server failure comes back as an `error` record instead). */
const failureOf = (reason: string): TaskResult => ({ kind: "crashed", error: readFailure(reason).error })

export interface QueueClientSettings<R> extends Omit<QueueExecutorSettings, "runId" | "settings" | "onTaskCalls"> {
  /** The BullMQ queue's name (bench tasks and judge decisions go to different queues). */
  readonly queueName: string
  /** A completed job's return value, read back (the job's id says which job it answers). */
  readonly resultOf: (value: unknown, jobId: string) => R
  /** A job that failed for good, read back from its failure reason. */
  readonly failureOf: (reason: string) => R
  /** A job we wait for reported progress. */
  readonly onProgress?: ((jobId: string, data: unknown) => void) | undefined
  /** What to do once Redis is back, said when it stayed gone past `lostAfterMs`; default: rerun with --resume (a bench). */
  readonly rerunHint?: string | undefined
  /**
   * A job of this id is in the queue already (sent by an earlier coordinator of the run): whether its data is ours to
   * wait for (its result is then read as that sending's, and it is what is queued again if Redis loses it).
   */
  readonly adopt?: ((id: string, data: unknown) => boolean) | undefined
}

/** Sends jobs to a queue and waits for their results; shared by the bench's tasks and the eval's judge decisions. */
export interface QueueClient<R> {
  /**
   * Queue `data` as job `id` (adding the same id again adds nothing) and wait for its result; `enqueueError` reads a
   * failure to add it. Fails with QueueUnavailable when Redis has been gone for longer than `lostAfterMs`.
   */
  readonly run: (
    id: string,
    name: string,
    data: unknown,
    enqueueError: (message: string) => R
  ) => Effect.Effect<R, QueueUnavailable>
  /** The result is stored: the queue may forget the job. */
  readonly forget: (id: string) => Effect.Effect<void>
}

/**
 * Jobs on a BullMQ queue, each awaited through the queue's events. Results that arrive while no one
 * waits (a coordinator that was stopped) stay in Redis and are picked up when it runs again; a job is
 * removed only once its result is stored (`forget`). Closing leaves unfinished jobs queued.
 */
export const makeQueueClient = <R>(
  settings: QueueClientSettings<R>
): Effect.Effect<QueueClient<R>, QueueUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const options = connectionOf(settings.queueUrl)
    const fail = (e: unknown) => new QueueUnavailable({ url: settings.queueUrl, detail: (e as Error).message })
    const { queue, events, connection } = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          await probeRedis(settings.queueUrl, settings.connectTimeoutMs)
          // our own connection for the queue, whose state tells whether Redis answers, and which we can always drop
          const connection = new Redis(options as RedisOptions)
          connection.on("error", () => {})
          const queue = new Queue(settings.queueName, { connection })
          const events = new QueueEvents(settings.queueName, { connection: options })
          // ioredis reconnects on its own after a drop; the sweep collects what the events missed meanwhile
          queue.on("error", () => {})
          events.on("error", () => {})
          await Promise.all([queue.waitUntilReady(), events.waitUntilReady()])
          return { queue, events, connection }
        },
        catch: fail
      }),
      ({ queue, events, connection }) =>
        Effect.promise(() =>
          closeWithin(settings.closeTimeoutMs ?? QUEUE_DEFAULTS.closeTimeoutMs, queue, events, connection)
        )
    )

    const waiters = new Map<string, (result: Effect.Effect<R, QueueUnavailable>) => void>()
    /** What each job waited for was queued as, once it is in Redis: to queue it again if Redis loses it. */
    const queued = new Map<string, { readonly name: string; readonly data: unknown }>()
    /** The jobs whose result was taken, with a digest of it: another result for one of them is refused. */
    const done = new Map<string, string>()
    const deliver = (jobId: string, result: R) => {
      const waiter = waiters.get(jobId)
      if (!waiter) return // not ours, or delivered already: a result that arrives twice is taken once
      waiters.delete(jobId)
      queued.delete(jobId)
      waiter(Effect.succeed(result))
    }
    /** A completed job's return value: the result of a job waited for, or, for a job already done, refused if it differs. */
    const completed = (jobId: string, value: unknown) => {
      const digest = digestOf(value)
      if (waiters.has(jobId)) {
        done.set(jobId, digest)
        return deliver(jobId, settings.resultOf(value, jobId))
      }
      const taken = done.get(jobId)
      // the same result seen twice (its event and the sweep) is no news; another one is a replay or a second run
      if (taken !== undefined && taken !== digest)
        settings.onRefused?.(
          `a result came for job ${jobId}, which is already done (a replayed job, or one run twice): refused, not counted again`
        )
    }

    // Redis gone for good (stopped, its machine down) would leave every waiter waiting forever, and ioredis
    // reconnecting forever: past `lostAfterMs` without a ready connection, the run stops with a message.
    const lostAfterMs = settings.lostAfterMs ?? queueLostAfterMs()
    let lost: QueueUnavailable | undefined
    let lastReady = Date.now()
    const watchdog = setInterval(
      () => {
        if (connection.status === "ready") lastReady = Date.now()
        else if (lost === undefined && Date.now() - lastReady > lostAfterMs) {
          lost = new QueueUnavailable({
            url: settings.queueUrl,
            detail: `Redis stopped answering and did not come back within ${Math.round(lostAfterMs / 1000)} s (SMURFS_QUEUE_LOST_MS); ${settings.rerunHint ?? "what was recorded is kept, rerun with --resume once it is back"}`
          })
          const stopped = [...waiters.values()]
          waiters.clear()
          queued.clear()
          for (const waiter of stopped) waiter(Effect.fail(lost))
        }
      },
      Math.min(1000, Math.max(50, Math.floor(lostAfterMs / 4)))
    )
    yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(watchdog)))
    events.on("completed", ({ jobId, returnvalue }) => completed(jobId, returnvalue))
    events.on("failed", ({ jobId, failedReason }) => deliver(jobId, settings.failureOf(failedReason)))
    events.on("active", ({ jobId }) => {
      if (waiters.has(jobId)) settings.onActive?.(jobId)
    })
    events.on("progress", ({ jobId, data }) => {
      if (waiters.has(jobId)) settings.onProgress?.(jobId, data)
    })

    const add = (id: string, name: string, data: unknown) =>
      queue.add(name, data, {
        jobId: id,
        attempts: Math.max(1, settings.attempts),
        backoff: { type: "exponential", delay: settings.backoffMs },
        removeOnComplete: false,
        removeOnFail: false
      })

    // Events are fire-and-forget: a sweep finds finished jobs whose event no one heard, and jobs that
    // Redis lost (a restart without persistence, a flush), which no worker will ever run: those are queued
    // again, or the coordinator would wait for them forever.
    const sweep = async () => {
      if (waiters.size === 0) return
      for (const state of ["completed", "failed"] as const) {
        for (let start = 0; ; start += 500) {
          const jobs = await queue.getJobs([state], start, start + 499, true)
          for (const job of jobs)
            if (job?.id && waiters.has(job.id))
              if (state === "completed") completed(job.id, job.returnvalue)
              else deliver(job.id, settings.failureOf(job.failedReason))
          if (jobs.length < 500) break
        }
      }
      let requeued = 0
      for (const [id, job] of [...queued]) {
        if (!waiters.has(id)) continue
        const exists = (await Job.fromId(queue, id)) !== undefined
        // still there, or delivered while we looked; else gone from Redis (adding an id that exists adds nothing)
        if (exists || !waiters.has(id)) continue
        await add(id, job.name, job.data)
        requeued++
      }
      if (requeued > 0) settings.onRequeued?.(requeued)
    }
    // one sweep at a time: a slow one (Redis reconnecting) is not stacked on
    let sweeping = false
    const timer = setInterval(() => {
      if (sweeping) return
      sweeping = true
      void sweep()
        .catch(() => {})
        .finally(() => (sweeping = false))
    }, settings.sweepMs)
    yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(timer)))

    /** Queue the job unless it is there; what is queued under the id (ours, or an earlier sending adopted). */
    const enqueue = async (id: string, name: string, data: unknown): Promise<unknown> => {
      const existing = await Job.fromId(queue, id)
      if (existing) {
        const sent = settings.adopt?.(id, existing.data) === true ? existing.data : data
        const state = await existing.getState()
        if (state === "completed") return (completed(id, existing.returnvalue), sent)
        // a resumed run tries a failed job again
        if (state === "failed") return existing.retry("failed").then(() => sent)
        return sent // waiting, delayed or running: its result will come
      }
      await add(id, name, data)
      return data
    }

    const run = (
      id: string,
      name: string,
      data: unknown,
      enqueueError: (message: string) => R
    ): Effect.Effect<R, QueueUnavailable> =>
      Effect.callback<R, QueueUnavailable>((resume) => {
        if (lost !== undefined) return resume(Effect.fail(lost))
        waiters.set(id, resume)
        enqueue(id, name, data).then(
          (sent) => void (waiters.has(id) && queued.set(id, { name, data: sent })),
          (e: Error) => deliver(id, enqueueError(e.message))
        )
        // interrupted (Ctrl-C): stop waiting; the job stays queued for the next run
        return Effect.sync(() => (waiters.delete(id), queued.delete(id)))
      })

    const forget = (id: string): Effect.Effect<void> =>
      Effect.promise(() => queue.remove(id).catch(() => 0)).pipe(Effect.asVoid)

    return { run, forget } satisfies QueueClient<R>
  })

/**
 * Close BullMQ's queue and event listener, waiting at most `ms`: while Redis is down their close (and
 * `disconnect()`) waits for a reply that never comes, so past the bound their connections are dropped
 * without one, and so is ours.
 */
const closeWithin = async (ms: number, queue: Queue, events: QueueEvents, connection: Redis): Promise<void> => {
  let timer: NodeJS.Timeout | undefined
  const closed = await Promise.race([
    Promise.allSettled([events.close(), queue.close()]).then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)))
  ])
  clearTimeout(timer)
  if (!closed)
    for (const backend of [events.getBackend(), queue.getBackend()]) {
      // the client is ready by now (it was waited for at start); an unanswered close leaves it reconnecting
      const client = await Promise.race([
        backend.client,
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 100))
      ]).catch(() => undefined)
      ;(client as { disconnect?: (reconnect?: boolean) => void } | undefined)?.disconnect?.(false)
    }
  connection.disconnect(false)
}

/**
 * A TaskExecutor that enqueues each task as a BullMQ job (one per run, method and query: adding it
 * again adds nothing) and waits for its record from the queue's events; a job is removed only once
 * the runner has written its record.
 */
export const makeQueueExecutor = (
  settings: QueueExecutorSettings
): Effect.Effect<TaskExecutor<QueueUnavailable>, QueueUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    // the jobs waited for, by id: a worker's progress names only the id
    const running = new Map<string, TaskJob>()
    const onProgress = (jobId: string, data: unknown) => {
      const job = running.get(jobId)
      const calls = TaskCalls.safeParse(data)
      if (job && calls.success) settings.onTaskCalls?.(job, calls.data)
    }
    const secret = "secret" in settings ? settings.secret : queueSecret()
    /** The nonce of the sending each job waited for was sent (or adopted) with. */
    const nonces = new Map<string, string>()
    const client = yield* makeQueueClient<TaskResult>({
      ...settings,
      queueName: TASK_QUEUE,
      resultOf: (value, jobId) => resultOf(value, jobId, running.get(jobId), secret, nonces.get(jobId)),
      failureOf,
      onProgress,
      // an earlier coordinator's sending of the job (a resumed run): its result answers it when it is our run's
      adopt: (id, data) => {
        const sent = QueuedTask.safeParse(data)
        if (!sent.success || sent.data.nonce === undefined || sent.data.runId !== settings.runId) return false
        if (secret !== undefined) {
          const { signature, ...unsigned } = sent.data
          if (!signatureMatches(secret, unsigned, signature)) return false
        }
        nonces.set(id, sent.data.nonce)
        return true
      }
    })
    const execute = (job: TaskJob): Effect.Effect<TaskResult, QueueUnavailable> => {
      const id = jobIdOf(settings.runId, job.method, job.query, job.run)
      const nonce = newNonce()
      const unsigned: QueuedTask = {
        jobId: id,
        nonce,
        runId: settings.runId,
        method: job.method,
        query: {
          group: job.query.group,
          id: job.query.id,
          query: job.query.query,
          apiList: [...job.query.apiList],
          relevant: job.query.relevant.map(([a, b]) => [a, b] as [string, string])
        },
        settingsVersion: BENCH_SETTINGS_VERSION,
        // an agent run's seed travels as the job's `seed` (a worker of any release samples with it); its index names the job
        settings: job.seed === undefined ? settings.settings : { ...settings.settings, seed: job.seed },
        ...(job.run === undefined ? {} : { run: job.run }),
        ...(settings.retrievalOf ? { retrieval: settings.retrievalOf(job) } : {})
      }
      const data: QueuedTask =
        secret === undefined ? unsigned : { ...unsigned, signature: signatureOf(secret, unsigned) }
      running.set(id, job)
      nonces.set(id, nonce)
      return client
        .run(id, job.method, data, (message) => ({ kind: "crashed", error: `cannot queue the task: ${message}` }))
        .pipe(Effect.ensuring(Effect.sync(() => (running.delete(id), nonces.delete(id)))))
    }
    const settled = (job: TaskJob): Effect.Effect<void> =>
      client.forget(jobIdOf(settings.runId, job.method, job.query, job.run))
    return { execute, settled } satisfies TaskExecutor<QueueUnavailable>
  })
