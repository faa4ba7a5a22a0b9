// The settings of a bench run, as one zod schema: the CLI fills them from flags and smurfs.config.json, the
// library and tests build them directly, and a queued job carries the allow-listed part of them (JobSettings).
import { join } from "node:path"
import { z } from "zod"
import { DFSDT_DEFAULTS } from "../src/agents/dfsdt.ts"
import { METHOD_NAMES } from "../src/agents/methods.ts"
import { DEFAULT_PROFILE, PROFILES } from "../src/agents/profile.ts"
import { REACT_DEFAULTS } from "../src/agents/react.ts"
import { defaultExecutor, EXECUTORS, executorUnderReference, smurfsDefaults } from "../src/agents/smurfs-options.ts"
import { DEFAULT_MODEL_SPEC, isPortableSpec, MODEL_DEFAULTS } from "../src/llm/spec.ts"
import { SIMULATOR_STYLES } from "../src/tools/environments/simulator-prompts.ts"
import { defaultEmbeddingCache } from "../src/tools/retrieval/embedding-cache.ts"
import { parseToolset, type Toolset } from "../src/tools/retrieval/toolset.ts"
import { SIZE_CAPS } from "../src/trace/size-caps.ts"
import { CONVERSER_NAMES } from "./benchmarks/tau2/conversers.ts"
import { DEFAULT_DATA_DIR, dataLayout, GROUPS } from "./datasets.ts"

/** The most agent runs per task (`--runs`, `--seeds`). */
export const MAX_AGENT_RUNS = 100

/** The version of the settings a queued job carries: a worker refuses a job of another version. */
export const BENCH_SETTINGS_VERSION = 1

const count = z.number().int().positive()
const toolsetText = z.string().refine((text) => {
  try {
    parseToolset(text)
    return true
  } catch {
    return false
  }
}, "toolset must be all, relevant, retrieve or retrieve:<k>")

/**
 * The options of a run that shape its tasks or their results (and may travel to a worker). Adding a
 * setting is one line here (with its default) and its flag in the command.
 */
const RunOptions = {
  /** Tool environments, tried in order: replay, simulated, offline; default replay,simulated with a simulator, else replay,offline. */
  envs: z.array(z.string()).min(1).optional(),
  /** A model (not the one under test) that answers tool calls nothing recorded, as StableToolBench's server does. */
  simulator: z.string().min(1).optional(),
  /** With stb: StableToolBench's GPT-style server prompt (gpt) or MirrorAPI's (mirrorapi). */
  simulatorStyle: z.enum(SIMULATOR_STYLES).default("gpt"),
  /** A task's tools: all (its api_list), relevant, or retrieve[:k]. */
  toolset: toolsetText.default("all"),
  /** A method's own toolset over `toolset` and the profile's (all or relevant), e.g. { smurfs: "relevant" }. */
  methodToolsets: z.partialRecord(z.enum(METHOD_NAMES), z.enum(["all", "relevant"])).default({}),
  /** With retrieve: hybrid retrieval with this embedding model. */
  embed: z.string().optional(),
  /** With retrieve: the model re-ranks the top candidates. */
  rerank: z.boolean().default(false),
  /** How react/dfsdt act. */
  toolCalling: z.enum(["auto", "native", "json"]).default("auto"),
  /** react: chains per task (CoT@n). */
  tries: count.optional(),
  /** smurfs (improved): fused (the default: one request for thought, tool and arguments, one for answer+verdict) or three-call (the paper's requests per step); unset = the profile's. */
  executor: z.enum(EXECUTORS).optional(),
  /** smurfs: accepted steps on a subtask's path. */
  smurfsMaxSteps: count.optional(),
  /** react/dfsdt: tree nodes per chain. */
  singleChainMaxStep: count.optional(),
  /** dfsdt: model calls per task. */
  budget: count.optional(),
  /** Characters of a tool response the model sees. */
  observationLimit: count.optional(),
  /** Per-request model timeout in milliseconds. */
  timeoutMs: count.optional(),
  /** Thinking of reasoning models: on/off or a level. */
  think: z.union([z.boolean(), z.enum(["low", "medium", "high"])]).optional(),
  /** llama.cpp's server: each task's requests on one slot (`id_slot`): its slots, or `auto` from its /props. */
  slotAffinity: z.union([z.literal("auto"), count]).optional(),
  /** Keep every prompt in the task records. */
  fullTrace: z.boolean().default(false),
  /** improved (ours) or reference (the Smurfs authors' agents and StableToolBench's baselines as they ran). */
  profile: z.enum(PROFILES).default(DEFAULT_PROFILE),
  /** Sampling temperature; default the profile's (improved 0; reference 0.95 smurfs, 1.0 react/dfsdt). */
  temperature: z.number().min(0).max(2).optional(),
  /** Sampling seed (default MODEL_DEFAULTS.seed). */
  seed: z.number().int().min(0).optional(),
  /** The model's context window in tokens (default MODEL_DEFAULTS.numCtx). */
  numCtx: count.optional(),
  /** ReAct/DFSDT chain rules over the profile's: nudge after a reply without a call, validate arguments, run every call of a reply. */
  chainOverrides: z
    .object({
      nudge: z.boolean().optional(),
      validateArgs: z.boolean().optional(),
      parallelCalls: z.boolean().optional()
    })
    .default({})
}

export const BenchSettings = z
  .object({
    /** The run directory. */
    out: z.string().min(1),
    /** The query files (and recorded responses) folder. */
    data: z.string().default(DEFAULT_DATA_DIR),
    groups: z
      .array(z.string())
      .min(1)
      .default([...GROUPS]),
    /** The methods (smurfs, react, dfsdt), or with `tau2` the agents that converse (tau2-agent, chat); default smurfs, or tau2-agent. */
    methods: z
      .array(z.enum([...METHOD_NAMES, ...CONVERSER_NAMES]))
      .min(1)
      .optional(),
    /** A τ²-bench checkout (its data/tau2): the run is τ² conversations of `domain` instead of StableToolBench tasks. */
    tau2: z.string().min(1).optional(),
    /** With tau2: the domain (retail). */
    domain: z.string().min(1).default("retail"),
    /** With tau2: the model that plays the user (any provider; not the model under test). */
    userModel: z.string().min(1).optional(),
    /** With tau2: the model that judges the tasks' natural-language assertions (τ²'s NL_ASSERTION); none: not evaluated. */
    judge: z.string().min(1).optional(),
    /** With tau2: only the tasks of this split of split_tasks.json (base, train, test); default every task (= base). */
    taskSplit: z.string().min(1).optional(),
    /** The model spec (ollama:<model>, openai:<model>, scripted:<file>, sim...). */
    model: z.string().min(1).default(DEFAULT_MODEL_SPEC),
    /** Recorded responses to replay; default <data>/responses.jsonl when present. */
    responses: z.string().optional(),
    /** A StableToolBench tool_response_cache folder; default one found inside or beside data. */
    cacheDir: z.string().optional(),
    /** Where simulated responses are stored; default <out>/simulated. */
    storeDir: z.string().optional(),
    /** Cache model replies and tool results in this folder. */
    callCache: z.string().optional(),
    /** The first n queries of each group. */
    limit: count.optional(),
    /** Only these query ids. */
    ids: z.array(z.string()).optional(),
    /** Where document embeddings are cached; default ~/.cache/smurfs/embeddings. */
    embedCache: z.string().optional(),
    /** Tasks run at once. */
    concurrency: count.default(4),
    /** Requests in flight per model server; default: concurrency for openai, Ollama's own for ollama. */
    modelConcurrency: count.optional(),
    /**
     * Model lanes: at most this many tasks send requests at once, each keeping its lane (and with slotAffinity its
     * slot) until it ends or idles past `laneGraceMs` while another waits; `auto` the server's slots when known
     * (llama.cpp's /props, the embedded engine's sequences, Ollama's modelConcurrency or OLLAMA_NUM_PARALLEL), else
     * off. A worker's own (its server's), never a job's.
     */
    lanes: z.union([z.literal("auto"), z.literal("off"), count]).default("auto"),
    /** How long a task may hold its lane with no request in flight while another task waits (default 2000 ms). */
    laneGraceMs: z.number().int().min(0).optional(),
    /** Several servers of the same model (url or url*N). */
    endpoints: z.array(z.string()).optional(),
    /** A Redis URL: the tasks go to `smurfs worker` processes. */
    queue: z.string().optional(),
    /** Continue the run in `out`, skipping finished tasks. */
    resume: z.boolean().default(false),
    /** With resume: continue even when the settings differ. */
    force: z.boolean().default(false),
    /** StableToolBench's checkout, whose prompt texts react/dfsdt send; none: our own wording. */
    stb: z.string().optional(),
    /** StableToolBench's tools folder, each tool's own description (task description, simulator); none: its first API's. */
    stbTools: z.string().optional(),
    /** A checkout of the Smurfs authors' code, whose prompt texts smurfs sends under the reference profile. */
    smurfsSrc: z.string().optional(),
    /** Stop when this many tasks in a row fail because of the model server. */
    stopAfter: count.optional(),
    /** The largest task record file in bytes; past it long strings are cut harder (default SIZE_CAPS.recordBytes). */
    maxRecordBytes: count
      .min(SIZE_CAPS.minRecordBytes, {
        message: `--max-record-bytes must be at least ${SIZE_CAPS.minRecordBytes} (64 KiB): a record's fields and events alone take a few kilobytes`
      })
      .optional(),
    /** Agent runs per task and method, each with its own seed (the base seed, then +1, +2...); default 1. */
    runs: count.max(MAX_AGENT_RUNS).optional(),
    /** The seeds of the agent runs, one run each (instead of --runs). */
    seeds: z.array(z.number().int().min(0)).min(1).max(MAX_AGENT_RUNS).optional(),
    /** Re-run this finished run from its recorded model replies and tool results, with no model, and verify each trajectory. */
    replayFrom: z.string().min(1).optional(),
    ...RunOptions
  })
  .superRefine((s, ctx) => {
    const conversing = (s.methods ?? []).filter((m) => (CONVERSER_NAMES as ReadonlyArray<string>).includes(m))
    if (s.tau2 === undefined && conversing.length > 0)
      ctx.addIssue({
        code: "custom",
        message: `${conversing.join(", ")} ${conversing.length === 1 ? "holds" : "hold"} conversations: run ${conversing.length === 1 ? "it" : "them"} on τ²-bench (--tau2 <checkout> --user-model <spec>)`
      })
    if (s.tau2 !== undefined) {
      const other = (s.methods ?? []).filter((m) => !conversing.includes(m))
      if (other.length > 0)
        ctx.addIssue({
          code: "custom",
          message: `--tau2 runs conversations: ${other.join(", ")} cannot hold one (use ${CONVERSER_NAMES.join(", ")})`
        })
      if (s.userModel === undefined)
        ctx.addIssue({
          code: "custom",
          message:
            "--tau2 needs --user-model <spec>: the model that plays the user (τ² uses a model apart from the agent's)"
        })
      if (s.replayFrom !== undefined)
        ctx.addIssue({
          code: "custom",
          message: "--tau2 runs its conversations anew: --replay-from is for StableToolBench runs"
        })
      if (s.judge !== undefined && s.queue !== undefined)
        ctx.addIssue({
          code: "custom",
          message:
            "--judge judges τ²'s natural-language assertions in this process: run without --queue to judge them (a worker's conversations leave them not evaluated)"
        })
    }
    if (s.force && !s.resume)
      ctx.addIssue({
        code: "custom",
        message: "--force only applies with --resume (it continues a run whose settings differ)"
      })
    if (s.runs !== undefined && s.seeds !== undefined && s.runs !== s.seeds.length)
      ctx.addIssue({
        code: "custom",
        message: `--runs ${s.runs} and --seeds (${s.seeds.length} seeds) disagree: give one of them (each seed is one run)`
      })
    if (s.seeds !== undefined && new Set(s.seeds).size !== s.seeds.length)
      ctx.addIssue({ code: "custom", message: "--seeds: each run needs its own seed (a seed is given twice)" })
    if (s.executor === "fused" && s.profile === "reference")
      ctx.addIssue({ code: "custom", message: executorUnderReference })
    if ((s.embed !== undefined || s.rerank) && !s.toolset.startsWith("retrieve"))
      ctx.addIssue({
        code: "custom",
        message: "--embed and --rerank choose how tools are retrieved: use them with --toolset retrieve[:k]"
      })
    if (Object.keys(s.methodToolsets).length > 0 && s.toolset.startsWith("retrieve"))
      ctx.addIssue({
        code: "custom",
        message:
          "--method-toolset gives a method all or relevant APIs: use it with --toolset all or relevant, not retrieve"
      })
  })
  // calls nothing recorded go to the simulator when there is one (StableToolBench's server), else they fail and are counted
  .transform((s) => ({
    ...s,
    methods: s.methods ?? [s.tau2 === undefined ? "smurfs" : "tau2-agent"],
    envs:
      s.envs ??
      (s.simulator === undefined
        ? ["replay", "offline"]
        : mirrorsEveryCall(s)
          ? ["simulated"]
          : ["replay", "simulated"])
  }))

/** Their MirrorAPI servers answer every call themselves (no cache is read): the reference run's default has no replay. */
const mirrorsEveryCall = (s: { profile: string; simulatorStyle: string; stb?: string | undefined }) =>
  s.profile === "reference" && s.simulatorStyle === "mirrorapi" && s.stb !== undefined

export type BenchSettings = z.infer<typeof BenchSettings>
/** What a caller gives: every field with a default may be left out. */
export type BenchSettingsInput = z.input<typeof BenchSettings>

/** Settings that cannot be used; the message names each problem. */
export class InvalidBenchSettings extends Error {
  override readonly name = "InvalidBenchSettings"
}

/** Validate settings and fill in the defaults; throws InvalidBenchSettings naming what is wrong. */
export const benchSettings = (input: BenchSettingsInput): BenchSettings => {
  const parsed = BenchSettings.safeParse(input)
  if (!parsed.success)
    throw new InvalidBenchSettings(
      parsed.error.issues
        .map((i) => (i.path.length > 0 && i.code !== "custom" ? `${i.path.join(".")}: ${i.message}` : i.message))
        .join("; ")
    )
  // no executor asked for: the profile's (fused under improved, the authors' three requests under reference)
  return { ...parsed.data, executor: parsed.data.executor ?? defaultExecutor(parsed.data.profile) }
}

/** The defaults of the settings (the schema's), for help texts. */
export const BENCH_DEFAULTS = (({ data, methods, envs, toolset, concurrency }: BenchSettings) => ({
  data,
  methods,
  envs,
  toolset,
  concurrency
}))(benchSettings({ out: "." }))

/** The toolset of the settings, parsed. */
export const toolsetOf = (settings: Pick<BenchSettings, "toolset">): Toolset => parseToolset(settings.toolset)

/** The folders and files a run reads or writes, defaults resolved from the data layout and the run directory. */
export const pathsOf = (settings: BenchSettings) => {
  const layout = dataLayout(settings.data)
  return {
    responses: settings.responses ?? layout.responses,
    cacheDir: settings.cacheDir ?? layout.toolResponseCache,
    storeDir: settings.storeDir ?? join(settings.out, "simulated"),
    // where a simulator's responses go, in StableToolBench's cache layout: a folder the user named is shared (their
    // server, other runs); the one found inside --data is only read
    simulatorCacheDir:
      settings.cacheDir ?? join(settings.storeDir ?? join(settings.out, "simulated"), "tool_response_cache"),
    embedCache: settings.embedCache ?? defaultEmbeddingCache()
  }
}

/** One agent run of every task: its index (0-based, the record's `run`) and the seed its requests carry. */
export interface AgentRun {
  readonly run: number
  readonly seed: number
}

/**
 * The agent runs of a run's settings: `--seeds` as given, else `--runs N` seeds from the base seed (`--seed`, or
 * the model's default) upwards, so that run 0 is the run a run of one makes and a run of one can be extended.
 */
export const agentRunsOf = (settings: Pick<BenchSettings, "runs" | "seeds" | "seed">): Array<AgentRun> => {
  if (settings.seeds !== undefined) return settings.seeds.map((seed, run) => ({ run, seed }))
  const base = settings.seed ?? MODEL_DEFAULTS.seed
  return Array.from({ length: settings.runs ?? 1 }, (_, run) => ({ run, seed: base + run }))
}

/** Whether the settings ask for more than one run of each task (each record then says its `run` and `seed`). */
export const repeatsRuns = (settings: Pick<BenchSettings, "runs" | "seeds" | "seed">): boolean =>
  settings.seeds !== undefined || (settings.runs ?? 1) > 1

/** The method options of a run's settings, for run.json: each limit as it ran. */
export const limitsOf = (settings: BenchSettings) => ({
  tries: settings.tries ?? REACT_DEFAULTS.tries,
  smurfsMaxSteps: settings.smurfsMaxSteps ?? smurfsDefaults.maxSteps,
  singleChainMaxStep: settings.singleChainMaxStep ?? REACT_DEFAULTS.singleChainMaxStep,
  budget: settings.budget ?? DFSDT_DEFAULTS.budget,
  observationLimit: settings.observationLimit ?? REACT_DEFAULTS.observationLimit
})

/** Whose texts prompt τ²'s agent and user: τ²'s own from a checkout, or ours (a checkout without them). */
const TextSource = z.enum(["tau2", "smurfs"])

/**
 * What a queued τ² conversation carries besides the run options: the domain, the user's model (a setting of the run:
 * a worker uses it when it has no --user-model of its own and the spec names nothing of the coordinator's machine)
 * and whose texts prompt the agent and the user, which the worker's checkout must give too.
 */
export const Tau2JobSettings = z.strictObject({
  domain: z.string().min(1),
  userModel: z.string().min(1),
  taskSplit: z.string().min(1).optional(),
  agentPrompt: TextSource,
  userGuidelines: TextSource
})
export type Tau2JobSettings = z.infer<typeof Tau2JobSettings>

/**
 * What a queued job may carry: the run options that shape a task, the model when it names nothing of
 * the coordinator's machine, and which prompt texts run (the worker reads them from its own checkout).
 * Nothing else: the worker's model server, endpoints, credentials and folders are its own flags only.
 */
export const JobSettings = z.strictObject({
  ...RunOptions,
  envs: z.array(z.string()).min(1),
  /** The run's simulator; a worker uses it when the spec names nothing of the coordinator's machine. */
  simulator: z
    .string()
    .refine(
      isPortableSpec,
      "the simulator must be ollama:<model> or openai:<model> (a worker reads no file a job names)"
    )
    .optional(),
  /** The run's model; a worker uses it only when it has no --model of its own and the spec names nothing of the coordinator's machine. */
  model: z.string().min(1),
  embed: z.string().refine(isPortableSpec, "the embedding model must be ollama:<model> or openai:<model>").optional(),
  prompts: z.enum(["smurfs", "stabletoolbench"]),
  /** Whether the run describes each tool from StableToolBench's tools folder (a worker reads its own --stb-tools). */
  toolDescriptions: z.enum(["api-list", "tools-folder"]).optional(),
  /** A τ² run's conversations (a worker reads the domain and τ²'s texts from its own --tau2 checkout). */
  tau2: z.optional(Tau2JobSettings)
})
export type JobSettings = z.infer<typeof JobSettings>

/** The part of a run's settings a job carries. */
export const jobSettingsOf = (settings: BenchSettings): JobSettings => ({
  envs: settings.envs,
  toolset: settings.toolset,
  methodToolsets: settings.methodToolsets,
  ...(settings.embed === undefined ? {} : { embed: settings.embed }),
  rerank: settings.rerank,
  ...(settings.simulator === undefined ? {} : { simulator: settings.simulator }),
  simulatorStyle: settings.simulatorStyle,
  toolCalling: settings.toolCalling,
  executor: settings.executor,
  ...optional("tries", settings.tries),
  ...optional("smurfsMaxSteps", settings.smurfsMaxSteps),
  ...optional("singleChainMaxStep", settings.singleChainMaxStep),
  ...optional("budget", settings.budget),
  ...optional("observationLimit", settings.observationLimit),
  ...optional("timeoutMs", settings.timeoutMs),
  ...(settings.think === undefined ? {} : { think: settings.think }),
  fullTrace: settings.fullTrace,
  profile: settings.profile,
  ...optional("temperature", settings.temperature),
  ...optional("seed", settings.seed),
  ...optional("numCtx", settings.numCtx),
  chainOverrides: settings.chainOverrides,
  model: settings.model,
  prompts: settings.stb === undefined ? "smurfs" : "stabletoolbench",
  // only when on: a job without it is read alike by the workers of before it
  ...(settings.stbTools === undefined ? {} : { toolDescriptions: "tools-folder" as const })
})

const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  value === undefined ? {} : ({ [key]: value } as { [P in K]?: V })
