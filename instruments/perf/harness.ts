// Runs one perf configuration: a method on ToolBench tasks with a simulated model, timing every task and model call.
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { type BenchQuery, loadQueries, longestFirst } from "../../bench/datasets.ts"
import { withCurrentTask } from "../../bench/sim/current-task.ts"
import { type Recordings, readRecordings } from "../../bench/sim/knowledge.ts"
import { makeSimModel, type SimStats } from "../../bench/sim/model.ts"
import { parseSimSpec, simDefaults } from "../../bench/sim/options.ts"
import { makeServerModel, type ServerModel, type ServerModelOptions } from "../../bench/sim/server.ts"
import { taskOf } from "../../bench/tasks.ts"
import { baselinePrompts } from "../../src/agents/baseline-prompts.ts"
import { type MethodName, methodFor, methodSpec } from "../../src/agents/methods.ts"
import { chainProfileOptions, type ProfileName, smurfsProfileOptions } from "../../src/agents/profile.ts"
import type { LoopRules, SmurfsExecutor } from "../../src/agents/smurfs-options.ts"
import type { Task } from "../../src/agents/task.ts"
import { makeModelCache } from "../../src/llm/cache.ts"
import { LanguageModel, type LanguageModelShape } from "../../src/llm/language-model.ts"
import { makeModelLanes } from "../../src/llm/model-lanes.ts"
import { withModelTask } from "../../src/llm/model-task.ts"
import { makeToolCache } from "../../src/tools/cache.ts"
import { makeEnvironmentChain } from "../../src/tools/environments/chain.ts"
import type { ToolEnvironment } from "../../src/tools/environments/environment.ts"
import { toolbenchLibrary } from "../../src/tools/toolbench/adapter.ts"
import { isKind } from "../../src/trace/events.ts"
import type { Trajectory } from "../../src/trace/trajectory.ts"

export type { MethodName }

/** What every configuration shares: the queries, the recorded responses and the tool environment (replay, then offline). */
export interface PerfSetup {
  readonly data: string
  readonly queries: ReadonlyArray<BenchQuery>
  readonly recordings: Recordings
  readonly env: ToolEnvironment
}

export const loadSetup = (data: string) =>
  Effect.gen(function* () {
    const queries = yield* loadQueries({ dir: data })
    const recordings = readRecordings(data)
    // The chain asks for a model only to serve `simulated`, which perf does not use; any model satisfies it.
    const env = yield* makeEnvironmentChain(["replay", "offline"], { responses: join(data, "responses.jsonl") }).pipe(
      Effect.provideService(LanguageModel, makeSimModel(simDefaults, recordings).model)
    )
    return { data, queries, recordings, env } satisfies PerfSetup
  })

export interface BatchConfig {
  readonly method: MethodName
  /** The simulated model's spec, e.g. `sim:latency=100ms,fault=0.1,seed=7`. */
  readonly sim: string
  readonly queries: ReadonlyArray<BenchQuery>
  readonly concurrency: number
  /** Put the model and tool caches (persisted in this directory) in front of the model and the tools. */
  readonly cacheDir?: string | undefined
  /** Sample the process's resident memory during the batch. */
  readonly sampleMemory?: boolean | undefined
  /** Sees each trajectory (with its prompts) before it is dropped. */
  readonly inspect?: ((trajectory: Trajectory) => void) | undefined
  /**
   * Run the method under a profile, as `smurfs bench --profile` does (the checkouts the reference reads:
   * StableToolBench's for react/dfsdt, the Smurfs authors' for smurfs); without it, the method's defaults.
   */
  readonly profile?:
    | { readonly name: ProfileName; readonly stb?: string | undefined; readonly smurfsSrc?: string | undefined }
    | undefined
  /** Smurfs' loop rules over the profile's (e.g. `answerShortResponses`). */
  readonly rules?: Partial<LoopRules> | undefined
  /** Smurfs' executor (`--executor`); without it, the default (fused). */
  readonly executor?: SmurfsExecutor | undefined
  /** How the fused executor calls a tool (`--tool-calling`); without it, auto. */
  readonly toolCalling?: "auto" | "native" | "json" | undefined
  /**
   * Serve the sim's replies from a modelled server in virtual time (`bench/sim/server.ts`): the tasks in flight overlap
   * on it, its figures are in `BatchResult.server`.
   */
  readonly server?: ServerModelOptions | undefined
  /**
   * Model lanes over the sim (`src/llm/model-lanes.ts`, what `smurfs bench --lanes` ships): at most `lanes` tasks send
   * requests; a task waiting for a lane counts as waiting on the modelled server.
   */
  readonly lanes?: { readonly lanes: number; readonly graceMs?: number | undefined } | undefined
}

/** What one task of a batch measured. */
export interface TaskSample {
  readonly id: string
  readonly answered: boolean
  readonly wallMs: number
  /** Model calls that reached the model (cached replies excluded), as the trace counts them. */
  readonly modelCalls: number
  readonly cachedCalls: number
  /** Tool calls the method made (ReAct/DFSDT actions, Smurfs executor calls). */
  readonly toolCalls: number
  /** Prompt tokens of each model call, in order. */
  readonly promptTokens: ReadonlyArray<number>
  /** Time inside the model (simulator work and simulated latency): the task's critical path on the model. */
  readonly modelMs: number
  /** Time between model calls: the framework's own work before each call (rendering, parsing, tools, tracing). */
  readonly gapsMs: ReadonlyArray<number>
  /** The task's time outside the model. */
  readonly frameworkMs: number
}

export interface BatchResult {
  readonly config: Omit<BatchConfig, "queries" | "inspect"> & { readonly tasks: number }
  readonly wallMs: number
  readonly samples: ReadonlyArray<TaskSample>
  readonly sim: SimStats
  /** The modelled server, when the batch ran on one. */
  readonly server?: ServerModel | undefined
  /** Calls that reached the tool environment (not answered by a tool cache). */
  readonly envCalls: number
  readonly memory?:
    | {
        readonly baselineRssMb: number
        readonly peakRssMb: number
        readonly peakHeapMb: number
        readonly maxRssMb: number
      }
    | undefined
}

const MB = 1024 * 1024

/** Run `config.method` on every query with its own simulated model (built once for the batch). */
export const runBatch = (setup: PerfSetup, config: BatchConfig) =>
  Effect.gen(function* () {
    const parsed = parseSimSpec(config.sim)
    if ("error" in parsed) return yield* Effect.fail(parsed.error)
    const server = config.server === undefined ? undefined : makeServerModel(config.server)
    server?.open(config.concurrency, config.queries.length)
    const sim = makeSimModel(parsed.options, setup.recordings, config.sim, server)
    let envCalls = 0
    const env: ToolEnvironment = {
      name: setup.env.name,
      serve: (call) => Effect.suspend(() => (envCalls++, setup.env.serve(call)))
    }
    const modelCache = config.cacheDir === undefined ? undefined : yield* makeModelCache({ dir: config.cacheDir })
    const toolCache =
      config.cacheDir === undefined ? undefined : yield* makeToolCache({ dir: config.cacheDir, cacheErrors: true })
    const laned =
      config.lanes === undefined
        ? sim.model
        : makeModelLanes({ ...config.lanes, onWait: (task, waiting) => server?.hold(task.key, waiting) }).wrap(
            sim.model
          )
    const model: LanguageModelShape = modelCache ? modelCache.wrap(laned) : laned
    const profile = config.profile
    const method =
      profile || config.executor || config.toolCalling || config.rules
        ? methodFor(config.method, {
            ...(profile
              ? {
                  prompts: baselinePrompts(profile.name === "reference" ? profile.stb : undefined),
                  smurfsProfile: smurfsProfileOptions(profile.name, profile.smurfsSrc),
                  chainProfile: chainProfileOptions(profile.name)
                }
              : {}),
            ...(config.rules
              ? {
                  smurfsProfile: {
                    ...(profile ? smurfsProfileOptions(profile.name, profile.smurfsSrc) : {}),
                    rules: {
                      ...(profile ? smurfsProfileOptions(profile.name, profile.smurfsSrc).rules : {}),
                      ...config.rules
                    }
                  }
                }
              : {}),
            smurfsExecutor: config.executor,
            toolCalling: config.toolCalling
          })
        : methodSpec(config.method).build()
    const tasks = longestFirst(config.queries).map((q): [BenchQuery, Task] => {
      const task = taskOf(q, "all", (name, docs) => toolbenchLibrary(name, docs, env))
      return [q, toolCache ? { ...task, tools: toolCache.wrapLibrary(task.tools) } : task]
    })

    const runOne = ([query, task]: [BenchQuery, Task]) =>
      Effect.gen(function* () {
        const calls: Array<{ start: number; end: number }> = []
        const timed = LanguageModel.of({
          info: model.info,
          generate: (request) =>
            Effect.suspend(() => {
              const start = performance.now()
              return Effect.tap(model.generate(request), () =>
                Effect.sync(() => void calls.push({ start, end: performance.now() }))
              )
            })
        })
        const started = performance.now()
        const trajectory = yield* withCurrentTask(query)(method(task)).pipe(
          withModelTask(query.id),
          Effect.provideService(LanguageModel, timed),
          Effect.ensuring(Effect.sync(() => server?.taskDone(query.id)))
        )
        const wallMs = performance.now() - started
        config.inspect?.(trajectory)
        const gapsMs = calls.map((c, i) => c.start - (i === 0 ? started : calls[i - 1]!.end))
        const modelMs = calls.reduce((n, c) => n + (c.end - c.start), 0)
        const modelEvents = trajectory.events.filter((e) => isKind(e, "model_call") && e.data["ok"] === true)
        return {
          id: query.id,
          answered: trajectory.finishType === "give_answer" && trajectory.finalAnswer.trim().length > 0,
          wallMs,
          modelCalls: trajectory.totals.modelCalls,
          cachedCalls: modelEvents.filter((e) => e.data["cached"] === true).length,
          toolCalls: trajectory.totals.toolCalls,
          promptTokens: modelEvents.map((e) => Number(e.data["promptTokens"] ?? 0)),
          modelMs,
          gapsMs,
          frameworkMs: wallMs - modelMs
        } satisfies TaskSample
      })

    const memory = { baseline: process.memoryUsage().rss, peakRss: 0, peakHeap: 0 }
    const sample = () => {
      const m = process.memoryUsage()
      memory.peakRss = Math.max(memory.peakRss, m.rss)
      memory.peakHeap = Math.max(memory.peakHeap, m.heapUsed)
    }
    const timer = config.sampleMemory ? setInterval(sample, 20) : undefined
    const started = performance.now()
    const samples = yield* Effect.forEach(tasks, runOne, { concurrency: config.concurrency }).pipe(
      Effect.ensuring(Effect.sync(() => (timer !== undefined ? (sample(), clearInterval(timer)) : undefined)))
    )
    const wallMs = performance.now() - started
    const {
      queries: _queries,
      inspect: _inspect,
      profile: _profile,
      server: _server,
      rules: _rules,
      lanes: _lanes,
      ...rest
    } = config
    return {
      config: { ...rest, tasks: config.queries.length },
      wallMs,
      samples,
      sim: sim.stats,
      server,
      envCalls,
      memory: config.sampleMemory
        ? {
            baselineRssMb: memory.baseline / MB,
            peakRssMb: memory.peakRss / MB,
            peakHeapMb: memory.peakHeap / MB,
            maxRssMb: process.resourceUsage().maxRSS / 1024
          }
        : undefined
    } satisfies BatchResult
  })
