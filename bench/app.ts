// A bench run from its settings: methods, tasks, tool environments, the model layer, run.json and the queue,
// turned into a finished run and a summary value. The CLI only fills the settings and prints the summary.
import "./sim/provider.ts"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { baselinePrompts } from "../src/agents/baseline-prompts.ts"
import { DFSDT_DEFAULTS } from "../src/agents/dfsdt.ts"
import { finishSpec } from "../src/agents/finish.ts"
import { METHOD_NAMES, methodFor } from "../src/agents/methods.ts"
import {
  chainProfileOptions,
  checkProfile,
  PROFILE_SETTINGS,
  profileRecord,
  smurfsProfileOptions
} from "../src/agents/profile.ts"
import { resolveOptions } from "../src/agents/smurfs-options.ts"
import type { Task } from "../src/agents/task.ts"
import { attemptSeedsLayer, seedBase } from "../src/llm/attempt-seeds.ts"
import { modelCacheLayer } from "../src/llm/cache.ts"
import type { LanguageModelShape, ModelInfo } from "../src/llm/language-model.ts"
import { LanguageModel } from "../src/llm/language-model.ts"
import { type ModelCallObserver, observedModelLayer } from "../src/llm/observe.ts"
import { type EndpointStats, PoolStats, poolStatsLayer } from "../src/llm/pool.ts"
import { requestDefaultsLayer } from "../src/llm/request-defaults.ts"
import {
  checkModelPresent,
  isPortableSpec,
  isTestModelSpec,
  MODEL_DEFAULTS,
  type ModelOptions,
  modelLayer,
  standaloneModel
} from "../src/llm/spec.ts"
import { loadWithPeers, QUEUE_PEERS } from "../src/peer-packages.ts"
import { plural } from "../src/plural.ts"
import { STB_FILES } from "../src/text/stabletoolbench-files.ts"
import { makeToolCache } from "../src/tools/cache.ts"
import { makeEnvironmentChain } from "../src/tools/environments/chain.ts"
import type { ToolEnvironment } from "../src/tools/environments/environment.ts"
import { simulatorPrompts } from "../src/tools/environments/simulator-prompts.ts"
import { makeEmbedder } from "../src/tools/retrieval/embedder.ts"
import { toolsetLabel } from "../src/tools/retrieval/toolset.ts"
import { toolbenchLibrary } from "../src/tools/toolbench/adapter.ts"
import type { ApiDocInput } from "../src/tools/toolbench/api-doc.ts"
import {
  STB_TOOLS_ENV,
  type ToolsFolder,
  toolDescriptionsSource,
  toolsFolder
} from "../src/tools/toolbench/tools-folder.ts"
import { writeJsonAtomic } from "../src/trace/atomic-write.ts"
import { readFileBounded } from "../src/trace/guarded-fs.ts"
import { version } from "../src/version.ts"
import { CONVERSER_NAMES } from "./benchmarks/tau2/conversers.ts"
import { type BenchQuery, loadQueries } from "./datasets.ts"
import { missCounts } from "./eval/judge-input.ts"
import { runMissCounts } from "./eval/sources.ts"
import { runLedger } from "./ledger.ts"
import { methodToolsetOf, methodToolsetsOf } from "./method-toolsets.ts"
import type { Progress, ProgressTotals } from "./progress.ts"
import { QUEUE_DEFAULTS } from "./queue/connection.ts"
import { type QueuedTask, runIdOf } from "./queue/job.ts"
import { makeRecordSummaries, type RecordSummaries } from "./record-summary.ts"
import {
  makeRetrievalCorpus,
  makeRetrievalTasks,
  type RetrievalRecord,
  recordedRetrievalSets,
  taskKey
} from "./retrieval-tasks.ts"
import { RUN_FORMAT_VERSION, type RunConfig, runConfigPath } from "./run-format.ts"
import { type MethodEntry, type RunSummary, runBench } from "./runner.ts"
import {
  agentRunsOf,
  BenchSettings,
  type JobSettings,
  jobSettingsOf,
  limitsOf,
  pathsOf,
  repeatsRuns,
  type Tau2JobSettings,
  toolsetOf
} from "./settings.ts"
import { taskOf } from "./tasks.ts"

/** The worker's corpus is not the run's: its tasks would retrieve other tools. */
export class CorpusMismatch extends Error {
  override readonly name = "CorpusMismatch"
}

/** The prompt texts of the run (ours, or StableToolBench's read from the checkout); throws when the checkout cannot be read. */
export const promptsOf = (settings: Pick<BenchSettings, "stb">) => baselinePrompts(settings.stb)

/**
 * Read the texts a run's settings name before anything runs, so a bad checkout stops it at once: the
 * methods' prompts, the simulator's, and under the reference profile the checkouts its methods read.
 * Throws what is wrong (a missing checkout, a file that cannot be read).
 */
export const checkBenchSettings = (settings: BenchSettings): void => {
  promptsOf(settings)
  toolsFolderOf(settings)
  if (settings.envs.includes("simulated"))
    simulatorPrompts(settings.stb, settings.simulatorStyle, settings.profile === "reference")
  checkProfile(settings.profile, settings.methods, { stb: settings.stb, smurfsSrc: settings.smurfsSrc })
  if (settings.methods.includes("smurfs")) smurfsProfileOptions(settings.profile, settings.smurfsSrc)
}

/** The method options a run gives its methods. */
const methodRunOptions = (settings: BenchSettings) => ({
  toolCalling: settings.toolCalling,
  smurfsExecutor: settings.executor,
  tries: settings.tries,
  smurfsMaxSteps: settings.smurfsMaxSteps,
  singleChainMaxStep: settings.singleChainMaxStep,
  budget: settings.budget,
  observationLimit: settings.observationLimit,
  prompts: promptsOf(settings),
  // ToolEval labels an answer that lists what is missing Unsolved: bench answers with what was found only
  reportUnavailable: false,
  // the profile's agents, sampling and loop rules (under reference, the authors' texts read from the checkout)
  ...(settings.methods.includes("smurfs")
    ? { smurfsProfile: smurfsProfileOptions(settings.profile, settings.smurfsSrc, settings.temperature) }
    : {}),
  chainProfile: chainProfileOptions(settings.profile, settings.temperature, settings.chainOverrides)
})

/** The run's methods, built from the method registry. */
export const methodEntries = (settings: BenchSettings): Array<MethodEntry> => {
  const options = methodRunOptions(settings)
  return settings.methods.map((name) => ({ name, method: methodFor(name, options) }))
}

/** The Smurfs loop's limits as they ran, for run.json. */
const smurfsLimits = (settings: BenchSettings) => {
  const { maxSteps, maxAgentErrors, maxSubtasks, maxModelCalls, reportUnavailable } = resolveOptions({
    maxSteps: settings.smurfsMaxSteps,
    reportUnavailable: false
  })
  return { maxSteps, maxAgentErrors, maxSubtasks, maxModelCalls, reportUnavailable }
}

/** The simulator's model, built once per run (a second model server, apart from the model under test). */
const simulators = new WeakMap<BenchSettings, LanguageModelShape>()
const simulatorOf = (settings: BenchSettings, spec: string) =>
  Effect.gen(function* () {
    const built = simulators.get(settings)
    if (built) return built
    const model = yield* standaloneModel(spec, { timeoutMs: settings.timeoutMs })
    simulators.set(settings, model)
    return model
  })

/** The tool environment of a run's tasks. */
const benchEnvironment = (settings: BenchSettings) =>
  Effect.gen(function* () {
    const { responses, cacheDir, storeDir, simulatorCacheDir } = pathsOf(settings)
    const chain = yield* makeEnvironmentChain(settings.envs, {
      responses,
      cacheDir,
      // under reference, StableToolBench's server's keys: str(tool_input) of the arguments as written
      replayMatch: PROFILE_SETTINGS[settings.profile].replayMatch,
      storeDir,
      // the store inside the run directory follows no symbolic link below it
      storeRoot: settings.out,
      simulatorPrompts: simulatorPrompts(settings.stb, settings.simulatorStyle, settings.profile === "reference"),
      ...(settings.simulator === undefined
        ? {}
        : { simulator: yield* simulatorOf(settings, settings.simulator), writeCacheDir: simulatorCacheDir })
    })
    // Replay and offline answers are final, so failed results are worth caching too.
    return settings.callCache === undefined
      ? chain
      : (yield* makeToolCache({ dir: settings.callCache, cacheErrors: true })).wrapEnvironment(chain)
  })

/** A query's Task on its whole api_list or its relevant APIs, served by the run's tool environment. */
export const listedTask =
  (toolset: "all" | "relevant", env: ToolEnvironment, whole = false, folder?: ToolsFolder) =>
  (query: BenchQuery) =>
    taskOf(query, toolset, (name, docs) =>
      toolbenchLibrary(name, docs as ReadonlyArray<ApiDocInput>, env, {
        ...(whole ? { maxObservationChars: Number.POSITIVE_INFINITY } : {}),
        ...(folder ? { toolsFolder: folder } : {})
      })
    )

/** The run's tools folder (`--stb-tools`), whose tool descriptions the tasks carry; none without it. */
export const toolsFolderOf = (settings: Pick<BenchSettings, "stbTools">): ToolsFolder | undefined =>
  settings.stbTools === undefined ? undefined : toolsFolder(settings.stbTools)

/** A query's Task for a method, on the method's listed toolset (docs/fidelity.md: each method its own tools). */
const listedTasks = (settings: BenchSettings, env: ToolEnvironment) => {
  const whole = PROFILE_SETTINGS[settings.profile].wholeToolResponses
  const folder = toolsFolderOf(settings)
  const all = listedTask("all", env, whole, folder)
  const relevant = listedTask("relevant", env, whole, folder)
  return (query: BenchQuery, method: string): Task =>
    methodToolsetOf(settings, method) === "relevant" ? relevant(query) : all(query)
}

/** The corpus and retriever of `--toolset retrieve[:k]`, with the run's model as re-ranker when asked. */
const retrievalCorpus = (settings: BenchSettings, k: number, warn?: (text: string) => void) =>
  Effect.gen(function* () {
    const model = yield* LanguageModel
    return yield* makeRetrievalCorpus({
      data: settings.data,
      env: yield* benchEnvironment(settings),
      k,
      embedder:
        settings.embed === undefined
          ? undefined
          : yield* makeEmbedder(settings.embed, { timeoutMs: settings.timeoutMs }),
      embeddingCache: pathsOf(settings).embedCache,
      reranker: settings.rerank ? model : undefined,
      warn
    })
  })

/**
 * How a queue worker builds a job's task from the run's settings. With `--toolset retrieve` it builds
 * the corpus from its own data once, takes the task's set from the job (as the coordinator retrieved
 * and recorded it) and retrieves per subtask exactly as the bench does in process.
 */
export const taskBuilder = (settings: BenchSettings) =>
  Effect.gen(function* () {
    const toolset = toolsetOf(settings)
    if (toolset.kind === "retrieve") {
      const corpus = yield* retrievalCorpus(settings, toolset.k)
      return (query: BenchQuery, retrieval: QueuedTask["retrieval"]): Effect.Effect<Task, Error> =>
        Effect.gen(function* () {
          if (retrieval !== undefined && retrieval.corpusHash !== corpus.settings.corpusHash)
            return yield* Effect.fail(
              new CorpusMismatch(
                `the ToolBench corpus under this worker's data (${settings.data}, ${corpus.settings.corpusApis} APIs) is not the run's, so its tasks would retrieve other tools. ` +
                  "Give the worker the same data as the coordinator (smurfs worker --data <dir>)."
              )
            )
          return corpus.taskOf(query, retrieval?.set ?? (yield* corpus.setOf(query)))
        })
    }
    const listed = listedTasks(settings, yield* benchEnvironment(settings))
    return (query: BenchQuery, _retrieval: QueuedTask["retrieval"], method: string): Effect.Effect<Task, Error> =>
      Effect.succeed(listed(query, method))
  })

/** How the run's model is called. */
const modelOptionsOf = (settings: BenchSettings) => ({
  // Ollama serves OLLAMA_NUM_PARALLEL requests at once (its own default applies); other servers get one slot per task.
  concurrency: settings.modelConcurrency ?? (settings.model.startsWith("ollama:") ? undefined : settings.concurrency),
  timeoutMs: settings.timeoutMs,
  think: settings.think,
  slotAffinity: settings.slotAffinity,
  lanes: settings.lanes === "off" ? undefined : settings.lanes,
  laneGraceMs: settings.laneGraceMs,
  endpoints: settings.endpoints,
  temperature: settings.temperature,
  seed: settings.seed,
  numCtx: settings.numCtx
})

/**
 * The model layer of a run: the served model (one server or a pool, with model lanes when they apply), behind the call
 * cache when asked. `onLaneWait` hears of tasks waiting for a lane.
 */
export const benchModelLayer = (
  settings: BenchSettings,
  observer?: ModelCallObserver,
  onLaneWait?: ModelOptions["onLaneWait"]
) => {
  const resolved = modelLayer(settings.model, { ...modelOptionsOf(settings), onLaneWait })
  // below the call cache: what is observed is what a server answers, as it answers
  const observed = observer === undefined ? resolved : Layer.provide(observedModelLayer(observer), resolved)
  // --temperature on every request that sets none, so the call cache keys replies by it (the seed is set per attempt)
  const served =
    settings.temperature === undefined
      ? observed
      : Layer.provide(requestDefaultsLayer({ temperature: settings.temperature }), observed)
  const cached =
    settings.callCache === undefined ? served : Layer.provide(modelCacheLayer({ dir: settings.callCache }), served)
  // above the cache: a prompt sent again (a retry, a try of --tries) is another attempt with its own seed
  return Layer.provide(attemptSeedsLayer({ base: seedBaseOf(settings) }), cached)
}

/**
 * The first seed of a run's requests: --seed, else under `reference` none (the references send none, and their
 * retries rely on sampling anew), else MODEL_DEFAULTS.seed. Each later send of the same prompt adds one.
 */
export const seedBaseOf = (settings: Pick<BenchSettings, "seed" | "profile">): number | null =>
  seedBase(settings.seed, settings.profile === "reference")

/** run.json of a run: its settings, defaults resolved, and what it found (the model's name, the task counts). */
export const runConfigOf = (
  settings: BenchSettings,
  queries: ReadonlyArray<BenchQuery>,
  modelName: string,
  retrieval: RetrievalRecord | undefined,
  modelInfo?: ModelInfo
): RunConfig => {
  const paths = pathsOf(settings)
  const limits = limitsOf(settings)
  return {
    formatVersion: RUN_FORMAT_VERSION,
    packageVersion: version,
    createdAt: new Date().toISOString(),
    data: settings.data,
    groups: settings.groups,
    methods: settings.methods,
    model: settings.model,
    modelName,
    ...(modelInfo === undefined ? {} : { modelInfo: { ...modelInfo } }),
    envs: settings.envs,
    toolset: toolsetLabel(toolsetOf(settings)),
    // each method's own: under --profile reference smurfs has the relevant APIs, react/dfsdt the api_list
    toolsets: methodToolsetsOf(settings),
    ...(retrieval ? { retrieval } : {}),
    ...(settings.limit !== undefined ? { limit: settings.limit } : {}),
    ...(settings.ids !== undefined ? { ids: settings.ids } : {}),
    concurrency: settings.concurrency,
    taskCounts: Object.fromEntries(settings.groups.map((g) => [g, queries.filter((q) => q.group === g).length])),
    options: {
      toolCalling: settings.toolCalling,
      // smurfs' requests per step: results of the two executors never mix (resume refuses, labels are keyed by it)
      ...(settings.methods.includes("smurfs") ? { executor: settings.executor } : {}),
      tries: limits.tries,
      // what ran, each method with its own limit (smurfs: every loop limit, defaults resolved)
      smurfs: smurfsLimits(settings),
      singleChainMaxStep: limits.singleChainMaxStep,
      giveUpBackLength: DFSDT_DEFAULTS.giveUpBackLength,
      prompts: promptsOf(settings).source,
      // each tool's own description (issue 32 §8): StableToolBench's tools folder, or its first API's
      toolDescriptions: toolDescriptionsSource(settings.stbTools),
      budget: limits.budget,
      observationLimit: limits.observationLimit,
      modelConcurrency: settings.modelConcurrency ?? null,
      timeoutMs: settings.timeoutMs ?? null,
      think: settings.think ?? null,
      slotAffinity: settings.slotAffinity ?? null,
      lanes: settings.lanes,
      laneGraceMs: settings.laneGraceMs ?? null,
      responses: paths.responses ?? null,
      cacheDir: paths.cacheDir ?? null,
      // how replay matches arguments (the profile's: exact under reference): the environment ledger and compare read it
      replayMatch: PROFILE_SETTINGS[settings.profile].replayMatch,
      callCache: settings.callCache ?? null,
      profile: profileRecord(
        settings.profile,
        settings.temperature,
        {
          smurfs: settings.smurfsSrc === undefined ? undefined : `smurfs-src:${settings.smurfsSrc}`,
          stb: settings.stb
        },
        settings.chainOverrides
      ),
      temperature: settings.temperature ?? MODEL_DEFAULTS.temperature,
      seed: seedBaseOf(settings),
      // each send of the same prompt its own seed (issue 32 §2); earlier runs sent one seed to every attempt
      seeds: seedBaseOf(settings) === null ? "none" : "per-attempt",
      numCtx: settings.numCtx ?? MODEL_DEFAULTS.numCtx,
      // who answered calls nothing recorded: a simulator (its texts and cache); absent when nobody did (misses are counted),
      // so that a run started before this field resumes as it was
      ...(settings.envs.includes("simulated")
        ? {
            simulator: {
              model: settings.simulator ?? settings.model,
              prompts: simulatorPrompts(settings.stb, settings.simulatorStyle, settings.profile === "reference").source,
              cacheDir: settings.simulator === undefined ? null : paths.simulatorCacheDir
            }
          }
        : {}),
      ...(retrieval ? { retrieval: retrieval.settings } : {}),
      // the seeds of the agent runs (`--runs` / `--seeds`), one record each; absent: one run with `seed`
      ...(repeatsRuns(settings) ? { runs: agentRunsOf(settings).map((r) => r.seed) } : {})
    }
  }
}

/** The run's id on the queue: stable across --resume of the same run directory. */
const runIdFor = (out: string, config: RunConfig): string => {
  try {
    const existing = JSON.parse(readFileBounded(runConfigPath(out))) as { createdAt?: unknown }
    if (typeof existing.createdAt === "string") return runIdOf(out, existing.createdAt)
  } catch {
    // a new run: its own creation time names it
  }
  return runIdOf(out, config.createdAt)
}

/**
 * The queue's executor; bullmq and ioredis (optional peer packages) load here, or are named when missing. A benchmark
 * whose jobs carry more than the run options (τ²'s conversations) gives its own `jobSettings`.
 */
export const queueExecutorFor = (
  settings: BenchSettings,
  queueUrl: string,
  config: RunConfig,
  progress: Progress,
  retrieval: RetrievalRecord | undefined,
  jobSettings: JobSettings = jobSettingsOf(settings)
) =>
  Effect.flatMap(
    loadWithPeers(QUEUE_PEERS, () => import("./queue/queue-executor.ts")),
    ({ makeQueueExecutor }) =>
      makeQueueExecutor({
        // a retrieved task goes with its recorded set; the worker retrieves per subtask from its copy of the corpus
        retrievalOf: retrieval
          ? (job) => ({ set: retrieval.sets[taskKey(job.query)] ?? [], corpusHash: retrieval.settings.corpusHash })
          : undefined,
        ...QUEUE_DEFAULTS,
        queueUrl,
        runId: runIdFor(settings.out, config),
        settings: jobSettings,
        onRequeued: (count) =>
          progress.log(
            `the queue had lost ${count === 1 ? "a task" : `${count} tasks`} (Redis restarted empty or was flushed): queued again`
          ),
        onRefused: (message) => progress.log(message),
        // the workers make the model calls: their reports move the live counts
        onTaskCalls: (job, calls) =>
          progress.taskCalls?.(
            { method: job.method, group: job.query.group, taskId: job.query.id },
            calls.modelCalls,
            calls.tokens
          )
      })
  )

/** Add the endpoints' figures to run.json (written at the start; only this field changes). */
const recordEndpointStats = (out: string, endpoints: ReadonlyArray<EndpointStats>) =>
  Effect.gen(function* () {
    const path = runConfigPath(out)
    const current = yield* Effect.try({
      try: () => JSON.parse(readFileBounded(path)) as Record<string, unknown>,
      catch: () => undefined
    }).pipe(Effect.orElseSucceed(() => undefined))
    if (current) yield* writeJsonAtomic(path, { ...current, endpointStats: endpoints })
  })

/**
 * Count the run's misses (tool calls nothing recorded or simulated) over its task records and add
 * them to run.json, so that a pass rate is never read without them.
 */
const recordMisses = (out: string, written?: RecordSummaries) =>
  Effect.gen(function* () {
    // the records are read one at a time: a run's records are never all held at once; those this invocation wrote
    // are not read back, their summaries were kept as they were written
    const misses = yield* Effect.try({ try: () => runMissCounts(out, written?.get), catch: () => undefined }).pipe(
      Effect.orElseSucceed(() => missCounts([]))
    )
    // the environment ledger: every call by how it was served, per method
    const ledger = yield* Effect.try({ try: () => runLedger(out, written?.get), catch: () => undefined }).pipe(
      Effect.orElseSucceed(() => ({}))
    )
    const path = runConfigPath(out)
    const current = yield* Effect.try({
      try: () => JSON.parse(readFileBounded(path)) as Record<string, unknown>,
      catch: () => undefined
    }).pipe(Effect.orElseSucceed(() => undefined))
    if (current) yield* writeJsonAtomic(path, { ...current, misses, ledger })
    return misses
  })

/**
 * What to tell before a run of several agent runs whose requests do not sample (temperature 0): their seeds
 * change nothing unless the server samples anyway, so the runs come out identical. Undefined otherwise.
 */
export const identicalRunsNote = (settings: BenchSettings): string | undefined => {
  if (!repeatsRuns(settings)) return undefined
  const profile = PROFILE_SETTINGS[settings.profile]
  const temperatureOf = (method: string) =>
    settings.temperature ??
    (method === "smurfs" ? profile.smurfs.temperature : profile.chain.temperature) ??
    MODEL_DEFAULTS.temperature
  const methods = settings.methods.filter((m) => temperatureOf(m) === 0)
  if (methods.length === 0) return undefined
  const runs = agentRunsOf(settings).length
  return (
    `note: ${methods.join(", ")} ${methods.length === 1 ? "samples" : "sample"} at temperature 0, so ${methods.length === 1 ? "its" : "their"} ${runs} runs differ only in their seeds: ` +
    "they come out identical unless the server samples anyway. Give --temperature (or --profile reference) for runs that vary."
  )
}

/**
 * Said once at the start of a run whose react/dfsdt task descriptions or simulator would show a tool's own description
 * and that has no tools folder (`--stb-tools`) to read it from (issue 32 §8); run.json records `toolDescriptions`.
 */
export const toolDescriptionsNote = (settings: BenchSettings): string | undefined => {
  if (settings.stbTools !== undefined) return undefined
  const chains = settings.methods.filter((m) => m === "react" || m === "dfsdt")
  const uses = [
    ...(chains.length === 0
      ? []
      : [`${chains.join("/")}'s task description describes each tool by its first API's description`]),
    ...(settings.envs.includes("simulated") ? ["the simulator's api_doc has an empty tool description"] : [])
  ]
  if (uses.length === 0) return undefined
  return (
    `note: no StableToolBench tools folder (--stb-tools or ${STB_TOOLS_ENV}), so ${uses.join(", and ")}, ` +
    "where StableToolBench reads each tool's own from its tools folder; run.json records toolDescriptions: api-list."
  )
}

/**
 * Said once at the start of a reference run of dfsdt whose StableToolBench checkout has no DFS.py (a partial copy of
 * their prompt files): the line that repeats a state's observation below the diversity prompt is then ours.
 */
export const partialCheckoutNote = (settings: BenchSettings): string | undefined =>
  settings.profile === "reference" &&
  settings.methods.includes("dfsdt") &&
  settings.stb !== undefined &&
  promptsOf(settings).history?.formerObservation === undefined
    ? `note: ${settings.stb} has no ${STB_FILES.dfs} (a partial copy of StableToolBench), so the line of DFSDT's diversity prompt that repeats a state's observation is ours; a full checkout sends theirs.`
    : undefined

/** The command to run next: judge the run, with the benchmarked model as judge unless it is a test model. */
export const nextCommand = (settings: BenchSettings): string =>
  `smurfs eval --run ${settings.out} --judge ${isTestModelSpec(settings.model) ? "<judge model spec>" : settings.model}`

/** What a run did: nothing matched, or its summary with the live totals and the endpoints' figures. */
export type BenchOutcome =
  | { readonly kind: "no-queries" }
  | {
      readonly kind: "ran"
      readonly summary: RunSummary
      readonly totals: ProgressTotals | undefined
      readonly endpoints: ReadonlyArray<EndpointStats>
      /** Tool calls nothing recorded or simulated, over the run's records (also in run.json). */
      readonly misses: ReturnType<typeof missCounts>
      /** The command to run next (judge the run). */
      readonly next: string
    }

/** A finished run's summary as data (what `bench --json` prints). */
export const summaryValue = (settings: BenchSettings, outcome: Extract<BenchOutcome, { kind: "ran" }>) => {
  const { summary, totals, next } = outcome
  return {
    runDir: settings.out,
    total: summary.total,
    recorded: summary.recorded,
    answered: summary.answered,
    skipped: summary.skipped,
    errors: summary.errors,
    notRecorded: summary.notRecorded,
    modelCalls: totals?.modelCalls ?? null,
    tokens: totals?.tokens ?? null,
    wallMs: totals?.wallMs ?? null,
    convertedFiles: summary.convertedFiles,
    ...(summary.lastServerError ? { lastServerError: summary.lastServerError } : {}),
    next
  }
}

/** The run of `settings`, with the model and the pool's figures in context. */
const runProgram = (settings: BenchSettings, progress: Progress) =>
  Effect.gen(function* () {
    const queries = yield* loadQueries({
      dir: settings.data,
      groups: settings.groups,
      ids: settings.ids,
      limit: settings.limit
    })
    if (queries.length === 0) return { kind: "no-queries" } as const
    const model = yield* LanguageModel
    const toolset = toolsetOf(settings)
    const retrieval =
      toolset.kind === "retrieve"
        ? yield* makeRetrievalTasks({
            corpus: yield* retrievalCorpus(settings, toolset.k, (text) => progress.log(text)),
            queries,
            recordedSets: settings.resume ? recordedRetrievalSets(settings.out) : undefined,
            concurrency: settings.concurrency
          })
        : undefined
    const taskOfQuery = retrieval
      ? (query: BenchQuery) => retrieval.taskOf(query)
      : listedTasks(settings, yield* benchEnvironment(settings))
    const config = runConfigOf(settings, queries, model.info.model, retrieval?.record, model.info)
    const executor =
      settings.queue === undefined
        ? undefined
        : yield* queueExecutorFor(settings, settings.queue, config, progress, retrieval?.record)
    const written = makeRecordSummaries()
    const summary = yield* runBench({
      onRecorded: written.add,
      runDir: settings.out,
      config,
      queries,
      methods: methodEntries(settings),
      taskOf: taskOfQuery,
      concurrency: settings.concurrency,
      resume: settings.resume,
      force: settings.force,
      modelSpec: settings.model,
      stopAfterUnreachable: settings.stopAfter,
      fullTrace: settings.fullTrace,
      progress,
      finish: finishSpec(promptsOf(settings)),
      maxRecordBytes: settings.maxRecordBytes,
      executor,
      ...(repeatsRuns(settings) ? { agentRuns: agentRunsOf(settings) } : {})
    })
    const endpoints = (yield* PoolStats).snapshot()
    if (endpoints.length > 0) yield* recordEndpointStats(settings.out, endpoints)
    const misses = yield* recordMisses(settings.out, written)
    return {
      kind: "ran",
      summary,
      totals: progress.totals?.(),
      endpoints,
      misses,
      next: nextCommand(settings)
    } as const
  })

/**
 * Run a bench from its settings: the tasks run here (or on the queue's workers), every record lands in
 * the run directory, and the outcome comes back as a value. Model calls are counted on `progress`.
 */
export const runBenchSettings = (settings: BenchSettings, progress: Progress) => {
  let toldLanes = false
  const layer = benchModelLayer(
    settings,
    {
      onEnd: (_role, response) =>
        progress.modelCall?.(response ? response.usage.promptTokens + response.usage.completionTokens : 0)
    },
    // said once, when a task first waits: the run is paced by the server's slots, not by --concurrency
    (_task, waiting, lanes) => {
      if (!waiting || toldLanes) return
      toldLanes = true
      progress.log(
        `model lanes: the requests of ${plural(lanes, "task")} at a time go to the server (${settings.lanes === "auto" ? "its slots" : "--lanes"}), the others wait for a lane; --lanes off sends every task's at once`
      )
    }
  )
  const run = runProgram(settings, progress).pipe(
    Effect.scoped,
    Effect.provide(layer.pipe(Layer.provideMerge(poolStatsLayer)))
  )
  // A misspelled model fails here, before the run directory exists. On a queue the workers' servers hold the
  // model; a resumed run first checks its settings against the run's (a changed model is named there).
  // The simulator is checked the same way (a second server, asked for the run's tool calls nothing recorded).
  const simulatorPresent =
    settings.simulator !== undefined && settings.envs.includes("simulated")
      ? Effect.tap(checkModelPresent(settings.simulator, { timeoutMs: settings.timeoutMs }), (warnings) =>
          Effect.sync(() => {
            for (const warning of warnings) progress.log(`${settings.simulator}: ${warning}`)
          })
        )
      : Effect.void
  return settings.queue === undefined && !settings.resume
    ? Effect.andThen(
        Effect.tap(checkModelPresent(settings.model, modelOptionsOf(settings)), (warnings) =>
          Effect.sync(() => {
            for (const warning of warnings) progress.log(`${settings.model}: ${warning}`)
          })
        ),
        Effect.andThen(simulatorPresent, run)
      )
    : run
}

/** What a queue worker takes from its own flags only, never from a job: its model server, credentials and folders. */
export interface WorkerOwnSettings {
  /** Its --model (or SMURFS_MODEL): the model here, instead of the run's. */
  readonly model?: string | undefined
  readonly endpoints?: ReadonlyArray<string> | undefined
  readonly modelConcurrency?: number | undefined
  /** Its --lanes: the model lanes here (its server's slots), instead of the run's. */
  readonly lanes?: "auto" | "off" | number | undefined
  readonly timeoutMs?: number | undefined
  /** Tasks it runs at once (the model's slots default to it, as the bench's do to its --concurrency). */
  readonly concurrency: number
  readonly data: string
  readonly responses?: string | undefined
  readonly cacheDir?: string | undefined
  readonly stb?: string | undefined
  /** Its copy of StableToolBench's tools folder (--stb-tools / SMURFS_STB_TOOLS), for runs that read one. */
  readonly stbTools?: string | undefined
  /** Its checkout of the Smurfs authors' code (--smurfs-src / SMURFS_SRC), for runs under the reference profile. */
  readonly smurfsSrc?: string | undefined
  readonly embedCache?: string | undefined
  readonly callCache?: string | undefined
  /** Where simulated responses are stored on this machine. */
  readonly storeDir: string
  /** Its τ²-bench checkout (--tau2), for τ² conversations: their domain and τ²'s texts are read there. */
  readonly tau2?: string | undefined
  /** Its --user-model: the model that plays τ²'s user here, instead of the run's. */
  readonly userModel?: string | undefined
}

/**
 * The model a worker runs a job's tasks (or judge decisions) with: its own, else the job's when that
 * spec names nothing of the coordinator's machine (ollama:/openai: are served by this machine's server).
 */
export const workerModelOf = (jobModel: string, own: Pick<WorkerOwnSettings, "model">): string => {
  if (own.model !== undefined) return own.model
  if (isPortableSpec(jobModel)) return jobModel
  throw new Error(
    `the run's model ${jobModel} names a file or folder of the coordinator's machine, which a worker never reads from a job: give this worker its own --model`
  )
}

/** The prompt texts' checkout a job asks for, on this worker: its own --stb / SMURFS_STB, never a path from the job. */
export const workerStbOf = (prompts: string, own: Pick<WorkerOwnSettings, "stb">): string | undefined => {
  if (prompts === "smurfs") return undefined
  if (own.stb !== undefined) return own.stb
  throw new Error(
    "the run sends StableToolBench's prompt texts: give this worker its own checkout (smurfs worker --stb <dir>, or SMURFS_STB)"
  )
}

/** The tools folder a job asks for, on this worker: its own --stb-tools / SMURFS_STB_TOOLS, never a path from the job. */
export const workerStbToolsOf = (wanted: string, own: Pick<WorkerOwnSettings, "stbTools">): string | undefined => {
  if (wanted === "api-list") return undefined
  if (own.stbTools !== undefined) return own.stbTools
  throw new Error(
    "the run describes each tool from StableToolBench's tools folder: give this worker its own copy (smurfs worker --stb-tools <dir>, or SMURFS_STB_TOOLS)"
  )
}

/** A τ² job's checkout and user model on this worker: its own --tau2, never a path from the job; its user model or the job's. */
export const workerTau2Of = (
  job: Tau2JobSettings,
  own: Pick<WorkerOwnSettings, "tau2" | "userModel">
): Pick<BenchSettings, "tau2" | "domain" | "userModel" | "taskSplit" | "methods"> => {
  if (own.tau2 === undefined)
    throw new Error(
      "the run holds τ²-bench conversations: give this worker its own checkout (smurfs worker --tau2 <dir>)"
    )
  const userModel = own.userModel ?? job.userModel
  if (own.userModel === undefined && !isPortableSpec(job.userModel))
    throw new Error(
      `the run's user model ${job.userModel} names a file or folder of the coordinator's machine, which a worker never reads from a job: give this worker its own --user-model`
    )
  return {
    tau2: own.tau2,
    domain: job.domain,
    userModel,
    ...(job.taskSplit === undefined ? {} : { taskSplit: job.taskSplit }),
    methods: [...CONVERSER_NAMES]
  }
}

/** The settings a worker runs a job's tasks with: the job's run options (validated JobSettings) and its own everything else. */
export const workerBenchSettings = (job: JobSettings, own: WorkerOwnSettings): BenchSettings => {
  const { prompts, model, toolDescriptions, tau2, ...options } = job
  return BenchSettings.parse({
    ...options,
    out: own.storeDir,
    data: own.data,
    // a job names its method; the session holds every method, so jobs of any method share it
    methods: [...METHOD_NAMES],
    // a τ² conversation: this worker's checkout, the run's domain and agents
    ...(tau2 === undefined ? {} : workerTau2Of(tau2, own)),
    model: workerModelOf(model, own),
    concurrency: own.concurrency,
    stb: workerStbOf(prompts, own),
    stbTools: workerStbToolsOf(toolDescriptions ?? "api-list", own),
    ...(own.smurfsSrc === undefined ? {} : { smurfsSrc: own.smurfsSrc }),
    storeDir: own.storeDir,
    ...(own.timeoutMs === undefined ? {} : { timeoutMs: own.timeoutMs }),
    ...(own.endpoints === undefined ? {} : { endpoints: [...own.endpoints] }),
    ...(own.modelConcurrency === undefined ? {} : { modelConcurrency: own.modelConcurrency }),
    ...(own.lanes === undefined ? {} : { lanes: own.lanes }),
    ...(own.responses === undefined ? {} : { responses: own.responses }),
    ...(own.cacheDir === undefined ? {} : { cacheDir: own.cacheDir }),
    ...(own.embedCache === undefined ? {} : { embedCache: own.embedCache }),
    ...(own.callCache === undefined ? {} : { callCache: own.callCache })
  })
}
