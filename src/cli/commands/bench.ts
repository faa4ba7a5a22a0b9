// `smurfs bench`: run methods on StableToolBench tasks into a resumable run directory.
import { existsSync, readFileSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import type { ParseArgsOptionsConfig } from "node:util"
import { Cause, Effect, Exit, Layer } from "effect"
import { type BenchQuery, DEFAULT_DATA_DIR, dataLayout, GROUPS, loadQueries } from "../../../bench/datasets.ts"
import { formatDuration, makeProgress, type Progress } from "../../../bench/progress.ts"
import { runIdOf } from "../../../bench/queue/job.ts"
import { makeQueueExecutor, QUEUE_DEFAULTS } from "../../../bench/queue/queue-executor.ts"
import { writeJsonAtomic } from "../../trace/atomic-write.ts"
import { RUN_FORMAT_VERSION, type RunConfig, runConfigPath } from "../../../bench/run-format.ts"
import { type EndpointStats, PoolStats, poolStatsLayer } from "../../llm/pool.ts"
import { type MethodEntry, ModelServerDown, RUNNER_DEFAULTS, runBench } from "../../../bench/runner.ts"
import { makeRetrievalCorpus, makeRetrievalTasks, recordedRetrievalSets, type RetrievalRecord, taskKey } from "../../../bench/retrieval-tasks.ts"
import type { QueuedTask } from "../../../bench/queue/job.ts"
import type { Task } from "../../agents/task.ts"
import type { ToolEnvironment } from "../../tools/environments/environment.ts"
import { taskOf } from "../../../bench/tasks.ts"
import { baselinePrompts } from "../../agents/baseline-prompts.ts"
import { DFSDT_DEFAULTS, dfsdt } from "../../agents/dfsdt.ts"
import { finishSpec } from "../../agents/finish.ts"
import { STB_ENV, stbDirOf } from "../../agents/stabletoolbench-files.ts"
import { REACT_DEFAULTS, react } from "../../agents/react.ts"
import { smurfs } from "../../agents/smurfs.ts"
import { chainProfileOptions, checkProfile, DEFAULT_PROFILE, PROFILE_SETTINGS, PROFILES, profileRecord, smurfsProfileOptions } from "../../agents/profile.ts"
import { SMURFS_SRC_ENV, smurfsSrcDirOf } from "../../agents/smurfs-source.ts"
import { resolveOptions, type SmurfsOptions, smurfsDefaults } from "../../agents/smurfs-options.ts"
import { modelCacheLayer } from "../../llm/cache.ts"
import { requestDefaultsLayer } from "../../llm/request-defaults.ts"
import { type ModelCallObserver, observedModelLayer } from "../../llm/observe.ts"
import { plural } from "../../plural.ts"
import { MODEL_DEFAULTS, THINK_HELP } from "../../llm/spec.ts"
import { LanguageModel } from "../../llm/language-model.ts"
import { makeToolCache } from "../../tools/cache.ts"
import { makeEnvironmentChain } from "../../tools/environments/chain.ts"
import { defaultEmbeddingCache } from "../../tools/retrieval/embedding-cache.ts"
import { makeEmbedder } from "../../tools/retrieval/embedder.ts"
import { parseToolset, type Toolset, toolsetLabel } from "../../tools/retrieval/toolset.ts"
import { toolbenchLibrary } from "../../tools/toolbench/adapter.ts"
import type { ApiDocInput } from "../../tools/toolbench/api-doc.ts"
import { otlpLayer } from "../../trace/otlp.ts"
import { redactText } from "../../trace/redact.ts"
import { version } from "../../version.ts"
import { ExitCode } from "../exit-codes.ts"
import { defaultModelSpec, resolveModelLayer } from "../model-option.ts"
import { BadInput, choiceList, choiceOption, intOption, numberOption, type ParsedCommand, parseCommand, runCommand, splitList, thinkOption, UsageError, withoutOptions } from "../options.ts"

const METHODS = ["smurfs", "react", "dfsdt"] as const

/** Defaults of the command, in one place. */
export const BENCH_DEFAULTS = {
  data: DEFAULT_DATA_DIR,
  methods: ["smurfs"],
  envs: ["replay", "offline"],
  toolset: "all",
  concurrency: 4
} as const

const HELP = `usage: smurfs bench --out <run dir> [options]

Run methods on StableToolBench queries. Every finished task is written to its own file in the run
directory, so a stopped run (Ctrl-C, a crash, a dead model server) continues with --resume.
At the end, converted/<method>/<group>.json holds StableToolBench's converted predictions.

options:
  --data <dir>              queries/<group>.json and query_ids/<group>.json, or StableToolBench's
                            solvable_queries folder (test_instruction/, test_query_ids/) or the folder
                            holding it (default $SMURFS_DATA, else ${BENCH_DEFAULTS.data})
  --group <G[,G]>           groups to run (default all: ${GROUPS.join(", ")})
  --method <m[,m]>          ${METHODS.join(", ")} (default ${BENCH_DEFAULTS.methods.join(",")})
  --model <spec>            ollama:<model>, openai:<model>, scripted:<file.json>, sim (default SMURFS_MODEL, else a local Ollama model)
  --env <e[,e]>             tool environments in order: replay, simulated, offline (default ${BENCH_DEFAULTS.envs.join(",")})
  --responses <file>        recorded responses to replay (default <data>/responses.jsonl when present)
  --cache-dir <dir>         a StableToolBench tool_response_cache folder to replay (default: one found
                            inside or beside --data)
  --call-cache <dir>        cache model replies (temperature 0) and tool results here; a repeated run replays them
  --store-dir <dir>         where simulated responses are stored (default <out>/simulated)
  --limit <n>               the first n queries of each group
  --ids <a,b>               only these query ids
  --toolset <t>             a task's tools: all (its whole api_list), relevant (only its relevant APIs), or
                            retrieve[:k] (the top k, default 5, retrieved from every API of every query file
                            under --data; the smurfs executor retrieves per subtask) (default all)
  --embed <spec>            with retrieve: hybrid retrieval with this embedding model (ollama:<model>, openai:<model>)
  --embed-cache <dir>       where document embeddings are cached (default ~/.cache/smurfs/embeddings)
  --rerank                  with retrieve: the model re-ranks the top 20 candidates
  --concurrency <n>         tasks run at once (default ${BENCH_DEFAULTS.concurrency})
  --model-concurrency <n>   requests in flight per model server (default: --concurrency for openai, 1 for ollama)
  --endpoints <u[,u]>       several servers of the same model, each url or url*N (N: requests it serves at once);
                            requests go to the least-loaded healthy one, a failing one is taken out and probed
  --queue <redis://...>     hand the tasks to \`smurfs worker\` processes through a BullMQ queue on Redis
                            instead of running them here; records still land in --out
  --out <dir>               the run directory (required)
  --resume                  continue the run in --out, skipping finished tasks; refused when the settings differ
                            (model, data, methods, groups, environments, toolset, limits, method options)
  --force                   with --resume: continue even when the settings differ (run.json records the difference)
  --tool-calling <m>        auto, native or json: how react/dfsdt act (default auto)
  --tries <n>               react: chains per task, CoT@n (default ${REACT_DEFAULTS.tries})
  --smurfs-max-steps <n>    smurfs: accepted steps on a subtask's path before it is answered from memory;
                            a failed call costs none, a backtrack gives one back (default ${smurfsDefaults.maxSteps})
  --single-chain-max-step <n>
                            react/dfsdt: tree nodes per chain, StableToolBench's single_chain_max_step
                            (a thought 1, a call 2; default ${REACT_DEFAULTS.singleChainMaxStep}); the old --max-steps is refused
  --budget <n>              dfsdt: model calls per task (default ${DFSDT_DEFAULTS.budget})
  --stb <dir>               react/dfsdt send StableToolBench's own prompt texts, read from this checkout
                            (the folder holding toolbench/; default ${STB_ENV}); without it, our own wording
  --profile <improved|reference>
                            improved (default): our methods; reference: the Smurfs authors' agents and
                            StableToolBench's baselines as they ran (needs --smurfs-src and/or --stb)
  --smurfs-src <dir>        a checkout of the Smurfs authors' code (default ${SMURFS_SRC_ENV}), for --profile reference
  --temperature <t>         sampling temperature (default ${MODEL_DEFAULTS.temperature}; reference: 0.95 smurfs, 1.0 react/dfsdt)
  --seed <n>                sampling seed (default ${MODEL_DEFAULTS.seed})
  --num-ctx <n>             the model's context window in tokens (default ${MODEL_DEFAULTS.numCtx})
  --nudge <on|off>, --validate-args <on|off>, --parallel-calls <on|off>
                            react/dfsdt, over the profile's: remind after a reply without a call (improved on);
                            validate arguments before a call (improved on); run every call of a reply (reference on)
  --observation-limit <n>   characters of a tool response the model sees (default ${REACT_DEFAULTS.observationLimit})
  --timeout <ms>            per-request model timeout (default ${MODEL_DEFAULTS.timeoutMs})
  --think <on|off|low|medium|high>
                            ${THINK_HELP}
  --stop-after <n>          stop (exit 4) when n tasks in a row fail because of the model server (default ${RUNNER_DEFAULTS.stopAfterUnreachable})
  --full-trace              keep every prompt in the task records (large)
  --json                    print the summary as JSON on stdout (progress stays on stderr)
  -h, --help                show this help

A task the model server failed (refused connection, 404, 429/503 after retries, a timeout) is
recorded as "error", never as an answer or a give-up; --resume runs it again. A task's first
timed-out call ends it (the server is suspect), so a hung server costs one --timeout per task.

exit codes: 0 every task recorded, 1 some tasks left undone (rerun with --resume), 2 bad usage,
3 bad input (data, run directory, model spec, environments), 4 model unavailable (the server failed
every task run, or --stop-after tasks in a row), 130 interrupted`

/** The options of `smurfs bench`, in node:util parseArgs' shape. */
const OPTIONS = {
  data: { type: "string" },
  group: { type: "string", multiple: true },
  method: { type: "string", multiple: true },
  model: { type: "string" },
  env: { type: "string", multiple: true },
  responses: { type: "string" },
  "cache-dir": { type: "string" },
  "store-dir": { type: "string" },
  "call-cache": { type: "string" },
  limit: { type: "string" },
  ids: { type: "string", multiple: true },
  toolset: { type: "string" },
  embed: { type: "string" },
  "embed-cache": { type: "string" },
  rerank: { type: "boolean" },
  concurrency: { type: "string" },
  "model-concurrency": { type: "string" },
  endpoints: { type: "string", multiple: true },
  queue: { type: "string" },
  out: { type: "string" },
  resume: { type: "boolean" },
  force: { type: "boolean" },
  "tool-calling": { type: "string" },
  tries: { type: "string" },
  "smurfs-max-steps": { type: "string" },
  "single-chain-max-step": { type: "string" },
  // refused with a hint: it set both limits at once, which never meant the same thing
  "max-steps": { type: "string" },
  budget: { type: "string" },
  "observation-limit": { type: "string" },
  stb: { type: "string" },
  profile: { type: "string" },
  "smurfs-src": { type: "string" },
  temperature: { type: "string" },
  seed: { type: "string" },
  "num-ctx": { type: "string" },
  nudge: { type: "string" },
  "validate-args": { type: "string" },
  "parallel-calls": { type: "string" },
  timeout: { type: "string" },
  think: { type: "string" },
  "stop-after": { type: "string" },
  "full-trace": { type: "boolean" },
  json: { type: "boolean" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "bench", help: HELP, options: OPTIONS } as const

const list = (values: ReadonlyArray<string> | undefined): Array<string> | undefined => (values === undefined ? undefined : splitList(values))

const positiveInt = (name: string, text: string | undefined): number | undefined => intOption(name, text)

/** An on|off flag; undefined when not given (the profile decides). */
const onOff = (name: string, text: string | undefined): boolean | undefined => (text === undefined ? undefined : choiceOption(name, text, ["on", "off"], "on") === "on")

/** The command's options, parsed; workers read a queued job's settings with it too. */
const parse = ({ values }: ParsedCommand<typeof OPTIONS>) => {
  if (!values.out) throw new UsageError("--out <run dir> is required")
  if (values.force && !values.resume) throw new UsageError("--force only applies with --resume (it continues a run whose settings differ)")
  if (values["max-steps"] !== undefined)
    throw new UsageError(
      `--max-steps was split in two: --smurfs-max-steps <n> for smurfs (accepted steps per subtask, default ${smurfsDefaults.maxSteps}) ` +
        `and --single-chain-max-step <n> for react/dfsdt (tree nodes per chain, default ${REACT_DEFAULTS.singleChainMaxStep})`
    )
  const methods = choiceList("method", list(values.method) ?? [...BENCH_DEFAULTS.methods], METHODS)
  let toolset: Toolset
  try {
    toolset = parseToolset(values.toolset ?? BENCH_DEFAULTS.toolset)
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
  if ((values.embed !== undefined || values.rerank) && toolset.kind !== "retrieve") throw new UsageError("--embed and --rerank choose how tools are retrieved: use them with --toolset retrieve[:k]")
  const toolCalling = choiceOption("tool-calling", values["tool-calling"], ["auto", "native", "json"], "auto")
  const data = resolve(values.data ?? BENCH_DEFAULTS.data)
  const out = resolve(values.out)
  if (existsSync(out) && !statSync(out).isDirectory()) throw new BadInput(`--out ${values.out} is a file; give a directory for the run (it is created when missing)`)
  const concurrency = positiveInt("concurrency", values.concurrency) ?? BENCH_DEFAULTS.concurrency
  const layout = dataLayout(data)
  return {
    data,
    out,
    groups: list(values.group) ?? [...GROUPS],
    methods,
    model: values.model ?? defaultModelSpec(),
    envs: list(values.env) ?? [...BENCH_DEFAULTS.envs],
    responses: values.responses ?? layout.responses,
    cacheDir: values["cache-dir"] ?? layout.toolResponseCache,
    storeDir: values["store-dir"] ?? join(out, "simulated"),
    callCache: values["call-cache"] === undefined ? undefined : resolve(values["call-cache"]),
    limit: positiveInt("limit", values.limit),
    ids: list(values.ids),
    toolset,
    embed: values.embed,
    embedCache: resolve(values["embed-cache"] ?? defaultEmbeddingCache()),
    rerank: values.rerank === true,
    concurrency,
    modelConcurrency: positiveInt("model-concurrency", values["model-concurrency"]),
    endpoints: list(values.endpoints),
    queue: values.queue,
    resume: values.resume === true,
    force: values.force === true,
    toolCalling: toolCalling as "auto" | "native" | "json",
    tries: positiveInt("tries", values.tries),
    smurfsMaxSteps: positiveInt("smurfs-max-steps", values["smurfs-max-steps"]),
    singleChainMaxStep: positiveInt("single-chain-max-step", values["single-chain-max-step"]),
    budget: positiveInt("budget", values.budget),
    observationLimit: positiveInt("observation-limit", values["observation-limit"]),
    stb: stbDirOf(values.stb),
    // the profile and the sampling settings (issue 25): each profile setting stays overridable by its own flag
    profile: choiceOption("profile", values.profile, PROFILES, DEFAULT_PROFILE),
    smurfsSrc: smurfsSrcDirOf(values["smurfs-src"], {}),
    temperature: numberOption("temperature", values.temperature, 0, 2),
    seed: intOption("seed", values.seed, 0),
    numCtx: intOption("num-ctx", values["num-ctx"]),
    chainOverrides: { nudge: onOff("nudge", values.nudge), validateArgs: onOff("validate-args", values["validate-args"]), parallelCalls: onOff("parallel-calls", values["parallel-calls"]) },
    timeoutMs: positiveInt("timeout", values.timeout),
    think: thinkOption(values.think),
    stopAfter: positiveInt("stop-after", values["stop-after"]),
    fullTrace: values["full-trace"] === true,
    json: values.json === true
  }
}

export type BenchArgs = ReturnType<typeof parse>

/** A queued job's bench options, read as the command reads its own (no environment, no config file: the job carries them all). */
export const parseBenchArgs = (argv: ReadonlyArray<string>): BenchArgs => parse(parseCommand(COMMAND, argv, { env: {}, cwd: "/nonexistent-smurfs-config" }))

// ToolEval labels an answer that lists what is missing Unsolved: bench answers with what was found only
const smurfsOptions = (args: BenchArgs): SmurfsOptions => ({
  maxSteps: args.smurfsMaxSteps,
  reportUnavailable: false,
  ...smurfsProfileOptions(args.profile, args.smurfsSrc, args.temperature)
})

/** The Smurfs loop's limits as they ran, for run.json. */
const smurfsLimits = (args: BenchArgs) => {
  const { maxSteps, maxAgentErrors, maxSubtasks, maxModelCalls, reportUnavailable } = resolveOptions(smurfsOptions(args))
  return { maxSteps, maxAgentErrors, maxSubtasks, maxModelCalls, reportUnavailable }
}

export const methodEntries = (args: BenchArgs): Array<MethodEntry> =>
  args.methods.map((name) => {
    const chain = {
      toolCalling: args.toolCalling,
      singleChainMaxStep: args.singleChainMaxStep,
      observationLimit: args.observationLimit,
      prompts: baselinePrompts(args.stb),
      ...chainProfileOptions(args.profile, args.temperature, args.chainOverrides)
    }
    switch (name) {
      case "react":
        return { name, method: react({ ...chain, tries: args.tries }) }
      case "dfsdt":
        return { name, method: dfsdt({ ...chain, budget: args.budget }) }
      default:
        return { name, method: smurfs(smurfsOptions(args)) }
    }
  })

/** A query's Task on the run's tool environments and toolset (its tools served by replay, simulation, ...). */
/** The tool environment of a run's tasks. */
const benchEnvironment = (args: BenchArgs) =>
  Effect.gen(function* () {
    const chain = yield* makeEnvironmentChain(args.envs, { responses: args.responses, cacheDir: args.cacheDir, storeDir: args.storeDir })
    // Replay and offline answers are final, so failed results are worth caching too.
    return args.callCache === undefined ? chain : (yield* makeToolCache({ dir: args.callCache, cacheErrors: true })).wrapEnvironment(chain)
  })

/** A query's Task on its whole api_list or its relevant APIs, served by the run's tool environment. */
const listedTask = (toolset: "all" | "relevant", env: ToolEnvironment, whole = false) => (query: BenchQuery) =>
  taskOf(query, toolset, (name, docs) => toolbenchLibrary(name, docs as ReadonlyArray<ApiDocInput>, env, whole ? { maxObservationChars: Number.POSITIVE_INFINITY } : {}))

/** The corpus and retriever of `--toolset retrieve[:k]`, with the run's model as re-ranker when asked. */
const retrievalCorpus = (args: BenchArgs, k: number) =>
  Effect.gen(function* () {
    const model = yield* LanguageModel
    return yield* makeRetrievalCorpus({
      data: args.data,
      env: yield* benchEnvironment(args),
      k,
      embedder: args.embed === undefined ? undefined : yield* makeEmbedder(args.embed, { timeoutMs: args.timeoutMs }),
      embeddingCache: args.embedCache,
      reranker: args.rerank ? model : undefined
    })
  })

/**
 * How a queue worker builds a job's task from the run's options. With `--toolset retrieve` it builds
 * the corpus from its own --data once, takes the task's set from the job (as the coordinator retrieved
 * and recorded it) and retrieves per subtask exactly as the bench does in process.
 */
export const taskBuilder = (args: BenchArgs) =>
  Effect.gen(function* () {
    const toolset = args.toolset
    if (toolset.kind === "retrieve") {
      const corpus = yield* retrievalCorpus(args, toolset.k)
      return (query: BenchQuery, retrieval: QueuedTask["retrieval"]): Effect.Effect<Task, Error> =>
        Effect.gen(function* () {
          if (retrieval !== undefined && retrieval.corpusHash !== corpus.settings.corpusHash)
            return yield* Effect.fail(new BadInput(
              `the ToolBench corpus under this worker's data (${args.data}, ${corpus.settings.corpusApis} APIs) is not the run's, so its tasks would retrieve other tools. ` +
                "Give the worker the same data as the coordinator (smurfs worker --data <dir>)."
            ))
          return corpus.taskOf(query, retrieval?.set ?? (yield* corpus.setOf(query)))
        })
    }
    const listed = listedTask(toolset.kind, yield* benchEnvironment(args), PROFILE_SETTINGS[args.profile].wholeToolResponses)
    return (query: BenchQuery): Effect.Effect<Task, Error> => Effect.succeed(listed(query))
  })

/** The model layer of a run: the served model (one server or a pool), behind the call cache when asked. */
export const benchModelLayer = (args: BenchArgs, observer?: ModelCallObserver) => {
  // Ollama serves OLLAMA_NUM_PARALLEL requests at once (its own default applies); other servers get one slot per task.
  const modelConcurrency = args.modelConcurrency ?? (args.model.startsWith("ollama:") ? undefined : args.concurrency)
  const resolved = resolveModelLayer(args.model, {
    concurrency: modelConcurrency,
    timeoutMs: args.timeoutMs,
    think: args.think,
    endpoints: args.endpoints,
    temperature: args.temperature,
    seed: args.seed,
    numCtx: args.numCtx
  })
  // below the call cache: what is observed is what a server answers, as it answers
  const observed = observer === undefined ? resolved : Layer.provide(observedModelLayer(observer), resolved)
  // --temperature / --seed on every request that sets none, so the call cache keys replies by them
  const served = args.temperature === undefined && args.seed === undefined ? observed : Layer.provide(requestDefaultsLayer({ temperature: args.temperature, seed: args.seed }), observed)
  return args.callCache === undefined ? served : Layer.provide(modelCacheLayer({ dir: args.callCache }), served)
}

/** The options workers rebuild a task from: the command's own, without those that only steer this process. */
// (the embedding cache is a folder of this machine: each worker keeps its own)
const workerArgv = (argv: ReadonlyArray<string>): Array<string> => withoutOptions(argv, ["queue", "resume", "force", "embed-cache"])

/** The run's id on the queue: stable across --resume of the same run directory. */
const runIdFor = (out: string, config: RunConfig): string => {
  try {
    const existing = JSON.parse(readFileSync(runConfigPath(out), "utf8")) as { createdAt?: unknown }
    if (typeof existing.createdAt === "string") return runIdOf(out, existing.createdAt)
  } catch {
    // a new run: its own creation time names it
  }
  return runIdOf(out, config.createdAt)
}

const queueExecutorFor = (args: BenchArgs, config: RunConfig, argv: ReadonlyArray<string>, progress: Progress, retrieval: RetrievalRecord | undefined) =>
  makeQueueExecutor({
    // a retrieved task goes with its recorded set; the worker retrieves per subtask from its copy of the corpus
    retrievalOf: retrieval ? (job) => ({ set: retrieval.sets[taskKey(job.query)] ?? [], corpusHash: retrieval.settings.corpusHash }) : undefined,
    ...QUEUE_DEFAULTS,
    queueUrl: args.queue!,
    runId: runIdFor(args.out, config),
    argv,
    // the workers make the model calls: their reports move the live counts
    onTaskCalls: (job, calls) => progress.taskCalls?.({ method: job.method, group: job.query.group, taskId: job.query.id }, calls.modelCalls, calls.tokens)
  })

/** Add the endpoints' figures to run.json (written at the start; only this field changes). */
const recordEndpointStats = (out: string, endpoints: ReadonlyArray<EndpointStats>) =>
  Effect.gen(function* () {
    const path = runConfigPath(out)
    const current = yield* Effect.try({ try: () => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>, catch: () => undefined }).pipe(Effect.orElseSucceed(() => undefined))
    if (current) yield* writeJsonAtomic(path, { ...current, endpointStats: endpoints })
  })

/** The command to run next: judge the run, with the benchmarked model as judge unless it is a test model. */
const nextCommand = (args: BenchArgs): string => `smurfs eval --run ${args.out} --judge ${args.model.startsWith("scripted:") || args.model.startsWith("sim") ? "<judge model spec>" : args.model}`

const program = (args: BenchArgs, argvForWorkers: ReadonlyArray<string>, progress: Progress) =>
  Effect.gen(function* () {
    const queries = yield* loadQueries({ dir: args.data, groups: args.groups, ids: args.ids, limit: args.limit })
    if (queries.length === 0) {
      console.error("smurfs bench: no query matched the given --group/--ids/--limit; nothing to run.")
      return ExitCode.BadInput
    }
    const model = yield* LanguageModel
    const toolset = args.toolset
    const retrieval =
      toolset.kind === "retrieve"
        ? yield* makeRetrievalTasks({
            corpus: yield* retrievalCorpus(args, toolset.k),
            queries,
            recordedSets: args.resume ? recordedRetrievalSets(args.out) : undefined,
            concurrency: args.concurrency
          })
        : undefined
    const taskOfQuery = retrieval ? retrieval.taskOf : listedTask(toolset.kind === "relevant" ? "relevant" : "all", yield* benchEnvironment(args), PROFILE_SETTINGS[args.profile].wholeToolResponses)
    const config: RunConfig = {
      formatVersion: RUN_FORMAT_VERSION,
      packageVersion: version,
      createdAt: new Date().toISOString(),
      data: args.data,
      groups: args.groups,
      methods: args.methods,
      model: args.model,
      modelName: model.info.model,
      envs: args.envs,
      toolset: toolsetLabel(args.toolset),
      ...(retrieval ? { retrieval: retrieval.record } : {}),
      ...(args.limit !== undefined ? { limit: args.limit } : {}),
      ...(args.ids !== undefined ? { ids: args.ids } : {}),
      concurrency: args.concurrency,
      taskCounts: Object.fromEntries(args.groups.map((g) => [g, queries.filter((q) => q.group === g).length])),
      options: {
        toolCalling: args.toolCalling,
        tries: args.tries ?? REACT_DEFAULTS.tries,
        // what ran, each method with its own limit (smurfs: every loop limit, defaults resolved)
        smurfs: smurfsLimits(args),
        singleChainMaxStep: args.singleChainMaxStep ?? REACT_DEFAULTS.singleChainMaxStep,
        giveUpBackLength: DFSDT_DEFAULTS.giveUpBackLength,
        prompts: baselinePrompts(args.stb).source,
        profile: profileRecord(args.profile, args.temperature, { smurfs: args.smurfsSrc === undefined ? undefined : `smurfs-src:${args.smurfsSrc}`, stb: args.stb }, args.chainOverrides),
        temperature: args.temperature ?? MODEL_DEFAULTS.temperature,
        seed: args.seed ?? MODEL_DEFAULTS.seed,
        numCtx: args.numCtx ?? MODEL_DEFAULTS.numCtx,
        budget: args.budget ?? DFSDT_DEFAULTS.budget,
        observationLimit: args.observationLimit ?? REACT_DEFAULTS.observationLimit,
        modelConcurrency: args.modelConcurrency ?? null,
        timeoutMs: args.timeoutMs ?? null,
        think: args.think ?? null,
        responses: args.responses ?? null,
        cacheDir: args.cacheDir ?? null,
        callCache: args.callCache ?? null,
        ...(retrieval ? { retrieval: retrieval.record.settings } : {})
      }
    }
    const executor = args.queue === undefined ? undefined : yield* queueExecutorFor(args, config, argvForWorkers, progress, retrieval?.record)
    const summary = yield* runBench({
      runDir: args.out,
      config,
      queries,
      methods: methodEntries(args),
      taskOf: taskOfQuery,
      concurrency: args.concurrency,
      resume: args.resume,
      force: args.force,
      modelSpec: args.model,
      stopAfterUnreachable: args.stopAfter,
      fullTrace: args.fullTrace,
      progress,
      finish: finishSpec(baselinePrompts(args.stb)),
      executor
    })
    const endpoints = (yield* PoolStats).snapshot()
    if (endpoints.length > 0) {
      for (const e of endpoints)
        console.error(`  endpoint ${e.endpoint}: ${e.calls} calls, ${e.errors} errors, mean ${e.meanLatencyMs} ms${e.ejections > 0 ? `, taken out ${e.ejections}x` : ""}${e.healthy ? "" : " (out now)"}`)
      yield* recordEndpointStats(args.out, endpoints)
    }
    const totals = progress.totals?.()
    const next = nextCommand(args)
    console.error(
      `smurfs bench: ${plural(summary.recorded, "task")} recorded now (${summary.answered} answered, not yet judged), ${summary.skipped} already done, ` +
        `${summary.errors} failed because of the model server, ${summary.notRecorded} left undone, of ${summary.total}.` +
        (totals ? ` ${plural(totals.modelCalls, "model call")}, ${plural(totals.tokens, "token")}, ${formatDuration(totals.wallMs)}.` : "") +
        ` Run directory: ${args.out}`
    )
    if (args.json)
      console.log(
        JSON.stringify(
          { runDir: args.out, total: summary.total, recorded: summary.recorded, answered: summary.answered, skipped: summary.skipped, errors: summary.errors, notRecorded: summary.notRecorded, modelCalls: totals?.modelCalls ?? null, tokens: totals?.tokens ?? null, wallMs: totals?.wallMs ?? null, convertedFiles: summary.convertedFiles, ...(summary.lastServerError ? { lastServerError: summary.lastServerError } : {}), next },
          null,
          2
        )
      )
    else for (const file of summary.convertedFiles) console.log(file)
    if (summary.errors === 0 && summary.notRecorded === 0) console.error(`Next: judge the answers with \`${next}\``)
    if (summary.errors > 0 && summary.recorded === 0) {
      // nothing got through: the server (or its address, or the model name) is the problem, not the tasks
      console.error(redactText(`smurfs bench: every task run failed because of the model server (${summary.lastServerError}).`))
      console.error(`Check the server and the model with \`smurfs doctor --model ${args.model}\`, then rerun the same command with --resume.`)
      return ExitCode.ModelUnavailable
    }
    if (summary.errors > 0 || summary.notRecorded > 0) {
      if (summary.errors > 0) console.error(redactText(`The last model server failure: ${summary.lastServerError}`))
      console.error(`Rerun the same command with --resume to retry the ${summary.errors + summary.notRecorded} undone tasks.`)
      return ExitCode.Failure
    }
    return ExitCode.Ok
  })

const exitCodeOf = (tag: string): number => {
  switch (tag) {
    case "ModelServerDown":
    case "ModelUnreachable":
    case "ModelNotFound":
      return ExitCode.ModelUnavailable
    case "QueueUnavailable":
      return ExitCode.ModelUnavailable
    case "RunDirError":
    case "DatasetError":
    case "InvalidModelSpec":
    case "InvalidEmbedSpec":
    case "ToolEnvError":
    case "CacheUnavailable":
      return ExitCode.BadInput
    default:
      return ExitCode.Failure
  }
}

export const run = (argv: string[]): Promise<number> => runCommand(COMMAND, argv, (parsed) => bench(parse(parsed), argv))

const bench = async (args: BenchArgs, argv: ReadonlyArray<string>): Promise<number> => {
  try {
    baselinePrompts(args.stb)
    checkProfile(args.profile, args.methods, { stb: args.stb, smurfsSrc: args.smurfsSrc })
    smurfsProfileOptions(args.profile, args.smurfsSrc)
  } catch (e) {
    console.error(`smurfs bench: ${(e as Error).message}`)
    return ExitCode.BadInput
  }
  const resumeHint = `Rerun with --resume to continue: smurfs bench ${argv.filter((a) => a !== "--resume").join(" ")} --resume`
  const progress = makeProgress()
  const modelLayer = benchModelLayer(args, { onEnd: (_role, response) => progress.modelCall?.(response ? response.usage.promptTokens + response.usage.completionTokens : 0) })
  // Ctrl-C / SIGTERM interrupt the run; finished records are already on disk.
  const abort = new AbortController()
  const stop = () => abort.abort()
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  const exit = await Effect.runPromiseExit(program(args, workerArgv(argv), progress).pipe(Effect.scoped, Effect.provide(modelLayer.pipe(Layer.provideMerge(poolStatsLayer))), Effect.provide(otlpLayer())), {
    signal: abort.signal
  })
  process.off("SIGINT", stop)
  process.off("SIGTERM", stop)
  if (Exit.isSuccess(exit)) return exit.value
  if (Cause.hasInterruptsOnly(exit.cause)) {
    console.error(`\nsmurfs bench: interrupted; finished tasks are kept in ${args.out}. ${resumeHint}`)
    return ExitCode.Interrupted
  }
  const error = Cause.squash(exit.cause) as { _tag?: string; message?: string }
  console.error(redactText(`smurfs bench: ${error?.message ?? String(error)}`))
  if (error instanceof ModelServerDown) console.error(resumeHint)
  return exitCodeOf(error?._tag ?? "")
}
