// The benchmark runner: methods x queries with bounded concurrency into a resumable run directory.
import { existsSync } from "node:fs"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import { finishSpec } from "../src/agents/finish.ts"
import type { Method, Task } from "../src/agents/task.ts"
import type { FailureKind } from "../src/failure.ts"
import { LanguageModel, type LanguageModelShape, type ToolSpec } from "../src/llm/language-model.ts"
import { withRequestDefaults } from "../src/llm/request-defaults.ts"
import { toolSpecs } from "../src/tools/library.ts"
import { type AtomicWriteFs, writeJsonAtomic, writeTextAtomic } from "../src/trace/atomic-write.ts"
import { type ConvertedFile, toConverted } from "../src/trace/converters/stabletoolbench.ts"
import { keyedObject } from "../src/trace/data-record.ts"
import type { RunDirError } from "../src/trace/fs-problem.ts"
import { redactText } from "../src/trace/redact.ts"
import { cappedAt, capRecordSize, recordBytes, recordText, SIZE_CAPS } from "../src/trace/size-caps.ts"
import { type BenchQuery, DatasetError, firstDuplicateId, longestFirst } from "./datasets.ts"
import { after, withTaskRetries } from "./earlier-attempts.ts"
import { executeTask, type TaskExecutor, type TaskJob, type TaskResult } from "./execute-task.ts"
import { type Progress, silentProgress } from "./progress.ts"
import type { QueueUnavailable } from "./queue/queue-executor.ts"
import { openRunDir, readRecord, readRecords } from "./run-dir.ts"
import { convertedPath, type RunConfig, runOf, type TaskRecord, taskRecordPath } from "./run-format.ts"
import { acquireRunLock } from "./run-lock.ts"
import type { AgentRun } from "./settings.ts"

/** A method under the name it is run and stored as. */
export interface MethodEntry {
  readonly name: string
  readonly method: Method
}

export interface RunnerOptions {
  /** The run directory (created if needed). */
  readonly runDir: string
  /** Written as run.json when the run is new; a resumed run keeps its own. */
  readonly config: RunConfig
  readonly queries: ReadonlyArray<BenchQuery>
  readonly methods: ReadonlyArray<MethodEntry>
  /** A query's Task for a method (its tool library on the chosen environment and the method's toolset); not with `runTask`. */
  readonly taskOf?: ((query: BenchQuery, method: string) => Task) | undefined
  /** Tasks run at once. */
  readonly concurrency: number
  /** Continue a non-empty run directory, skipping tasks whose record is complete (an `error` record is redone). */
  readonly resume: boolean
  /** With `resume`: continue even when the settings differ from the run's own (run.json records the differences). */
  readonly force?: boolean | undefined
  /** The model spec recorded in each task record. */
  readonly modelSpec: string
  /** Stop the run when this many tasks in a row failed because of the model server (refused, 404, 429/503, timeouts...). */
  readonly stopAfterUnreachable?: number | undefined
  /** Keep every prompt in the model_call events (large); by default only replies are kept. */
  readonly fullTrace?: boolean | undefined
  /** Bytes a task record may take (default SIZE_CAPS.recordBytes, 1 MiB): past it, its long strings are cut harder. */
  readonly maxRecordBytes?: number | undefined
  readonly progress?: Progress | undefined
  /** Where tasks run: in this process by default, or a queue of workers (bench/queue). */
  readonly executor?: TaskExecutor<QueueUnavailable> | undefined
  /** The Finish function as the baselines showed it (its texts follow --stb), for the converted files. */
  readonly finish?: ToolSpec | undefined
  /** The file system the task records are written through (default: the real one); tests pass a slow or full disk. */
  readonly recordFs?: AtomicWriteFs | undefined
  /**
   * The agent runs of each task and method (`--runs N` / `--seeds`), each its own record with its `run` and `seed`.
   * Absent: one run, its records as they always were (no `run`, the model's own seed).
   */
  readonly agentRuns?: ReadonlyArray<AgentRun> | undefined
  /** Times a task the server failed with a transient fault is run again within the run (default TASK_RETRIES). */
  readonly taskRetries?: number | undefined
  /** The model a job's task runs with in this process, instead of the run's (a verified replay answers from its record). */
  readonly modelFor?: ((job: TaskJob) => LanguageModelShape) | undefined
  /**
   * How a job runs in this process when it is not a method on a Task (a benchmark's conversation, bench/benchmarks):
   * the job to its record. `taskOf` is then not used, and no converted files are written (they are StableToolBench's).
   */
  readonly runTask?: ((job: TaskJob) => Effect.Effect<TaskResult, never, LanguageModel>) | undefined
  /** A task's record was written to `path` (as it is on disk): what the end of the run need not read back. */
  readonly onRecorded?: ((path: string, record: TaskRecord) => void) | undefined
}

export const RUNNER_DEFAULTS = { stopAfterUnreachable: 3, fullTrace: false } as const

export interface RunSummary {
  /** Tasks (query x method) in the run. */
  readonly total: number
  /** Already done before this invocation (resume). */
  readonly skipped: number
  /** Finished and recorded by this invocation. */
  readonly recorded: number
  /** Recorded with a final answer (not judged). */
  readonly answered: number
  /** Recorded as `error`: the model server failed during the task; a resume redoes them. */
  readonly errors: number
  /** The last server failure of this invocation, when there was one. */
  readonly lastServerError?: string | undefined
  /** Not recorded because the method crashed; a resume redoes them. */
  readonly notRecorded: number
  /** The converted prediction files written. */
  readonly convertedFiles: ReadonlyArray<string>
}

/** The model server stopped answering (or lacks the model, or times out): several tasks in a row failed because of it. */
export class ModelServerDown extends Data.TaggedError("ModelServerDown")<{
  readonly consecutive: number
  readonly runDir: string
  readonly lastError: string
  /** The model spec, for the `smurfs doctor` hint. */
  readonly model?: string | undefined
}> {
  get kind(): FailureKind {
    return "unavailable"
  }
  override get message() {
    return (
      `The model server looks down: ${this.consecutive} ${this.consecutive === 1 ? "task" : "tasks"} in a row failed because of it (${this.lastError}). ` +
      `Finished tasks are kept in ${this.runDir} (the failed ones as "error"). Fix what the error says ` +
      `(\`smurfs doctor${this.model ? ` --model ${this.model}` : ""}\` checks the server and the model), then rerun the same command with --resume.`
    )
  }
}

/** A query's key in a run: its group and id (one record per method). */
const queryKey = (query: BenchQuery) => `${query.group}/${query.id}`

type Outcome = "skipped" | "recorded" | "answered" | "error" | "not_recorded"

/** A record of a finished task (answered or given up), not of one the model server failed. */
const isResult = (record: TaskRecord): record is TaskRecord & { finishType: "give_answer" | "give_up" } =>
  record.finishType !== "error"

/** Whether a task still has to run: no complete record, or one the model server failed. */
export const isPending = (path: string): boolean => {
  const record = existsSync(path) ? readRecord(path) : undefined
  return record === undefined || record.finishType === "error"
}

/**
 * Finished tasks whose records may wait for the disk at once while the next tasks run in their slots.
 * A record is a few kilobytes; a run killed meanwhile redoes those tasks on --resume.
 */
export const WRITE_BACKLOG = 64

/** Write `converted/<method>/<group>.json` for every method and group from the records on disk. */
export const writeConverted = (
  runDir: string,
  methods: ReadonlyArray<string>,
  groups: ReadonlyArray<string>,
  taskFor: (method: string, group: string, id: string) => Task | undefined,
  finish: ToolSpec = finishSpec()
): Effect.Effect<Array<string>, RunDirError> =>
  Effect.gen(function* () {
    const written: Array<string> = []
    for (const method of methods)
      for (const group of groups) {
        // an `error` record is not a result: the task is still to be done. StableToolBench's format holds one
        // answer per task: agent run 0's (the others are judged from their records)
        const records = readRecords(runDir, method, group)
          .filter(isResult)
          .filter((record) => runOf(record) === 0)
          .sort((a, b) => Number(a.taskId) - Number(b.taskId) || a.taskId.localeCompare(b.taskId))
        if (records.length === 0) continue
        const file: ConvertedFile = keyedObject() // a task id `__proto__` is a key like any other
        for (const record of records) {
          const task = taskFor(method, group, record.taskId)
          const specs = task
            ? toolSpecs(task.tools)
            : record.availableTools.map((name) => ({
                name,
                description: "",
                parameters: { type: "object", properties: {}, required: [] }
              }))
          file[record.taskId] = toConverted(record, specs, finish)
        }
        const path = convertedPath(runDir, method, group)
        yield* writeJsonAtomic({ root: runDir, path }, file)
        written.push(path)
      }
    return written
  })

/**
 * Run every method on every query. Each finished task is written atomically to its own record file,
 * so a killed run resumes with no task lost or done twice. A task the model server failed is recorded
 * as `error` (a resume redoes it); after `stopAfterUnreachable` of them in a row the run stops with ModelServerDown.
 */
export const runBench = (
  options: RunnerOptions
): Effect.Effect<RunSummary, RunDirError | ModelServerDown | DatasetError | QueueUnavailable, LanguageModel> =>
  Effect.gen(function* () {
    const progress = options.progress ?? silentProgress
    const stopAfter = options.stopAfterUnreachable ?? RUNNER_DEFAULTS.stopAfterUnreachable
    const fullTrace = options.fullTrace ?? RUNNER_DEFAULTS.fullTrace
    const maxRecordBytes = options.maxRecordBytes ?? SIZE_CAPS.recordBytes
    // One record per group and id: a second query with the same id would overwrite the first's record.
    const duplicate = firstDuplicateId(options.queries.map((q) => `${q.group}/${q.id}`))
    if (duplicate)
      return yield* new DatasetError({
        path: options.config.data,
        problem:
          duplicate.other === undefined
            ? `the query ${duplicate.id} is given twice (queries #${duplicate.first + 1} and #${duplicate.second + 1} of the run)`
            : `the queries ${duplicate.other} and ${duplicate.id} differ only in letter case (queries #${duplicate.first + 1} and #${duplicate.second + 1} of the run); on macOS and Windows their records would share one file`,
        hint: "Give each query of a group its own query_id, then run again."
      })
    // one writer per run directory, from before it is opened until the converted files are written
    yield* acquireRunLock(options.runDir, undefined, undefined, undefined, { note: (message) => progress.log(message) })
    yield* openRunDir(options.runDir, options.config, options.resume, options.force === true)
    const base = yield* LanguageModel

    // Query-major order: a run stopped half-way holds every method on the same queries, ready to compare.
    // Longest expected tasks first, so that the last slots of a run are not left waiting on one long task.
    // Agent runs outermost: a run stopped half-way holds whole earlier runs.
    const agentRuns: ReadonlyArray<AgentRun | undefined> = options.agentRuns ?? [undefined]
    const ordered = longestFirst(options.queries)
    const jobs = agentRuns.flatMap((agentRun) =>
      ordered.flatMap((query) =>
        options.methods.map((entry) => ({
          entry,
          query,
          agentRun,
          path: taskRecordPath(options.runDir, entry.name, query.group, query.id, agentRun?.run ?? 0)
        }))
      )
    )
    const pending = jobs.filter((job) => isPending(job.path))
    progress.start(jobs.length, jobs.length - pending.length)

    // A query's Task (its tools) is built when its first job of a method starts and shared by that method's jobs until
    // the last of the query's jobs is settled, then dropped: a run holds the tools of the tasks in flight, not of every
    // task. Each agent run builds its own (runs go one after the other: a task is not held from the first to the last).
    const tasks = new Map<string, Map<string, Task>>()
    const unsettled = new Map<string, number>()
    const keyOf = (query: BenchQuery, agentRun: number | undefined) => `${queryKey(query)}#${agentRun ?? 0}`
    for (const { query, agentRun } of pending) {
      const key = keyOf(query, agentRun?.run)
      unsettled.set(key, (unsettled.get(key) ?? 0) + 1)
    }
    const taskFor = (query: BenchQuery, agentRun: number | undefined, method: string): Task => {
      const key = keyOf(query, agentRun)
      let byMethod = tasks.get(key)
      if (!byMethod) tasks.set(key, (byMethod = new Map()))
      let task = byMethod.get(method)
      if (!task) byMethod.set(method, (task = options.taskOf!(query, method)))
      return task
    }
    const settled = (query: BenchQuery, agentRun: number | undefined) => {
      const key = keyOf(query, agentRun)
      const left = (unsettled.get(key) ?? 1) - 1
      if (left > 0) return void unsettled.set(key, left)
      unsettled.delete(key)
      tasks.delete(key)
    }

    let consecutiveFailures = 0
    let lastServerError: string | undefined
    const entryByName = new Map(options.methods.map((m) => [m.name, m]))
    // (a job's own model answers the agents' requests as they are: a replay keys its replies by them)
    const modelOf = (job: TaskJob) =>
      options.modelFor
        ? options.modelFor(job)
        : job.seed === undefined
          ? base
          : withRequestDefaults(base, { seed: job.seed })
    const runTask = options.runTask
    const inProcess: TaskExecutor<QueueUnavailable> = {
      // a task the server failed with a transient fault runs again, its failed attempts kept in its record
      execute: (job) =>
        withTaskRetries(
          (runTask
            ? runTask(job)
            : executeTask(entryByName.get(job.method)!.method, taskFor(job.query, job.run, job.method), job, {
                modelSpec: options.modelSpec,
                fullTrace,
                maxRecordBytes
              })
          ).pipe(
            // an agent run's seed on every request that sets none (the call cache keys replies by it too)
            Effect.provideService(LanguageModel, modelOf(job))
          ),
          options.taskRetries
        )
    }
    const executor = options.executor ?? inProcess
    // In process, `concurrency` tasks run at once (queue jobs all wait at once for their workers). A task
    // that has run gives its slot to the next one while its record is written (fsync and all), so the
    // disk's latency is not taken out of the model's time.
    const slots = options.executor ? undefined : yield* Semaphore.make(Math.max(1, options.concurrency))
    const runJob = ({
      entry,
      query,
      agentRun,
      path
    }: (typeof jobs)[number]): Effect.Effect<Outcome, RunDirError | ModelServerDown | QueueUnavailable> =>
      Effect.gen(function* () {
        const job = { method: entry.name, query, ...(agentRun ? { run: agentRun.run, seed: agentRun.seed } : {}) }
        let started = Date.now()
        const report = (finishType: "give_answer" | "give_up" | "error" | "failed", modelCalls = 0, tokens = 0) =>
          progress.taskDone({
            method: entry.name,
            group: query.group,
            taskId: query.id,
            finishType,
            modelCalls,
            tokens,
            wallMs: Date.now() - started
          })
        /** Record what the task gave: its record written before the job ends; a run of server failures stops the run. */
        const settle = (result: TaskResult): Effect.Effect<Outcome, RunDirError | ModelServerDown> =>
          Effect.gen(function* () {
            if (result.kind === "crashed") {
              // A method must not fail; if one crashes anyway the task stays undone (a resume retries it).
              progress.log(
                redactText(`${entry.name} ${query.group}/${query.id} crashed and was not recorded: ${result.error}`)
              )
              report("failed")
              return "not_recorded"
            }
            // a worker's record is held to this run's cap too, and says which agent run it is (a worker's may not)
            const own: TaskRecord = agentRun
              ? { ...result.record, run: agentRun.run, seed: agentRun.seed }
              : result.record
            // a task redone by --resume keeps what its failed attempts met: their faults stay in the run
            const replaced = existsSync(path) ? readRecord(path) : undefined
            const stamped = replaced?.finishType === "error" ? after(own, replaced, "resume") : own
            // (a record this process capped to this run's cap fits as it is, and was rendered as it was measured)
            const record =
              cappedAt(stamped, maxRecordBytes) || recordBytes(stamped) <= maxRecordBytes
                ? stamped
                : capRecordSize(stamped, maxRecordBytes)
            const failed = record.finishType === "error"
            if (failed) lastServerError = record.error
            consecutiveFailures = failed ? consecutiveFailures + 1 : 0
            // the text writeJsonAtomic would write, rendered once
            yield* writeTextAtomic({ root: options.runDir, path }, `${recordText(record)}\n`, options.recordFs)
            options.onRecorded?.(path, record)
            if (executor.settled) yield* executor.settled(job)
            report(
              record.finishType,
              record.totals.modelCalls,
              record.totals.promptTokens + record.totals.completionTokens
            )
            if (failed && consecutiveFailures >= stopAfter)
              return yield* new ModelServerDown({
                consecutive: consecutiveFailures,
                runDir: options.runDir,
                lastError: redactText(record.error ?? "the model server failed"),
                model: options.modelSpec
              })
            return failed ? "error" : record.finishType === "give_answer" ? "answered" : "recorded"
          })
        if (!slots) return yield* settle(yield* executor.execute(job))
        const ran = yield* slots.withPermits(1)(
          Effect.gen(function* () {
            started = Date.now()
            const result = yield* executor.execute(job)
            // A task the server failed keeps its slot until it is recorded: the run may stop on it, and no
            // other task may start meanwhile.
            if (result.kind === "record" && result.record.finishType === "error")
              return { settled: true, outcome: yield* settle(result) } as const
            return { settled: false, result } as const
          })
        )
        return ran.settled ? ran.outcome : yield* settle(ran.result)
      }).pipe(Effect.ensuring(Effect.sync(() => settled(query, agentRun?.run))))

    // A run stopped by a dead server still leaves converted files of everything done so far.
    // the slots, and as many jobs again as records may wait for the disk: a write that stalls (an fsync can take
    // a few hundred milliseconds) holds its record, not the tasks after it
    const ran = yield* Effect.result(
      Effect.forEach(pending, runJob, {
        concurrency: options.executor ? Math.max(1, pending.length) : Math.max(1, options.concurrency) + WRITE_BACKLOG
      }).pipe(Effect.ensuring(Effect.sync(() => progress.stop())))
    )

    const queryById = new Map(options.queries.map((q) => [queryKey(q), q]))
    const groups = [...new Set(options.queries.map((q) => q.group))]
    const convertedFiles = runTask
      ? []
      : yield* writeConverted(
          options.runDir,
          options.methods.map((m) => m.name),
          groups,
          // built again for its converted answer (every task was dropped when it settled), then dropped again
          (method, group, id) => {
            const query = queryById.get(`${group}/${id}`)
            return query && options.taskOf ? options.taskOf(query, method) : undefined
          },
          options.finish
        )
    if (Result.isFailure(ran)) return yield* Effect.fail(ran.failure)
    const outcomes = ran.success
    const count = (o: Outcome) => outcomes.filter((x) => x === o).length
    return {
      total: jobs.length,
      skipped: jobs.length - pending.length,
      recorded: count("recorded") + count("answered"),
      answered: count("answered"),
      errors: count("error"),
      ...(lastServerError ? { lastServerError: redactText(lastServerError) } : {}),
      notRecorded: count("not_recorded"),
      convertedFiles
    } satisfies RunSummary
  }).pipe(Effect.scoped)
