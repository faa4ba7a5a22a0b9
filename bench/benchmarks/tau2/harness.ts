// τ²-bench as a benchmark of the bench: the domain's tasks as the run's tasks (group = domain, id = task id), one
// conversation per task, agent and trial as one record, τ²'s reward as the record's label (judge "tau2"), so that
// `compare`, `results` and the report read it as they read a judge's, pass^k over the trials included.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { smurfsProfileOptions } from "../../../src/agents/profile.ts"
import type { Method } from "../../../src/agents/task.ts"
import { LanguageModel, type LanguageModelShape } from "../../../src/llm/language-model.ts"
import { PoolStats, poolStatsLayer } from "../../../src/llm/pool.ts"
import { withRequestDefaults } from "../../../src/llm/request-defaults.ts"
import { checkModelPresent, standaloneModel } from "../../../src/llm/spec.ts"
import { writeJsonAtomic } from "../../../src/trace/atomic-write.ts"
import { version } from "../../../src/version.ts"
import { type BenchOutcome, benchModelLayer, queueExecutorFor } from "../../app.ts"
import { type BenchQuery, DatasetError } from "../../datasets.ts"
import { missCounts } from "../../eval/judge-input.ts"
import { type PassLabels, passLabelsPath } from "../../eval/labels.ts"
import type { TaskExecutor, TaskJob, TaskResult } from "../../execute-task.ts"
import type { Progress } from "../../progress.ts"
import type { QueueUnavailable } from "../../queue/connection.ts"
import { readRecords } from "../../run-dir.ts"
import { RUN_FORMAT_VERSION, type RunConfig, runOf, type TaskRecord } from "../../run-format.ts"
import { type MethodEntry, runBench } from "../../runner.ts"
import { agentRunsOf, type BenchSettings, type JobSettings, jobSettingsOf, repeatsRuns } from "../../settings.ts"
import { CONVERSATION_LIMITS } from "./conversation.ts"
import { runConversationTask } from "./conversation-task.ts"
import { agentInstructionOf } from "./conversers.ts"
import { type NlJudge, nlJudgePromptOf } from "./nl-judge.ts"
import type { Tau2DomainLoader, Tau2DomainView } from "./port.ts"
import { isSuccess, Tau2RecordData } from "./transcript.ts"
import { scenarioText, userGuidelinesOf } from "./user-simulator.ts"

/** The judge name τ²'s rewards are stored under: `eval/tau2/pass/...`, read by compare and results as a judge's labels. */
export const TAU2_JUDGE = "tau2"

/** The run's tasks: the domain's, narrowed by --ids and --limit, as the runner's queries. */
export const tau2Queries = (
  domain: Tau2DomainView,
  settings: Pick<BenchSettings, "ids" | "limit" | "tau2" | "taskSplit">
): Effect.Effect<ReadonlyArray<BenchQuery>, DatasetError> =>
  Effect.gen(function* () {
    const split = settings.taskSplit === undefined ? undefined : domain.splits?.[settings.taskSplit]
    if (settings.taskSplit !== undefined && split === undefined)
      return yield* new DatasetError({
        path: settings.tau2 ?? domain.name,
        problem: `the ${domain.name} domain has no task split "${settings.taskSplit}"`,
        hint: `Use one of its splits (split_tasks.json: ${Object.keys(domain.splits ?? {}).join(", ") || "none"}), or leave --task-split out for every task.`
      })
    const inSplit = split === undefined ? undefined : new Set(split)
    const wanted = settings.ids === undefined ? undefined : new Set(settings.ids)
    if (wanted) {
      const known = new Set(domain.tasks.map((t) => t.id))
      const unknown = [...wanted].filter((id) => !known.has(id))
      if (unknown.length > 0)
        return yield* new DatasetError({
          path: settings.tau2 ?? domain.name,
          problem: `the ${domain.name} domain has no task ${unknown.slice(0, 10).join(", ")}`,
          hint: "Check --ids against the id fields of the domain's tasks.json."
        })
    }
    const chosen = domain.tasks.filter(
      (t) => (wanted === undefined || wanted.has(t.id)) && (inSplit === undefined || inSplit.has(t.id))
    )
    return (settings.limit === undefined ? chosen : chosen.slice(0, settings.limit)).map((t) => ({
      group: domain.name,
      id: t.id,
      query: scenarioText(t.user_scenario),
      apiList: [],
      relevant: []
    }))
  })

/** The label a conversation's reward gives (Solved only at reward 1, as τ²'s pass^k counts a success). */
export const rewardLabels = (record: TaskRecord): PassLabels | undefined => {
  const parsed = Tau2RecordData.safeParse(record.benchmark)
  if (!parsed.success || record.finishType === "error") return undefined
  const { reward, termination } = parsed.data
  const parts = Object.entries(reward.breakdown ?? {}).map(([k, v]) => `${k} ${v}`)
  const reason =
    `reward ${reward.reward} (${termination}${parts.length > 0 ? `; ${parts.join(", ")}` : ""})` +
    (reward.notes?.length ? `: ${reward.notes.join("; ")}` : "")
  const run = runOf(record)
  return {
    taskId: record.taskId,
    method: record.method,
    group: record.group,
    judge: TAU2_JUDGE,
    k: 1,
    ...(run > 0 ? { agentRun: run } : {}),
    runs: { "0": { label: isSuccess(reward.reward) ? "Solved" : "Unsolved", reason, stage: "rule" } }
  }
}

/** Write every record's reward label (a label lost to a kill between the record and its label is written again). */
export const writeRewardLabels = (runDir: string, methods: ReadonlyArray<string>, groups: ReadonlyArray<string>) =>
  Effect.forEach(
    methods.flatMap((m) => groups.flatMap((g) => readRecords(runDir, m, g))),
    (record) => {
      const labels = rewardLabels(record)
      return labels === undefined
        ? Effect.void
        : writeJsonAtomic(
            {
              root: runDir,
              path: passLabelsPath(runDir, TAU2_JUDGE, record.method, record.group, record.taskId, runOf(record))
            },
            labels
          )
    },
    { discard: true }
  )

/** Before anything runs: the checkout's texts must be readable when it has them (throws what is wrong). */
export const checkTau2Settings = (settings: BenchSettings): void => {
  if (settings.tau2 === undefined) return
  try {
    userGuidelinesOf(settings.tau2)
    agentInstructionOf(settings.tau2)
    if (settings.judge !== undefined) nlJudgePromptOf(settings.tau2)
  } catch (e) {
    throw new Error(
      `--tau2 ${settings.tau2}: cannot read τ²'s texts (${(e as Error).message.split("\n")[0]}). Point --tau2 at a τ²-bench checkout (smurfs data pull tau2).`
    )
  }
}

/** run.json of a τ² run. */
const runConfigOf = (
  settings: BenchSettings & { tau2: string },
  domain: Tau2DomainView,
  queries: ReadonlyArray<BenchQuery>,
  modelName: string,
  texts: { readonly agent: string; readonly user: string; readonly judge?: string | undefined }
): RunConfig => ({
  formatVersion: RUN_FORMAT_VERSION,
  packageVersion: version,
  createdAt: new Date().toISOString(),
  data: settings.tau2,
  groups: [domain.name],
  methods: settings.methods,
  model: settings.model,
  modelName,
  envs: ["tau2"],
  toolset: "all",
  ...(settings.limit !== undefined ? { limit: settings.limit } : {}),
  ...(settings.ids !== undefined ? { ids: settings.ids } : {}),
  concurrency: settings.concurrency,
  taskCounts: { [domain.name]: queries.length },
  options: {
    benchmark: "tau2",
    domain: domain.name,
    userModel: settings.userModel,
    ...(settings.taskSplit === undefined ? {} : { taskSplit: settings.taskSplit }),
    // whose texts the agent and the user were prompted with: τ²'s from the checkout, or ours
    agentPrompt: texts.agent,
    userGuidelines: texts.user,
    // the judge of the natural-language assertions and whose instructions it had (τ²'s from the checkout, or ours)
    ...(settings.judge === undefined ? {} : { judge: settings.judge, judgePrompt: texts.judge }),
    limits: CONVERSATION_LIMITS,
    temperature: settings.temperature ?? 0,
    seed: settings.seed ?? null,
    modelConcurrency: settings.modelConcurrency ?? null,
    timeoutMs: settings.timeoutMs ?? null,
    fullTrace: settings.fullTrace,
    ...(repeatsRuns(settings) ? { runs: agentRunsOf(settings).map((r) => r.seed) } : {})
  }
})

/** The runner's method entries: conversations run through `runTask`, never as a Method on a Task. */
const notATaskMethod: Method = () => Effect.die(new Error("a conversation runs through the benchmark's runTask"))

/** What a conversation runs with besides its job: the domain, τ²'s texts and the user's model, on either machine. */
export interface ConversationSetup {
  readonly domain: Tau2DomainView
  readonly guidelines: string
  readonly agentInstruction: string
  readonly userModel: LanguageModelShape
  /** The judge of the task's natural-language assertions (`--judge`, in this process only); none: not evaluated. */
  readonly nlJudge?: NlJudge | undefined
}

/** A conversation job to its record, as the run's settings say (in this process, or on a queue worker's session). */
export const conversationRunner =
  (settings: BenchSettings, setup: ConversationSetup) =>
  (job: TaskJob): Effect.Effect<TaskResult, never, LanguageModel> =>
    runConversationTask(job, {
      domain: setup.domain,
      guidelines: setup.guidelines,
      agentInstruction: setup.agentInstruction,
      // each trial's seed on the user's requests too, as τ² seeds both sides
      userModel: job.seed === undefined ? setup.userModel : withRequestDefaults(setup.userModel, { seed: job.seed }),
      userModelSpec: settings.userModel!,
      modelSpec: settings.model,
      smurfs: settings.methods.includes("chat")
        ? {
            ...smurfsProfileOptions(settings.profile, settings.smurfsSrc, settings.temperature),
            maxSteps: settings.smurfsMaxSteps
          }
        : undefined,
      fullTrace: settings.fullTrace,
      maxRecordBytes: settings.maxRecordBytes,
      nlJudge: setup.nlJudge
    })

/** Whose text it is: τ²'s own from the checkout, or ours. */
export const textSourceOf = (source: string): "tau2" | "smurfs" => (source.startsWith("tau2:") ? "tau2" : "smurfs")

const withoutToolDescriptions = ({ toolDescriptions: _, ...rest }: JobSettings): JobSettings => rest

/** What a queued conversation carries: the run options, the domain, the user's model and whose texts prompt them. */
export const tau2JobSettings = (
  settings: BenchSettings,
  texts: { readonly agent: string; readonly user: string }
): JobSettings => ({
  ...withoutToolDescriptions(jobSettingsOf(settings)),
  // (StableToolBench's texts prompt nothing of a conversation: the worker needs no --stb for it)
  prompts: "smurfs",
  tau2: {
    domain: settings.domain,
    userModel: settings.userModel!,
    ...(settings.taskSplit === undefined ? {} : { taskSplit: settings.taskSplit }),
    agentPrompt: textSourceOf(texts.agent),
    userGuidelines: textSourceOf(texts.user)
  }
})

/** A conversation's reward label, written beside its record as soon as the record comes (here or from a worker). */
const writeRewardLabel = (runDir: string, result: TaskResult) => {
  const labels = result.kind === "record" ? rewardLabels(result.record) : undefined
  return labels === undefined
    ? Effect.void
    : writeJsonAtomic(
        {
          root: runDir,
          path: passLabelsPath(runDir, TAU2_JUDGE, labels.method, labels.group, labels.taskId, labels.agentRun ?? 0)
        },
        labels
      ).pipe(Effect.ignore)
}

/** A τ² run: the conversations into the run directory, each record with its reward and label. */
export const runTau2 = (settings: BenchSettings, progress: Progress, loadDomain: Tau2DomainLoader) =>
  Effect.gen(function* () {
    const tau2 = settings.tau2!
    const userSpec = settings.userModel!
    const domain = yield* loadDomain(tau2, settings.domain)
    const queries = yield* tau2Queries(domain, settings)
    if (queries.length === 0) return { kind: "no-queries" } as BenchOutcome
    const model = yield* LanguageModel
    const guidelines = userGuidelinesOf(tau2)
    const instruction = agentInstructionOf(tau2)
    const judgeSpec = settings.judge
    const judgePrompt = judgeSpec === undefined ? undefined : nlJudgePromptOf(tau2)
    const nlJudge =
      judgeSpec === undefined || judgePrompt === undefined
        ? undefined
        : {
            model: yield* standaloneModel(judgeSpec, { timeoutMs: settings.timeoutMs }),
            spec: judgeSpec,
            prompt: judgePrompt.text
          }
    const texts = { agent: instruction.source, user: guidelines.source }
    const config = runConfigOf({ ...settings, tau2 }, domain, queries, model.info.model, {
      ...texts,
      judge: judgePrompt?.source
    })
    const methods: Array<MethodEntry> = settings.methods.map((name) => ({ name, method: notATaskMethod }))
    // on a queue each conversation is a job a worker runs on its own checkout; its record is written here
    const queued =
      settings.queue === undefined
        ? undefined
        : yield* queueExecutorFor(
            settings,
            settings.queue,
            config,
            progress,
            undefined,
            tau2JobSettings(settings, texts)
          )
    const executor: TaskExecutor<QueueUnavailable> | undefined = queued && {
      ...queued,
      execute: (job) => queued.execute(job).pipe(Effect.tap((result) => writeRewardLabel(settings.out, result)))
    }
    // in this process (with a queue the runner sends the jobs to the workers instead, and writes what they give)
    const runTask = conversationRunner(settings, {
      domain,
      guidelines: guidelines.text,
      agentInstruction: instruction.text,
      userModel: yield* standaloneModel(userSpec, { timeoutMs: settings.timeoutMs }),
      nlJudge
    })
    const summary = yield* runBench({
      runDir: settings.out,
      config,
      queries,
      methods,
      runTask: (job) => runTask(job).pipe(Effect.tap((result) => writeRewardLabel(settings.out, result))),
      executor,
      concurrency: settings.concurrency,
      resume: settings.resume,
      force: settings.force,
      modelSpec: settings.model,
      stopAfterUnreachable: settings.stopAfter,
      fullTrace: settings.fullTrace,
      progress,
      maxRecordBytes: settings.maxRecordBytes,
      ...(repeatsRuns(settings) ? { agentRuns: agentRunsOf(settings) } : {})
    })
    yield* writeRewardLabels(settings.out, settings.methods, [domain.name])
    return {
      kind: "ran",
      summary,
      totals: progress.totals?.(),
      endpoints: (yield* PoolStats).snapshot(),
      misses: missCounts([]),
      next: `smurfs compare ${settings.out}`
    } as BenchOutcome
  })

/** Run a τ² bench from its settings, with the model under test in context (as runBenchSettings does for StableToolBench). */
export const runTau2Settings = (settings: BenchSettings, progress: Progress, loadDomain: Tau2DomainLoader) => {
  const layer = benchModelLayer(settings, {
    onEnd: (_role, response) =>
      progress.modelCall?.(response ? response.usage.promptTokens + response.usage.completionTokens : 0)
  })
  const run = runTau2(settings, progress, loadDomain).pipe(
    Effect.scoped,
    Effect.provide(layer.pipe(Layer.provideMerge(poolStatsLayer)))
  )
  // on a queue the workers' servers hold the models; a resumed run checks its settings against the run's first
  if (settings.resume || settings.queue !== undefined) return run
  // a misspelled model (or user model) fails here, before the run directory exists
  const present = (spec: string) =>
    Effect.tap(checkModelPresent(spec, { timeoutMs: settings.timeoutMs }), (warnings) =>
      Effect.sync(() => {
        for (const warning of warnings) progress.log(`${spec}: ${warning}`)
      })
    )
  const judge = settings.judge === undefined ? Effect.void : present(settings.judge)
  return Effect.andThen(
    present(settings.model),
    Effect.andThen(present(settings.userModel!), Effect.andThen(judge, run))
  )
}

/** The records of a run that hold τ² conversations (for readers that want them whole, as the transcript page). */
export const tau2DataOf = (record: TaskRecord): Tau2RecordData | undefined => {
  const parsed = Tau2RecordData.safeParse(record.benchmark)
  return parsed.success ? parsed.data : undefined
}

/** Whether a run directory holds a τ² run (its run.json says so). */
export const isTau2Run = (config: { readonly options: Readonly<Record<string, unknown>> }): boolean =>
  config.options["benchmark"] === "tau2"
