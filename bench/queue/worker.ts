// `smurfs worker`: takes bench tasks from the queue, runs them with this machine's model server, sends the records back.
import { DelayedError, type Job, UnrecoverableError, Worker } from "bullmq"
import * as Effect from "effect/Effect"
import type * as ManagedRuntime from "effect/ManagedRuntime"
import type { Method, Task } from "../../src/agents/task.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { observeModel } from "../../src/llm/observe.ts"
import { redactText } from "../../src/trace/redact.ts"
import type { BenchQuery } from "../datasets.ts"
import { executeTask, type TaskJob, type TaskResult } from "../execute-task.ts"
import type { TaskRecord } from "../run-format.ts"
import { BENCH_SETTINGS_VERSION, JobSettings } from "../settings.ts"
import { connectionOf, TASK_QUEUE, WORKER_DEFAULTS } from "./connection.ts"
import {
  QueuedTask,
  queueSecret,
  serverFailure,
  signatureMatches,
  signatureOf,
  signedResultOf,
  type TaskCalls
} from "./job.ts"
import { DONE_MARK_MS, doneKeyOf, jobOnce, sendingOf } from "./job-once.ts"

/** What a worker needs to run the tasks of one run's settings: built once, shared by all its jobs. */
export interface Session {
  readonly runtime: ManagedRuntime.ManagedRuntime<LanguageModel, unknown>
  readonly methods: ReadonlyMap<string, Method>
  /** A job's task; with `--toolset retrieve` on the set the job carries (fails when this worker's corpus is another). */
  readonly taskOf: (query: BenchQuery, retrieval: QueuedTask["retrieval"], method: string) => Effect.Effect<Task, Error>
  readonly modelSpec: string
  readonly fullTrace: boolean
  /**
   * How a job runs when it is not a method on a Task (a benchmark's conversation, bench/benchmarks): the job to its
   * record, as the bench's `runTask` runs it in process. `methods` and `taskOf` are then not used.
   */
  readonly runJob?: ((job: TaskJob) => Effect.Effect<TaskResult, never, LanguageModel>) | undefined
}

/**
 * Builds a session from a job's run options (validated JobSettings); the model server, endpoints,
 * credentials and folders are this worker's own.
 */
export type SessionFactory = (settings: JobSettings) => Promise<Session>

export interface WorkerSettings {
  readonly queueUrl: string
  /** Tasks run at once by this worker. */
  readonly concurrency: number
  /** How long a task's lock lasts without renewal: a killed worker's tasks go to another worker after it. */
  readonly lockMs: number
  readonly sessionOf: SessionFactory
  readonly log: (line: string) => void
  /** How often a running task tells the coordinator its model calls and tokens so far (its live counts). */
  readonly progressMs?: number | undefined
  /** The secret jobs and results are signed with; default SMURFS_QUEUE_SECRET (none: unsigned). */
  readonly secret?: string | undefined
}

/** A job this worker cannot verify (another SMURFS_QUEUE_SECRET): not failed, left for a worker that can. */
export class UnverifiedJob extends Error {}

/** How long a job this worker could not verify waits before any worker takes it again. */
export const UNVERIFIED_DELAY_MS = 5_000

/** A job's run options, read as they were sent: its signature (with a secret), its settings' version, then the allow-list. */
export const jobSettingsOf = (job: Job, data: QueuedTask, secret: string | undefined): JobSettings => {
  if (secret !== undefined) {
    const { signature, ...unsigned } = data
    if (!signatureMatches(secret, unsigned, signature))
      throw new UnverifiedJob(
        `job ${job.id} is not signed with this worker's SMURFS_QUEUE_SECRET (it differs from the coordinator's, or the job was written by hand); refused`
      )
    // what is signed names the job: a signed job copied under another id, or one without its nonce, is not run
    if (data.jobId !== job.id || data.nonce === undefined)
      throw new UnrecoverableError(
        data.jobId === undefined || data.nonce === undefined
          ? `job ${job.id} is signed without its id and nonce (a coordinator of another smurfs release); refused`
          : `job ${job.id} carries the signed job ${data.jobId} (copied under another id); refused`
      )
  }
  if (data.settingsVersion !== BENCH_SETTINGS_VERSION)
    throw new UnrecoverableError(
      `job ${job.id} carries bench settings of version ${data.settingsVersion}, and this worker reads version ${BENCH_SETTINGS_VERSION}: run the same smurfs release on the coordinator and its workers`
    )
  const settings = JobSettings.safeParse(data.settings)
  if (!settings.success)
    throw new UnrecoverableError(
      `job ${job.id} carries settings a worker does not take from a job (its model server, endpoints and folders are its own): ${settings.error.issues.map((i) => i.message).join("; ")}`
    )
  return settings.data
}

export { WORKER_DEFAULTS } from "./connection.ts"

/** A job's result as the worker returns it: the record, signed for its job and sending when a secret is set. */
type Reply = TaskRecord | { readonly result: TaskRecord; readonly signature: string }

/** Where a worker marks the sendings it finished in Redis (see job-once.ts). */
const DONE_PREFIX = `smurfs:${TASK_QUEUE}`

/**
 * Start a worker. Each job runs in-process exactly as `smurfs bench` runs a task; its record is the
 * job's result. A model-server failure fails the job so BullMQ retries it with backoff; a method
 * that crashes fails it for good. Each sending of a job (its id and nonce) runs once: a job that Redis lost while
 * it ran here and its coordinator queued again joins the run under way, or gets its result when that run could not
 * hand it to the queue; one that some worker finished before is a replay, refused.
 */
export const startWorker = (
  settings: WorkerSettings
): { readonly worker: Worker; readonly close: (force?: boolean) => Promise<void> } => {
  const sessions = sessionCache<Session>()
  const secret = "secret" in settings ? settings.secret : queueSecret()
  const sessionFor = (run: JobSettings): Promise<Session> =>
    sessions.get(JSON.stringify(run), () => settings.sessionOf(run))
  const once = jobOnce<Reply>()

  // every refusal is logged; a job signed with another secret is left in the queue (delayed) for a worker that
  // holds the coordinator's secret, never failed for good by one that does not
  const processor = async (job: Job, token?: string): Promise<Reply> => {
    try {
      const parsed = QueuedTask.safeParse(job.data)
      if (!parsed.success)
        throw new UnrecoverableError(`job ${job.id} is not a smurfs bench task: ${parsed.error.message}`)
      const data = parsed.data
      const run = jobSettingsOf(job, data, secret)
      const sending = sendingOf(String(job.id), data.nonce, data)
      const label = `${data.method} ${data.query.group}/${data.query.id}`
      const { answered, result } = once.run(sending, async () => {
        if (await doneElsewhere(sending))
          throw new UnrecoverableError(
            `job ${job.id} (${label}) was already done with this nonce: a replay, not run again`
          )
        return processJob(job, data, run, label)
      })
      if (answered === "joined")
        settings.log(
          redactText(`${label}: the queue gave it again while it runs here (Redis lost it); joined that run`)
        )
      if (answered === "again")
        settings.log(redactText(`${label}: the queue gave it again after it ran here; answered with that run's result`))
      return await result
    } catch (e) {
      if (e instanceof UnverifiedJob) {
        settings.log(redactText(`${e.message}; left in the queue for a worker with the coordinator's secret`))
        await job.moveToDelayed(Date.now() + UNVERIFIED_DELAY_MS, token)
        throw new DelayedError()
      }
      if (e instanceof UnrecoverableError) settings.log(redactText(`job ${job.id} refused: ${e.message}`))
      throw e
    }
  }

  const processJob = async (job: Job, data: QueuedTask, run: JobSettings, label: string): Promise<Reply> => {
    const session = await sessionFor(run).catch((e: Error) => {
      throw new UnrecoverableError(`cannot set up the task's settings on this worker: ${e.message}`)
    })
    const runJob = session.runJob
    const method = session.methods.get(data.method)
    if (!method && !runJob) throw new UnrecoverableError(`unknown method "${data.method}"`)
    const started = Date.now()
    // the coordinator counts model calls as they happen: this task's counts so far go out as the job's progress
    const calls: TaskCalls = { modelCalls: 0, tokens: 0 }
    let reported = 0
    const report = () => {
      if (calls.modelCalls === reported) return
      reported = calls.modelCalls
      job.updateProgress({ ...calls }).catch(() => {}) // only the live view misses it; the record carries the totals
    }
    const timer = setInterval(report, settings.progressMs ?? WORKER_DEFAULTS.progressMs)
    const counted = Effect.updateService(LanguageModel, (model) =>
      observeModel(model, {
        onEnd: (_role, response) => {
          calls.modelCalls++
          calls.tokens += response ? response.usage.promptTokens + response.usage.completionTokens : 0
        }
      })
    )
    // a benchmark's job (a τ² conversation) is its trial too: the record says which, as the coordinator's would
    const jobOf: TaskJob = {
      method: data.method,
      query: data.query,
      ...(data.run === undefined ? {} : { run: data.run, ...(run.seed === undefined ? {} : { seed: run.seed }) })
    }
    const task = runJob
      ? undefined
      : await session.runtime.runPromise(session.taskOf(data.query, data.retrieval, data.method)).catch((e: Error) => {
          clearInterval(timer)
          throw new UnrecoverableError(`cannot set up the task on this worker: ${e.message}`)
        })
    const ran =
      task === undefined
        ? runJob!(jobOf)
        : executeTask(
            method!,
            task,
            { method: data.method, query: data.query },
            { modelSpec: session.modelSpec, fullTrace: session.fullTrace }
          )
    const result = await session.runtime.runPromise(ran.pipe(counted)).finally(() => clearInterval(timer))
    if (result.kind === "crashed") {
      settings.log(redactText(`${label}: crashed (${result.error})`))
      throw new UnrecoverableError(result.error)
    }
    const { record } = result
    const attempts = job.opts.attempts ?? 1
    if (record.finishType === "error" && job.attemptsMade + 1 < attempts) {
      // the model server failed: the queue retries the task with backoff (here or on another worker)
      settings.log(
        redactText(
          `${label}: the model server failed (${record.error ?? "?"}); the queue retries it (attempt ${job.attemptsMade + 1} of ${attempts})`
        )
      )
      throw new Error(serverFailure(record.errorTag ?? "ModelServerError", record.error ?? "the model server failed"))
    }
    // the last attempt's error record goes back too: the run records the task as a server failure, never a give-up
    settings.log(
      `${label}: ${record.finishType === "give_answer" ? "answered" : record.finishType === "give_up" ? "gave up" : "failed by the model server"} in ${((Date.now() - started) / 1000).toFixed(1)} s`
    )
    // with a secret, the coordinator takes the record only for the job and the sending it sent
    return secret === undefined
      ? record
      : { result: record, signature: signatureOf(secret, signedResultOf(job.id, data.nonce, record)) }
  }

  const worker = queueWorker(TASK_QUEUE, processor, settings)
  const redis = () => worker.getBackend().client
  // a sending the queue took as done is marked in Redis, so that no worker runs a replay of it
  const doneElsewhere = async (sending: string): Promise<boolean> =>
    (await bounded(redis().then((client) => client.get(doneKeyOf(DONE_PREFIX, sending))))) === "1"
  worker.on("completed", (job) => {
    const parsed = QueuedTask.safeParse(job.data)
    if (!parsed.success || parsed.data.nonce === undefined) return
    const key = doneKeyOf(DONE_PREFIX, sendingOf(String(job.id), parsed.data.nonce, parsed.data))
    void bounded(redis().then((client) => client.set(key, "1", { PX: DONE_MARK_MS })))
  })
  return { worker, close: closeWorker(worker, sessions) }
}

/** A Redis call that gives up (undefined) after a few seconds: the marks of done sendings never hold up a task. */
const bounded = <T>(call: Promise<T>): Promise<T | undefined> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    call.catch(() => undefined),
    new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 5000)))
  ]).finally(() => clearTimeout(timer))
}

/** Sessions built once per key and shared by the jobs that need them, for a worker of either queue. */
export const sessionCache = <S extends { readonly runtime: { readonly dispose: () => Promise<void> } }>() => {
  const sessions = new Map<string, Promise<S>>()
  return {
    get: (key: string, build: () => Promise<S>): Promise<S> => {
      let session = sessions.get(key)
      if (!session) {
        session = build()
        // a session that could not be built is not kept: the next job tries again
        session.catch(() => sessions.delete(key))
        sessions.set(key, session)
      }
      return session
    },
    dispose: async () => {
      const built = await Promise.allSettled(sessions.values())
      await Promise.all(built.flatMap((s) => (s.status === "fulfilled" ? [s.value.runtime.dispose()] : [])))
    }
  }
}

/** Stop taking jobs (without force, running ones finish and send their results first), then release the sessions. */
export const closeWorker =
  (worker: Worker, sessions: { readonly dispose: () => Promise<void> }) =>
  async (force = false): Promise<void> => {
    await worker.close(force)
    await sessions.dispose()
  }

/** A BullMQ worker on one of the smurfs queues, with the lock, stall and error handling every queue shares. */
export const queueWorker = <R>(
  name: string,
  processor: (job: Job, token?: string) => Promise<R>,
  settings: Pick<WorkerSettings, "queueUrl" | "concurrency" | "lockMs" | "log">
): Worker => {
  const worker = new Worker(name, processor, {
    connection: connectionOf(settings.queueUrl),
    concurrency: Math.max(1, settings.concurrency),
    lockDuration: settings.lockMs,
    stalledInterval: Math.max(500, Math.floor(settings.lockMs / 2)),
    // a job whose worker died twice is still retried; only a third stall fails it
    maxStalledCount: 2,
    autorun: true
  })
  // The worker reports Redis trouble through events (an unhandled "error" event would end the process);
  // ioredis reconnects on its own, so say it once per outage, not once per attempt.
  let lastError: string | undefined
  worker.on("error", (e) => {
    // a run whose job Redis lost (restarted empty) or gave again meanwhile: not a connection problem
    const lost = /^(?:Lock mismatch|Missing lock|Missing key) for job (.+?)\. (?:Cmd )?(\w+)/.exec(e.message)
    if (lost)
      return settings.log(
        redactText(
          `job ${lost[1]}: the queue no longer holds this run of it (${lost[2]}: Redis lost the job or gave it again); it is answered when it comes again`
        )
      )
    if (e.message === lastError) return
    lastError = e.message
    settings.log(redactText(`queue error: ${e.message} (reconnecting)`))
  })
  worker.on("ready", () => {
    if (lastError !== undefined) settings.log("queue reachable again")
    lastError = undefined
  })
  return worker
}
