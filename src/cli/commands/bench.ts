// `smurfs bench`: run methods on StableToolBench tasks into a resumable run directory.
import { existsSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import type { ParseArgsOptionsConfig } from "node:util"
import { Effect, Layer } from "effect"
import { type BenchQuery, DEFAULT_DATA_DIR, dataLayout, GROUPS, loadQueries } from "../../../bench/datasets.ts"
import { formatDuration, makeProgress, type Progress } from "../../../bench/progress.ts"
import { runIdOf } from "../../../bench/queue/job.ts"
import { makeQueueExecutor, QUEUE_DEFAULTS } from "../../../bench/queue/queue-executor.ts"
import { writeJsonAtomic } from "../../trace/atomic-write.ts"
import { loadSource } from "../../../bench/eval/sources.ts"
import { missCounts } from "../../../bench/eval/judge-input.ts"
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
import { STB_ENV, stbDirOf } from "../../text/stabletoolbench-files.ts"
import { REACT_DEFAULTS, react } from "../../agents/react.ts"
import { smurfs } from "../../agents/smurfs.ts"
import { resolveOptions, type SmurfsOptions, smurfsDefaults } from "../../agents/smurfs-options.ts"
import { modelCacheLayer } from "../../llm/cache.ts"
import { type ModelCallObserver, observedModelLayer } from "../../llm/observe.ts"
import { plural } from "../../plural.ts"
import { MODEL_DEFAULTS, THINK_HELP } from "../../llm/spec.ts"
import { LanguageModel, type LanguageModelShape } from "../../llm/language-model.ts"
import { makeToolCache } from "../../tools/cache.ts"
import { makeEnvironmentChain } from "../../tools/environments/chain.ts"
import { SIMULATOR_STYLES, type SimulatorStyle, simulatorPrompts } from "../../tools/environments/simulator-prompts.ts"
import { defaultEmbeddingCache } from "../../tools/retrieval/embedding-cache.ts"
import { makeEmbedder } from "../../tools/retrieval/embedder.ts"
import { parseToolset, type Toolset, toolsetLabel } from "../../tools/retrieval/toolset.ts"
import { toolbenchLibrary } from "../../tools/toolbench/adapter.ts"
import type { ApiDocInput } from "../../tools/toolbench/api-doc.ts"
import { otlpLayer } from "../../trace/otlp.ts"
import { redactText } from "../../trace/redact.ts"
import { SIZE_CAPS } from "../../trace/size-caps.ts"
import { readFileBounded } from "../../trace/guarded-fs.ts"
import { RunDirError } from "../../trace/fs-problem.ts"
import { runProgram } from "../run-program.ts"
import { version } from "../../version.ts"
import { ExitCode } from "../exit-codes.ts"
import { defaultModelSpec, resolveModelLayer } from "../model-option.ts"
import { SIMULATOR_ENV, simulatorModel, simulatorSpecOf } from "../simulator-option.ts"
import { BadInput, choiceList, choiceOption, intOption, type ParsedCommand, parseCommand, runCommand, splitList, thinkOption, UsageError, withoutOptions } from "../options.ts"

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
  --simulator <spec>        a model (not the one under test) that answers calls nothing recorded, as
                            StableToolBench's tool server does; its responses are added to --cache-dir when
                            given (created when missing), else to <store-dir>/tool_response_cache, in
                            StableToolBench's cache layout; with it the default --env is replay,simulated
                            (default $SMURFS_SIMULATOR)
  --simulator-style <s>     with --stb: gpt (server/main.py's prompt) or mirrorapi (server/system_prompts.py
                            and main_mirrorapi_cache.py's prompt) (default gpt)
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
  --observation-limit <n>   characters of a tool response the model sees (default ${REACT_DEFAULTS.observationLimit})
  --timeout <ms>            per-request model timeout (default ${MODEL_DEFAULTS.timeoutMs})
  --think <on|off|low|medium|high>
                            ${THINK_HELP}
  --stop-after <n>          stop (exit 4) when n tasks in a row fail because of the model server (default ${RUNNER_DEFAULTS.stopAfterUnreachable})
  --full-trace              keep every prompt in the task records (large)
  --max-record-bytes <n>    largest task record file; past it long strings are cut harder (default ${SIZE_CAPS.recordBytes})
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
  // the simulated tool server (issue 25 §1)
  simulator: { type: "string" },
  "simulator-style": { type: "string" },
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
  timeout: { type: "string" },
  think: { type: "string" },
  "stop-after": { type: "string" },
  "full-trace": { type: "boolean" },
  "max-record-bytes": { type: "string" },
  json: { type: "boolean" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "bench", help: HELP, options: OPTIONS } as const

const list = (values: ReadonlyArray<string> | undefined): Array<string> | undefined => (values === undefined ? undefined : splitList(values))

const positiveInt = (name: string, text: string | undefined): number | undefined => intOption(name, text)

/** The command's options, parsed; workers read a queued job's settings with it too. */
const parse = ({ values }: ParsedCommand<typeof OPTIONS>, env: NodeJS.ProcessEnv = process.env) => {
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
  const simulator = simulatorSpecOf(values.simulator, env)
  const storeDir = values["store-dir"] ?? join(out, "simulated")
  return {
    data,
    out,
    groups: list(values.group) ?? [...GROUPS],
    methods,
    model: values.model ?? defaultModelSpec(),
    envs: list(values.env) ?? (simulator === undefined ? [...BENCH_DEFAULTS.envs] : ["replay", "simulated"]),
    responses: values.responses ?? layout.responses,
    cacheDir: values["cache-dir"] ?? layout.toolResponseCache,
    storeDir,
    simulator,
    simulatorStyle: choiceOption("simulator-style", values["simulator-style"], SIMULATOR_STYLES, "gpt") as SimulatorStyle,
    // a folder the user named is shared (their server, other runs); the one found inside --data is only read
    simulatorCacheDir: values["cache-dir"] !== undefined ? resolve(values["cache-dir"]) : join(storeDir, "tool_response_cache"),
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
    timeoutMs: positiveInt("timeout", values.timeout),
    think: thinkOption(values.think),
    stopAfter: positiveInt("stop-after", values["stop-after"]),
    fullTrace: values["full-trace"] === true,
    maxRecordBytes: positiveInt("max-record-bytes", values["max-record-bytes"]),
    json: values.json === true
  }
}

export type BenchArgs = ReturnType<typeof parse>

/** A queued job's bench options, read as the command reads its own (no environment, no config file: the job carries them all). */
// (a worker's own SMURFS_SIMULATOR is not read either: the coordinator names its simulator in the job)
export const parseBenchArgs = (argv: ReadonlyArray<string>): BenchArgs => parse(parseCommand(COMMAND, argv, { env: {}, cwd: "/nonexistent-smurfs-config" }), {})

// ToolEval labels an answer that lists what is missing Unsolved: bench answers with what was found only
const smurfsOptions = (args: BenchArgs): SmurfsOptions => ({ maxSteps: args.smurfsMaxSteps, reportUnavailable: false })

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
      prompts: baselinePrompts(args.stb)
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
    const chain = yield* makeEnvironmentChain(args.envs, {
      responses: args.responses,
      cacheDir: args.cacheDir,
      storeDir: args.storeDir,
      storeRoot: args.out,
      simulatorPrompts: simulatorPrompts(args.stb, args.simulatorStyle),
      ...(args.simulator === undefined ? {} : { simulator: yield* benchSimulator(args), writeCacheDir: args.simulatorCacheDir })
    })
    // Replay and offline answers are final, so failed results are worth caching too.
    return args.callCache === undefined ? chain : (yield* makeToolCache({ dir: args.callCache, cacheErrors: true })).wrapEnvironment(chain)
  })

/** The simulator's model, built once per run (a second model server, apart from the model under test). */
const simulatorModels = new WeakMap<BenchArgs, LanguageModelShape>()
const benchSimulator = (args: BenchArgs) =>
  Effect.gen(function* () {
    const built = simulatorModels.get(args)
    if (built) return built
    const model = yield* simulatorModel(args.simulator!, { timeoutMs: args.timeoutMs })
    simulatorModels.set(args, model)
    return model
  })

/** A query's Task on its whole api_list or its relevant APIs, served by the run's tool environment. */
const listedTask = (toolset: "all" | "relevant", env: ToolEnvironment) => (query: BenchQuery) =>
  taskOf(query, toolset, (name, docs) => toolbenchLibrary(name, docs as ReadonlyArray<ApiDocInput>, env))

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
    const listed = listedTask(toolset.kind, yield* benchEnvironment(args))
    return (query: BenchQuery): Effect.Effect<Task, Error> => Effect.succeed(listed(query))
  })

/** The model layer of a run: the served model (one server or a pool), behind the call cache when asked. */
export const benchModelLayer = (args: BenchArgs, observer?: ModelCallObserver) => {
  // Ollama serves OLLAMA_NUM_PARALLEL requests at once (its own default applies); other servers get one slot per task.
  const modelConcurrency = args.modelConcurrency ?? (args.model.startsWith("ollama:") ? undefined : args.concurrency)
  const resolved = resolveModelLayer(args.model, { concurrency: modelConcurrency, timeoutMs: args.timeoutMs, think: args.think, endpoints: args.endpoints })
  // below the call cache: what is observed is what a server answers, as it answers
  const served = observer === undefined ? resolved : Layer.provide(observedModelLayer(observer), resolved)
  return args.callCache === undefined ? served : Layer.provide(modelCacheLayer({ dir: args.callCache }), served)
}

/** The options workers rebuild a task from: the command's own, without those that only steer this process. */
// (the embedding cache is a folder of this machine: each worker keeps its own)
const workerArgv = (argv: ReadonlyArray<string>, args: BenchArgs): Array<string> => {
  const own = withoutOptions(argv, ["queue", "resume", "force", "embed-cache"])
  // a simulator named by this process's SMURFS_SIMULATOR goes to the workers by name, so that they run the same chain
  const named = argv.some((a) => a === "--simulator" || a.startsWith("--simulator="))
  return args.simulator !== undefined && !named ? [...own, "--simulator", args.simulator] : own
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

const queueExecutorFor = (args: BenchArgs, config: RunConfig, argv: ReadonlyArray<string>, progress: Progress, retrieval: RetrievalRecord | undefined) =>
  makeQueueExecutor({
    // a retrieved task goes with its recorded set; the worker retrieves per subtask from its copy of the corpus
    retrievalOf: retrieval ? (job) => ({ set: retrieval.sets[taskKey(job.query)] ?? [], corpusHash: retrieval.settings.corpusHash }) : undefined,
    ...QUEUE_DEFAULTS,
    queueUrl: args.queue!,
    runId: runIdFor(args.out, config),
    argv,
    onRequeued: (count) => progress.log(`the queue had lost ${count === 1 ? "a task" : `${count} tasks`} (Redis restarted empty or was flushed): queued again`),
    // the workers make the model calls: their reports move the live counts
    onTaskCalls: (job, calls) => progress.taskCalls?.({ method: job.method, group: job.query.group, taskId: job.query.id }, calls.modelCalls, calls.tokens)
  })

/** Add the endpoints' figures to run.json (written at the start; only this field changes). */
const recordEndpointStats = (out: string, endpoints: ReadonlyArray<EndpointStats>) =>
  Effect.gen(function* () {
    const path = runConfigPath(out)
    const current = yield* Effect.try({ try: () => JSON.parse(readFileBounded(path)) as Record<string, unknown>, catch: () => undefined }).pipe(Effect.orElseSucceed(() => undefined))
    if (current) yield* writeJsonAtomic(path, { ...current, endpointStats: endpoints })
  })

/**
 * Count the run's misses (tool calls nothing recorded or simulated) over its task records and add
 * them to run.json, so that a pass rate is never read without them.
 */
const recordMisses = (out: string) =>
  Effect.gen(function* () {
    const entries = yield* Effect.try({ try: () => loadSource(out).entries, catch: () => undefined }).pipe(Effect.orElseSucceed(() => []))
    const misses = missCounts(entries)
    const path = runConfigPath(out)
    const current = yield* Effect.try({ try: () => JSON.parse(readFileBounded(path)) as Record<string, unknown>, catch: () => undefined }).pipe(Effect.orElseSucceed(() => undefined))
    if (current) yield* writeJsonAtomic(path, { ...current, misses })
    return misses
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
    if (!args.envs.includes("simulated"))
      console.error(
        `smurfs bench: no simulator: a tool call nothing recorded fails (environments ${args.envs.join(",")}), where StableToolBench's server would ask its simulator model. ` +
          `Such calls are counted as misses per task and in run.json; pass rates are shown with their miss rate. Give --simulator <model spec> (or ${SIMULATOR_ENV}) to answer them as StableToolBench does.`
      )
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
    const taskOfQuery = retrieval ? retrieval.taskOf : listedTask(toolset.kind === "relevant" ? "relevant" : "all", yield* benchEnvironment(args))
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
        budget: args.budget ?? DFSDT_DEFAULTS.budget,
        observationLimit: args.observationLimit ?? REACT_DEFAULTS.observationLimit,
        modelConcurrency: args.modelConcurrency ?? null,
        timeoutMs: args.timeoutMs ?? null,
        think: args.think ?? null,
        responses: args.responses ?? null,
        cacheDir: args.cacheDir ?? null,
        callCache: args.callCache ?? null,
        // who answered calls nothing recorded: a simulator (its texts and cache); absent when nobody did (misses are counted),
        // so that a run started before this field resumes as it was
        ...(args.envs.includes("simulated")
          ? { simulator: { model: args.simulator ?? args.model, prompts: simulatorPrompts(args.stb, args.simulatorStyle).source, cacheDir: args.simulator === undefined ? null : args.simulatorCacheDir } }
          : {}),
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
      maxRecordBytes: args.maxRecordBytes,
      progress,
      finish: finishSpec(baselinePrompts(args.stb)),
      executor
    })
    const misses = yield* recordMisses(args.out)
    if (misses.missedToolCalls > 0)
      console.error(
        `smurfs bench: ${plural(misses.missedToolCalls, "tool call")} of ${misses.toolCalls} (${plural(misses.tasksWithMisses, "task")}) had no recorded response and no simulator: ` +
          "they failed, and the pass rates of this run count them as failures."
      )
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

export const run = (argv: string[]): Promise<number> => runCommand(COMMAND, argv, (parsed) => bench(parse(parsed), argv))

const bench = (args: BenchArgs, argv: ReadonlyArray<string>): Promise<number> => {
  try {
    baselinePrompts(args.stb)
    if (args.envs.includes("simulated")) simulatorPrompts(args.stb, args.simulatorStyle)
  } catch (e) {
    console.error(`smurfs bench: ${(e as Error).message}`)
    return Promise.resolve(ExitCode.BadInput)
  }
  const resumeHint = `Rerun with --resume to continue: smurfs bench ${argv.filter((a) => a !== "--resume").join(" ")} --resume`
  const progress = makeProgress()
  const modelLayer = benchModelLayer(args, { onEnd: (_role, response) => progress.modelCall?.(response ? response.usage.promptTokens + response.usage.completionTokens : 0) })
  // Ctrl-C / SIGTERM interrupt the run; finished records are already on disk.
  return runProgram(program(args, workerArgv(argv, args), progress).pipe(Effect.scoped, Effect.provide(modelLayer.pipe(Layer.provideMerge(poolStatsLayer))), Effect.provide(otlpLayer())), {
    command: "bench",
    interrupted: () => console.error(`\nsmurfs bench: interrupted; finished tasks are kept in ${args.out}. ${resumeHint}`),
    // what was recorded stays: a down server or a full disk ends the run, and the same command goes on
    hint: (error) => (error instanceof ModelServerDown || error instanceof RunDirError ? resumeHint : undefined)
  })
}
