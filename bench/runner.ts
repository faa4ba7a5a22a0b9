// The benchmark runner: methods x queries with bounded concurrency into a resumable run directory.
import { existsSync } from "node:fs"
import { Cause, Data, Effect } from "effect"
import { finishSpec } from "../src/agents/finish.ts"
import type { Method, Task } from "../src/agents/task.ts"
import type { ModelNotFound, ModelUnreachable } from "../src/llm/errors.ts"
import { LanguageModel } from "../src/llm/language-model.ts"
import { toolSpecs } from "../src/tools/library.ts"
import { type ConvertedFile, toConverted } from "../src/trace/converters/stabletoolbench.ts"
import type { RunEvent } from "../src/trace/events.ts"
import { redactText, redactValue } from "../src/trace/redact.ts"
import { type BenchQuery, longestFirst } from "./datasets.ts"
import { type Progress, silentProgress } from "./progress.ts"
import { openRunDir, readRecord, readRecords, type RunDirError, writeJsonAtomic } from "./run-dir.ts"
import { convertedPath, RUN_FORMAT_VERSION, type RunConfig, type TaskRecord, taskRecordPath } from "./run-format.ts"

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
  /** A query's Task (its tool library on the chosen environment and toolset). */
  readonly taskOf: (query: BenchQuery) => Task
  /** Tasks run at once. */
  readonly concurrency: number
  /** Continue a non-empty run directory, skipping tasks whose record is complete. */
  readonly resume: boolean
  /** The model spec recorded in each task record. */
  readonly modelSpec: string
  /** Stop the run when this many tasks in a row could not reach the model server (or it lacks the model). */
  readonly stopAfterUnreachable?: number | undefined
  /** Keep every prompt in the model_call events (large); by default only replies are kept. */
  readonly fullTrace?: boolean | undefined
  readonly progress?: Progress | undefined
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
  /** Not recorded because the model server was unreachable or the method crashed; a resume redoes them. */
  readonly notRecorded: number
  /** The converted prediction files written. */
  readonly convertedFiles: ReadonlyArray<string>
}

/** The model server stopped answering (or lacks the model): several tasks in a row could not use it. */
export class ModelServerDown extends Data.TaggedError("ModelServerDown")<{
  readonly consecutive: number
  readonly runDir: string
  readonly lastError: string
}> {
  override get message() {
    return (
      `The model server looks down: ${this.consecutive} tasks in a row could not use it (${this.lastError}). ` +
      `Finished tasks are kept in ${this.runDir}; start the server and rerun the same command with --resume.`
    )
  }
}

type Outcome = "skipped" | "recorded" | "answered" | "not_recorded"

/** Drop prompts from model_call events unless a full trace was asked for: they dominate a record's size. */
const slimEvents = (events: ReadonlyArray<RunEvent>, full: boolean): Array<RunEvent> =>
  full
    ? [...events]
    : events.map((e) => {
        if (e.type !== "smurfs.model_call" || !("messages" in e.data)) return e
        const { messages: _dropped, ...data } = e.data
        return { ...e, data }
      })

/** Write `converted/<method>/<group>.json` for every method and group from the records on disk. */
export const writeConverted = (
  runDir: string,
  methods: ReadonlyArray<string>,
  groups: ReadonlyArray<string>,
  taskFor: (group: string, id: string) => Task | undefined
): Effect.Effect<Array<string>, RunDirError> =>
  Effect.gen(function* () {
    const written: Array<string> = []
    const finish = finishSpec()
    for (const method of methods)
      for (const group of groups) {
        const records = readRecords(runDir, method, group).sort((a, b) => Number(a.taskId) - Number(b.taskId) || a.taskId.localeCompare(b.taskId))
        if (records.length === 0) continue
        const file: ConvertedFile = {}
        for (const record of records) {
          const task = taskFor(group, record.taskId)
          const specs = task
            ? toolSpecs(task.tools)
            : record.availableTools.map((name) => ({ name, description: "", parameters: { type: "object", properties: {}, required: [] } }))
          file[record.taskId] = toConverted(record, specs, finish)
        }
        const path = convertedPath(runDir, method, group)
        yield* writeJsonAtomic(path, file)
        written.push(path)
      }
    return written
  })

/**
 * Run every method on every query. Each finished task is written atomically to its own record file,
 * so a killed run resumes with no task lost or done twice; tasks that could not reach the model server
 * are not recorded; after `stopAfterUnreachable` of them in a row the run stops with ModelServerDown.
 */
export const runBench = (options: RunnerOptions): Effect.Effect<RunSummary, RunDirError | ModelServerDown, LanguageModel> =>
  Effect.gen(function* () {
    const progress = options.progress ?? silentProgress
    const stopAfter = options.stopAfterUnreachable ?? RUNNER_DEFAULTS.stopAfterUnreachable
    const fullTrace = options.fullTrace ?? RUNNER_DEFAULTS.fullTrace
    yield* openRunDir(options.runDir, options.config, options.resume)
    const base = yield* LanguageModel

    const tasks = new Map<string, Task>()
    const taskFor = (query: BenchQuery): Task => {
      const key = `${query.group}/${query.id}`
      let task = tasks.get(key)
      if (!task) tasks.set(key, (task = options.taskOf(query)))
      return task
    }
    // Query-major order: a run stopped half-way holds every method on the same queries, ready to compare.
    // Longest expected tasks first, so that the last slots of a run are not left waiting on one long task.
    const jobs = longestFirst(options.queries).flatMap((query) => options.methods.map((entry) => ({ entry, query, path: taskRecordPath(options.runDir, entry.name, query.group, query.id) })))
    const pending = jobs.filter((job) => !(existsSync(job.path) && readRecord(job.path)))
    progress.start(jobs.length, jobs.length - pending.length)

    let consecutiveUnreachable = 0
    const runJob = ({ entry, query, path }: (typeof jobs)[number]): Effect.Effect<Outcome, RunDirError | ModelServerDown> =>
      Effect.gen(function* () {
        const started = Date.now()
        const startedAt = new Date(started).toISOString()
        // Watch this task's model calls: a task that met a dead server (or one without the model) is not a result.
        let unreachable: ModelUnreachable | ModelNotFound | undefined
        const watched = LanguageModel.of({
          info: base.info,
          generate: (request) =>
            base.generate(request).pipe(Effect.tapError((e) => Effect.sync(() => void ((e._tag === "ModelUnreachable" || e._tag === "ModelNotFound") && (unreachable = e)))))
        })
        const exit = yield* Effect.exit(
          Effect.suspend(() => entry.method(taskFor(query))).pipe(Effect.provideService(LanguageModel, watched))
        )
        const report = (finishType: "give_answer" | "give_up" | "unreachable" | "failed", modelCalls = 0, tokens = 0) =>
          progress.taskDone({ method: entry.name, group: query.group, taskId: query.id, finishType, modelCalls, tokens, wallMs: Date.now() - started })
        if (exit._tag === "Failure") {
          if (Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
          // A method must not fail; if one crashes anyway the task stays undone (a resume retries it).
          progress.log(redactText(`${entry.name} ${query.group}/${query.id} crashed and was not recorded: ${Cause.pretty(exit.cause).split("\n")[0]}`))
          report("failed")
          return "not_recorded"
        }
        const trajectory = exit.value
        if (unreachable) {
          consecutiveUnreachable++
          report("unreachable")
          if (consecutiveUnreachable >= stopAfter)
            return yield* new ModelServerDown({ consecutive: consecutiveUnreachable, runDir: options.runDir, lastError: unreachable.message })
          return "not_recorded"
        }
        consecutiveUnreachable = 0
        const record: TaskRecord = {
          formatVersion: RUN_FORMAT_VERSION,
          taskId: query.id,
          group: query.group,
          method: entry.name,
          model: options.modelSpec,
          query: query.query,
          availableTools: taskFor(query).tools.tools.map((t) => t.name),
          finalAnswer: trajectory.finalAnswer,
          finishType: trajectory.finishType,
          ...(trajectory.error !== undefined ? { error: trajectory.error } : {}),
          totals: { ...trajectory.totals, guardrails: { ...trajectory.totals.guardrails } },
          events: slimEvents(trajectory.events, fullTrace),
          startedAt,
          finishedAt: new Date().toISOString()
        }
        // a model or tool may have echoed an API key or an Authorization header; none reaches the disk
        yield* writeJsonAtomic(path, redactValue(record))
        report(trajectory.finishType, trajectory.totals.modelCalls, trajectory.totals.promptTokens + trajectory.totals.completionTokens)
        return trajectory.finishType === "give_answer" ? "answered" : "recorded"
      })

    const outcomes = yield* Effect.forEach(pending, runJob, { concurrency: Math.max(1, options.concurrency) }).pipe(Effect.ensuring(Effect.sync(() => progress.stop())))

    const queryById = new Map(options.queries.map((q) => [`${q.group}/${q.id}`, q]))
    const groups = [...new Set(options.queries.map((q) => q.group))]
    const convertedFiles = yield* writeConverted(
      options.runDir,
      options.methods.map((m) => m.name),
      groups,
      (group, id) => {
        const query = queryById.get(`${group}/${id}`)
        return query ? taskFor(query) : undefined
      }
    )
    const count = (o: Outcome) => outcomes.filter((x) => x === o).length
    return {
      total: jobs.length,
      skipped: jobs.length - pending.length,
      recorded: count("recorded") + count("answered"),
      answered: count("answered"),
      notRecorded: count("not_recorded"),
      convertedFiles
    } satisfies RunSummary
  })
