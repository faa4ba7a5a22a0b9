// A verified replay (`bench --replay-from <run>`): the finished run again, each task answered from its own recorded
// model replies (no model at all) and its tools from the run's recorded responses, then every trajectory checked
// against its record: the tasks that diverge, and where (the first differing event).
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { z } from "zod"
import { finishSpec } from "../src/agents/finish.ts"
import { PROFILE_SETTINGS, PROFILES } from "../src/agents/profile.ts"
import type { FailureKind } from "../src/failure.ts"
import { canonicalJson } from "../src/llm/cache.ts"
import { ModelServerError } from "../src/llm/errors.ts"
import { LanguageModel, type ModelInfo } from "../src/llm/language-model.ts"
import { RECORDED_REPLIES_HOST, recordedRepliesModel } from "../src/llm/recorded-replies.ts"
import { makeEnvironmentChain } from "../src/tools/environments/chain.ts"
import { SIMULATED_STORE_FILE } from "../src/tools/environments/simulated.ts"
import { writeJsonAtomic } from "../src/trace/atomic-write.ts"
import { dataOf, isKind, kindOf } from "../src/trace/events.ts"
import { readFileBounded } from "../src/trace/guarded-fs.ts"
import type { ModelCallData, RunEvent } from "../src/trace/record.ts"
import { listedTask, methodEntries, promptsOf, runConfigOf } from "./app.ts"
import { loadQueries } from "./datasets.ts"
import type { Progress } from "./progress.ts"
import { readRecord } from "./run-dir.ts"
import { RunConfig, runConfigPath, type TaskRecord, taskRecordPath } from "./run-format.ts"
import { runSeedsOf, settingsDiff } from "./run-settings.ts"
import { type RunSummary, runBench } from "./runner.ts"
import { type AgentRun, type BenchSettings, benchSettings, toolsetOf } from "./settings.ts"

/** The run to replay cannot be replayed as asked; the message says why and what to do. */
export class ReplayError extends Data.TaggedError("ReplayError")<{ readonly message: string }> {
  get kind(): FailureKind {
    return "bad-input"
  }
}

/** Where a replayed task first went another way than its record. */
export const Divergence = z.object({
  method: z.string(),
  group: z.string(),
  taskId: z.string(),
  /** The agent run (absent: run 0 of a run of one). */
  run: z.number().optional(),
  /** The first differing event (1-based), when the events differ; absent when only the outcome does. */
  event: z.number().optional(),
  /** What differs there, recorded vs replayed. */
  where: z.string()
})
export type Divergence = z.infer<typeof Divergence>

/** `<out>/replay.json`: what a verified replay found. */
export const ReplayReport = z.object({
  /** The replayed run. */
  source: z.string(),
  /** Finished task records of the source, each replayed and checked. */
  checked: z.number(),
  /** Of those, the ones that came out identical. */
  identical: z.number(),
  divergences: z.array(Divergence),
  /** Records of the source that are no result (`error`) or missing: not replayed. */
  skipped: z.number(),
  /** Model calls the replay made: none, by construction (a model that fails when called stands in for one). */
  modelCalls: z.number()
})
export type ReplayReport = z.infer<typeof ReplayReport>

export const REPLAY_REPORT_FILE = "replay.json"

/** The model of a replay: none. A call to it is a bug of the replay, never a silent call to a server. */
export const noModelLayer = (info: ModelInfo, onCall: () => void = () => {}): Layer.Layer<LanguageModel> =>
  Layer.succeed(
    LanguageModel,
    LanguageModel.of({
      info,
      generate: (request) =>
        Effect.suspend(() => {
          onCall()
          return Effect.fail(
            new ModelServerError({
              host: RECORDED_REPLIES_HOST,
              detail: `a replay makes no model call, yet a ${request.role} request reached the model`
            })
          )
        })
    })
  )

const readSourceConfig = (source: string): RunConfig => {
  const path = runConfigPath(source)
  if (!existsSync(path))
    throw new ReplayError({
      message: `--replay-from ${source}: it has no run.json, so it is not a run directory made by \`smurfs bench\`.`
    })
  const parsed = RunConfig.safeParse(JSON.parse(readFileBounded(path)))
  if (!parsed.success)
    throw new ReplayError({
      message: `--replay-from ${source}: its run.json does not validate (${parsed.error.message})`
    })
  return parsed.data
}

const numberOr = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined)

/**
 * The settings that ran `config`, rebuilt from its run.json over what the command gave (`given`: its --out, and any
 * flag the run.json cannot tell, such as --stb or --smurfs-src on this machine).
 */
export const replaySettingsOf = (config: RunConfig, given: BenchSettings): BenchSettings => {
  const o = config.options
  const profile = (o["profile"] ?? {}) as {
    name?: unknown
    chain?: { temperature?: unknown; nudge?: unknown; validateArgs?: unknown; parallelCalls?: unknown }
    smurfs?: { prompts?: unknown }
  }
  const name = (PROFILES as ReadonlyArray<unknown>).includes(profile.name)
    ? (profile.name as (typeof PROFILES)[number])
    : "improved"
  const p = PROFILE_SETTINGS[name]
  // a temperature the profile does not set by itself was given (--temperature)
  const chainTemperature = numberOr(profile.chain?.temperature)
  const temperature =
    chainTemperature !== undefined && chainTemperature !== p.chain.temperature ? chainTemperature : undefined
  const prompts = typeof o["prompts"] === "string" ? o["prompts"] : "smurfs"
  const smurfsPrompts = typeof profile.smurfs?.prompts === "string" ? profile.smurfs.prompts : undefined
  const seeds = runSeedsOf(config)
  const smurfsLimits = (o["smurfs"] ?? {}) as { maxSteps?: unknown }
  const bool = (v: unknown) => (typeof v === "boolean" ? v : undefined)
  return benchSettings({
    out: given.out,
    data: config.data,
    groups: config.groups,
    methods: config.methods as BenchSettings["methods"],
    model: config.model,
    envs: config.envs,
    toolset: config.toolset,
    ...(config.limit === undefined ? {} : { limit: config.limit }),
    ...(config.ids === undefined ? {} : { ids: config.ids }),
    concurrency: given.concurrency,
    ...(typeof o["toolCalling"] === "string" ? { toolCalling: o["toolCalling"] as BenchSettings["toolCalling"] } : {}),
    // a smurfs run that recorded no executor ran the paper's three requests (before --executor)
    ...(typeof o["executor"] === "string"
      ? { executor: o["executor"] as BenchSettings["executor"] }
      : config.methods.includes("smurfs")
        ? { executor: "three-call" as const }
        : {}),
    tries: numberOr(o["tries"]),
    smurfsMaxSteps: numberOr(smurfsLimits.maxSteps),
    singleChainMaxStep: numberOr(o["singleChainMaxStep"]),
    budget: numberOr(o["budget"]),
    observationLimit: numberOr(o["observationLimit"]),
    profile: name,
    ...(temperature === undefined ? {} : { temperature }),
    seed: numberOr(o["seed"]),
    numCtx: numberOr(o["numCtx"]),
    chainOverrides: {
      nudge: bool(profile.chain?.nudge),
      validateArgs: bool(profile.chain?.validateArgs),
      parallelCalls: bool(profile.chain?.parallelCalls)
    },
    ...(o["runs"] === undefined ? {} : { seeds }),
    ...(prompts.startsWith("stabletoolbench:") ? { stb: given.stb ?? prompts.slice("stabletoolbench:".length) } : {}),
    ...(smurfsPrompts?.startsWith("smurfs-src:")
      ? { smurfsSrc: given.smurfsSrc ?? smurfsPrompts.slice("smurfs-src:".length) }
      : {}),
    fullTrace: o["fullTrace"] === true,
    replayFrom: given.replayFrom
  })
}

/** Event fields that say how fast or from where something was served, not what happened: a replay may differ there. */
const VOLATILE = new Set(["durationMs", "cached", "served", "match", "simulator"])

/** An event as a replay must reproduce it: its kind, place and data, without ids, times and how it was served. */
const essence = (event: RunEvent) => ({
  kind: kindOf(event),
  subject: event.subject,
  subtask: event.subtask,
  agent: event.agent,
  agentdepth: event.agentdepth,
  parentsubtask: event.parentsubtask,
  data: Object.fromEntries(Object.entries(event.data).filter(([key]) => !VOLATILE.has(key)))
})

const clip = (value: unknown): string => {
  const text = typeof value === "string" ? JSON.stringify(value) : canonicalJson(value)
  return text.length > 120 ? `${text.slice(0, 119)}…` : text
}

/** Where two events' essences differ first: the field and both values. */
const fieldDifference = (a: ReturnType<typeof essence>, b: ReturnType<typeof essence>): string => {
  if (a.kind !== b.kind) return `recorded ${a.kind}, replayed ${b.kind}`
  for (const key of ["subject", "subtask", "agent", "agentdepth", "parentsubtask"] as const)
    if (a[key] !== b[key]) return `${a.kind} ${key}: recorded ${clip(a[key])}, replayed ${clip(b[key])}`
  const keys = [...new Set([...Object.keys(a.data), ...Object.keys(b.data)])].sort()
  for (const key of keys)
    if (canonicalJson(a.data[key]) !== canonicalJson(b.data[key]))
      return `${a.kind} ${key}: recorded ${clip(a.data[key])}, replayed ${clip(b.data[key])}`
  return `${a.kind} differs`
}

/** Where a replayed record first differs from its record; undefined when they are identical. */
export const firstDifference = (
  recorded: TaskRecord,
  replayed: TaskRecord | undefined
): Pick<Divergence, "event" | "where"> | undefined => {
  if (replayed === undefined) return { where: "the replay wrote no record (the method crashed)" }
  const a = recorded.events.map(essence)
  const b = replayed.events.map(essence)
  for (let i = 0; i < Math.min(a.length, b.length); i++)
    if (canonicalJson(a[i]) !== canonicalJson(b[i])) return { event: i + 1, where: fieldDifference(a[i]!, b[i]!) }
  if (a.length !== b.length)
    return {
      event: Math.min(a.length, b.length) + 1,
      where:
        a.length > b.length
          ? `the replay ended after ${b.length} events; the record goes on with ${a[b.length]!.kind}` +
            (replayed.error ? ` (replay: ${replayed.error})` : "")
          : `the record ended after ${a.length} events; the replay goes on with ${b[a.length]!.kind}`
    }
  if (recorded.finishType !== replayed.finishType)
    return {
      where: `finish: recorded ${recorded.finishType}, replayed ${replayed.finishType}${replayed.error ? ` (${replayed.error})` : ""}`
    }
  if (recorded.finalAnswer !== replayed.finalAnswer)
    return { where: `final answer: recorded ${clip(recorded.finalAnswer)}, replayed ${clip(replayed.finalAnswer)}` }
  return undefined
}

/** A source record's ok and failed model calls, as a replay answers them. */
const modelCallsOf = (record: TaskRecord): Array<ModelCallData> =>
  record.events.filter((e) => isKind(e, "model_call")).map((e) => dataOf(e, "model_call") as ModelCallData)

/** What a verified replay did: the run's summary and the check of every trajectory. */
export interface ReplayOutcome {
  readonly summary: RunSummary
  readonly report: ReplayReport
}

/**
 * Replay the run `settings.replayFrom` into `settings.out` with no model: each task's model answers only from its
 * record (a request it never made fails), the tools from the run's recorded and simulated responses. `model` stands
 * for the model layer of the run (by default one that fails when called: the replay never calls it).
 */
export const runReplay = (given: BenchSettings, progress: Progress, model?: Layer.Layer<LanguageModel>) =>
  Effect.gen(function* () {
    const source = resolve(given.replayFrom ?? "")
    const config = yield* Effect.try({
      try: () => readSourceConfig(source),
      catch: (e) => (e instanceof ReplayError ? e : new ReplayError({ message: (e as Error).message }))
    })
    if (toolsetOf({ toolset: config.toolset }).kind === "retrieve")
      return yield* new ReplayError({
        message: `--replay-from ${source}: a run with --toolset ${config.toolset} cannot be replayed yet (its per-subtask retrieval is not recorded).`
      })
    const settings = yield* Effect.try({
      try: () => replaySettingsOf(config, given),
      catch: (e) => new ReplayError({ message: `--replay-from ${source}: ${(e as Error).message}` })
    })
    const info: ModelInfo = config.modelInfo ?? {
      spec: config.model,
      provider: config.model.split(":")[0] ?? config.model,
      model: config.modelName ?? config.model,
      contextTokens: numberOr(config.options["numCtx"]) ?? 8192,
      supportsTools: true
    }
    const queries = yield* loadQueries({
      dir: settings.data,
      groups: settings.groups,
      ids: settings.ids,
      limit: settings.limit
    })
    // the settings rebuilt must be the run's: anything else would replay another run
    const rebuilt = runConfigOf(settings, queries, info.model, undefined, info)
    const diff = settingsDiff(config, rebuilt).filter((line) => !line.startsWith("simulator:"))
    if (diff.length > 0)
      return yield* new ReplayError({
        message: `--replay-from ${source}: the run's settings cannot be rebuilt on this machine (${diff.join("; ")}). Give the flags that differ (such as --stb or --smurfs-src for this machine's checkouts).`
      })
    // tools: the run's recorded responses, its simulated ones as stored, misses failing as they did; no simulator
    const simulator = config.options["simulator"] as { cacheDir?: unknown } | undefined
    const env = yield* makeEnvironmentChain(["replay", "offline"], {
      responses: typeof config.options["responses"] === "string" ? config.options["responses"] : undefined,
      cacheDir: typeof config.options["cacheDir"] === "string" ? config.options["cacheDir"] : undefined,
      moreCacheDirs: [
        ...(typeof simulator?.cacheDir === "string" ? [simulator.cacheDir] : []),
        join(source, "simulated", "tool_response_cache")
      ],
      storeDir: existsSync(join(source, "simulated", SIMULATED_STORE_FILE)) ? join(source, "simulated") : undefined,
      // matched as the run matched them (a run recorded before the field was lenient)
      replayMatch: config.options["replayMatch"] === "exact" ? "exact" : "lenient"
    }).pipe(Effect.provide(noModelLayer(info)))
    const sourceRecord = (method: string, group: string, taskId: string, run: number) =>
      readRecord(taskRecordPath(source, method, group, taskId, run))
    let modelCalls = 0
    const summary = yield* runBench({
      runDir: settings.out,
      config: { ...config, createdAt: new Date().toISOString(), options: { ...config.options, replayOf: source } },
      queries,
      methods: methodEntries(settings),
      taskOf: listedTask(
        toolsetOf(settings).kind === "relevant" ? "relevant" : "all",
        env,
        PROFILE_SETTINGS[settings.profile].wholeToolResponses
      ),
      concurrency: settings.concurrency,
      resume: false,
      modelSpec: config.model,
      // a task the record cannot answer is a divergence, never a reason to stop
      stopAfterUnreachable: Number.MAX_SAFE_INTEGER,
      fullTrace: settings.fullTrace,
      progress,
      finish: finishSpec(promptsOf(settings)),
      ...(config.options["runs"] === undefined
        ? {}
        : { agentRuns: runSeedsOf(config).map((seed, run): AgentRun => ({ run, seed })) }),
      modelFor: (job) => {
        const record = sourceRecord(job.method, job.query.group, job.query.id, job.run ?? 0)
        return recordedRepliesModel(record && record.finishType !== "error" ? modelCallsOf(record) : [], info)
      }
    }).pipe(
      Effect.provide(
        model ??
          noModelLayer(info, () => {
            modelCalls++
          })
      )
    )
    // every finished record of the source, against its replay
    const divergences: Array<Divergence> = []
    let checked = 0,
      skipped = 0
    const runs = config.options["runs"] === undefined ? [0] : runSeedsOf(config).map((_, run) => run)
    for (const run of runs)
      for (const method of config.methods)
        for (const query of queries) {
          const recorded = sourceRecord(method, query.group, query.id, run)
          if (recorded === undefined || recorded.finishType === "error") {
            skipped++
            continue
          }
          checked++
          const replayed = readRecord(taskRecordPath(settings.out, method, query.group, query.id, run))
          const difference = firstDifference(recorded, replayed)
          if (difference)
            divergences.push({
              method,
              group: query.group,
              taskId: query.id,
              ...(recorded.run === undefined ? {} : { run }),
              ...difference
            })
        }
    const report: ReplayReport = {
      source,
      checked,
      identical: checked - divergences.length,
      divergences,
      skipped,
      modelCalls
    }
    yield* writeJsonAtomic({ root: settings.out, path: join(settings.out, REPLAY_REPORT_FILE) }, report)
    return { summary, report } satisfies ReplayOutcome
  }).pipe(Effect.scoped)
