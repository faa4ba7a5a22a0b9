// `npm run bench:perf`: measures the framework with a simulated model (overhead, scaling, prompt sizes, prefix reuse,
// memory, warm caches), prints tables and writes them as JSON. It prints figures; it asserts nothing about timings.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import * as Effect from "effect/Effect"
import { boundHeapGrowth } from "../../bench/heap-growth.ts"
import { SIM_NOTE } from "../../bench/sim/model.ts"
import { parseSimSpec } from "../../bench/sim/options.ts"
import { prefixCacheDefaults } from "../../bench/sim/prefix-cache.ts"
import { makeTokenCounter, TOKENIZER } from "../../bench/sim/tokens.ts"
import { METHOD_NAMES } from "../../src/agents/methods.ts"
import type { ProfileName } from "../../src/agents/profile.ts"
import { EXECUTORS, type SmurfsExecutor } from "../../src/agents/smurfs-options.ts"
import { SMURFS_SRC_ENV } from "../../src/agents/smurfs-source.ts"
import { STB_ENV } from "../../src/text/stabletoolbench-files.ts"
import { isKind } from "../../src/trace/events.ts"
import { otlpLayer } from "../../src/trace/otlp.ts"
import type { Trajectory } from "../../src/trace/trajectory.ts"
import { version } from "../../src/version.ts"
import { parsePerfArgs, perfDataDir } from "./args.ts"
import { CACHE_MODELS, CONCURRENCIES, concurrencyTables, measureConcurrency, variantsOf } from "./concurrency.ts"
import { type BatchResult, loadSetup, type MethodName, type PerfSetup, runBatch, type TaskSample } from "./harness.ts"
import { measureHttpOverhead } from "./http-overhead.ts"
import { byStepBucket, contextFigures, makePrefixReuse, makeSubtaskReuse } from "./measures.ts"
import { listSchedule, max, sum, summary } from "./stats.ts"
import { table } from "./table.ts"

/** Sizes of each experiment; `--quick` shrinks them for a smoke run. */
const SIZES = {
  full: {
    overheadTasks: Infinity,
    scalingTasks: 200,
    scalingLatency: "100ms",
    concurrency: [1, 4, 16, 64],
    contextTasks: Infinity,
    prefixTasks: 200,
    memoryTasks: Infinity,
    memoryConcurrency: 256,
    memoryLatency: "100ms",
    warmTasks: 200,
    warmLatency: "100ms",
    warmConcurrency: 64,
    planTasks: 20,
    gpuTasks: 200,
    concurrencyTasks: 128
  },
  quick: {
    overheadTasks: 100,
    scalingTasks: 40,
    scalingLatency: "20ms",
    concurrency: [1, 4, 16, 64],
    contextTasks: 60,
    prefixTasks: 60,
    memoryTasks: 256,
    memoryConcurrency: 256,
    memoryLatency: "20ms",
    warmTasks: 40,
    warmLatency: "20ms",
    warmConcurrency: 16,
    planTasks: 5,
    gpuTasks: 60,
    concurrencyTasks: 64
  }
} as const

const FAULT_RATES = [0, 0.1, 0.3] as const
const CONTEXT_METHODS: ReadonlyArray<MethodName> = METHOD_NAMES
const SEED = 7

export const HEADER = `NOTE: every figure below comes from the smurfs framework driven by a ${SIM_NOTE}; none says anything about a real model's speed or quality.`

/** The sections, in the order they run; `--only` picks some. */
const SECTIONS = [
  "memory",
  "overhead",
  "scaling",
  "context",
  "prefix",
  "concurrency",
  "cache",
  "plans",
  "http"
] as const
type Section = (typeof SECTIONS)[number]

const usage = `usage: node instruments/perf/main.ts [--quick] [--only <sections>] [--out runs/perf.json] [--data <toolbench dir>]
  --quick   smaller sizes for a smoke run (about a minute)
  --only    a comma list of sections to run: ${SECTIONS.join(", ")} (default: all)
  --out     where to write the figures as JSON (default runs/perf.json)
  --data    the ToolBench data directory (default <repo>/../shared/toolbench)
  --stb     StableToolBench's checkout, for react/dfsdt under --profile reference in the prefix section
            (default $SMURFS_STB, else <data>/stabletoolbench when it exists)
  --smurfs-src  the Smurfs authors' checkout, for smurfs under --profile reference (default $SMURFS_SRC; without it, skipped)
  --slots   the modelled server's prefix-cache slots in the prefix section (default ${prefixCacheDefaults.slots})`

const log = (text: string) => process.stderr.write(`${text}\n`)

const take = <A>(items: ReadonlyArray<A>, n: number): ReadonlyArray<A> =>
  Number.isFinite(n) ? items.slice(0, n) : items

/** The model time a task needs on its own: each call's simulated latency, in order (calls within a task are sequential). */
const nominalModelMs = (sample: TaskSample, spec: string): number => {
  const parsed = parseSimSpec(spec)
  if ("error" in parsed) return 0
  return sample.modelCalls * parsed.options.latencyMs + sum(sample.promptTokens) * parsed.options.promptTokenMs
}

const round = (n: number, digits = 2) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : null)

/** Where the prefix section finds the references' checkouts, and the modelled server's slots. */
interface PrefixConfig {
  readonly stb: string | undefined
  readonly smurfsSrc: string | undefined
  readonly slots: number
}

const run = (setup: PerfSetup, quick: boolean, only: (section: Section) => boolean, prefixConfig: PrefixConfig) =>
  Effect.gen(function* () {
    const sizes = quick ? SIZES.quick : SIZES.full
    const queries = setup.queries
    const sections: Array<string> = []
    const json: Record<string, unknown> = {}

    // 0. Memory at high concurrency, first, so that the baseline is the loaded data set and nothing else.
    if (only("memory")) {
      const memoryQueries = take(queries, sizes.memoryTasks)
      log(
        `memory: smurfs on ${memoryQueries.length} tasks, ${sizes.memoryLatency} per call, concurrency ${sizes.memoryConcurrency}`
      )
      const memory = yield* runBatch(setup, {
        method: "smurfs",
        sim: `sim:latency=${sizes.memoryLatency}`,
        queries: memoryQueries,
        concurrency: sizes.memoryConcurrency,
        sampleMemory: true
      })
      json["memory"] = {
        tasks: memoryQueries.length,
        concurrency: sizes.memoryConcurrency,
        wallS: round(memory.wallMs / 1000),
        ...memory.memory
      }
      sections.push(
        table(
          `Memory: smurfs, ${memoryQueries.length} tasks, concurrency ${sizes.memoryConcurrency}, ${sizes.memoryLatency} per call (RSS sampled every 20 ms)`,
          ["RSS before MB", "peak RSS MB", "peak heap MB", "process max RSS MB", "wall s"],
          [
            [
              round(memory.memory!.baselineRssMb, 0),
              round(memory.memory!.peakRssMb, 0),
              round(memory.memory!.peakHeapMb, 0),
              round(memory.memory!.maxRssMb, 0),
              round(memory.wallMs / 1000, 1)
            ]
          ],
          1
        )
      )
    }

    // 1. Framework overhead: zero-latency model, one task at a time.
    if (only("overhead")) {
      log(`overhead: smurfs on ${Math.min(queries.length, sizes.overheadTasks)} tasks, zero latency, concurrency 1`)
      const overhead = yield* runBatch(setup, {
        method: "smurfs",
        sim: "sim",
        queries: take(queries, sizes.overheadTasks),
        concurrency: 1
      })
      const gaps = overhead.samples.flatMap((s) => s.gapsMs)
      const calls = sum(overhead.samples.map((s) => s.modelCalls))
      const simPerCall = overhead.sim.simMs / Math.max(1, overhead.sim.calls)
      json["overhead"] = {
        tasks: overhead.samples.length,
        modelCalls: calls,
        wallMs: round(overhead.wallMs),
        frameworkMsPerCall: summary(gaps),
        frameworkMsPerTask: summary(overhead.samples.map((s) => s.frameworkMs)),
        wallMsPerTask: summary(overhead.samples.map((s) => s.wallMs)),
        simulatorMsPerCall: round(simPerCall, 3)
      }
      sections.push(
        table(
          `Framework overhead: smurfs, ${overhead.samples.length} tasks, zero-latency simulated model, concurrency 1 (${calls} model calls, ${(overhead.wallMs / 1000).toFixed(1)} s)`,
          ["measure", "median ms", "p95 ms", "mean ms", "max ms"],
          [
            ["framework time per model call (work between calls)", ...vals(summary(gaps))],
            [
              "framework time per task (wall minus model time)",
              ...vals(summary(overhead.samples.map((s) => s.frameworkMs)))
            ],
            ["wall time per task (incl. simulator work)", ...vals(summary(overhead.samples.map((s) => s.wallMs)))],
            ["simulator's own work per call (decide + tokenize)", round(simPerCall, 3), null, null, null]
          ],
          3
        )
      )
    }

    // 2. Concurrency scaling: fixed latency per call. Concurrency 1 runs first: each task's wall time there is its
    // critical path (its model calls are sequential), so ideal(c) = max(sum of critical paths / c, longest task).
    if (only("scaling")) {
      const scalingSpec = `sim:latency=${sizes.scalingLatency}`
      const scalingQueries = take(queries, sizes.scalingTasks)
      const scaling: Array<Record<string, unknown>> = []
      let critical: ReadonlyArray<number> = []
      for (const concurrency of [...sizes.concurrency].sort((a, b) => a - b)) {
        log(
          `scaling: smurfs on ${scalingQueries.length} tasks, ${sizes.scalingLatency} per call, concurrency ${concurrency}`
        )
        const batch = yield* runBatch(setup, {
          method: "smurfs",
          sim: scalingSpec,
          queries: scalingQueries,
          concurrency
        })
        if (critical.length === 0) critical = batch.samples.map((s) => s.wallMs)
        const ideal = Math.max(sum(critical) / concurrency, max(critical))
        const scheduled = listSchedule(critical, concurrency)
        const latencyOnly = batch.samples.map((s) => nominalModelMs(s, scalingSpec))
        const idealLatency = Math.max(sum(latencyOnly) / concurrency, max(latencyOnly))
        scaling.push({
          concurrency,
          tasks: batch.samples.length,
          modelCalls: sum(batch.samples.map((s) => s.modelCalls)),
          wallS: round(batch.wallMs / 1000, 2),
          idealS: round(ideal / 1000, 2),
          efficiency: round(ideal / batch.wallMs, 3),
          scheduledS: round(scheduled / 1000, 2),
          scheduledEfficiency: round(scheduled / batch.wallMs, 3),
          latencyOnlyIdealS: round(idealLatency / 1000, 2),
          latencyOnlyEfficiency: round(idealLatency / batch.wallMs, 3)
        })
      }
      json["scaling"] = {
        spec: scalingSpec,
        rows: scaling,
        note: "critical path of a task = its wall time at concurrency 1; in-order ideal = the tasks' critical paths list-scheduled in run order on `concurrency` slots (the tail a zero-overhead runner would still have); latency-only = model calls x latency, no framework or timer time"
      }
      sections.push(
        table(
          `Concurrency scaling: smurfs, ${scalingQueries.length} tasks, ${sizes.scalingLatency} per model call; ideal = max(sum of per-task critical paths (wall at concurrency 1) / concurrency, longest task)`,
          [
            "concurrency",
            "model calls",
            "wall s",
            "ideal s",
            "efficiency",
            "in-order ideal s",
            "in-order efficiency",
            "latency-only ideal s",
            "latency-only efficiency"
          ],
          scaling.map(
            (r) =>
              [
                r["concurrency"],
                r["modelCalls"],
                r["wallS"],
                r["idealS"],
                r["efficiency"],
                r["scheduledS"],
                r["scheduledEfficiency"],
                r["latencyOnlyIdealS"],
                r["latencyOnlyEfficiency"]
              ] as Array<number>
          ),
          3
        )
      )
    }

    // 3. Context: prompt sizes per method and fault rate; prefix reuse on the fault-free runs.
    if (only("context")) {
      const contextQueries = take(queries, sizes.contextTasks)
      const tokens = makeTokenCounter()
      const prefix = makePrefixReuse(tokens)
      const context: Array<Record<string, unknown>> = []
      const batches = new Map<string, BatchResult>()
      for (const method of CONTEXT_METHODS)
        for (const fault of FAULT_RATES) {
          const spec = `sim:fault=${fault},seed=${SEED}`
          log(`context: ${method} on ${contextQueries.length} tasks, fault rate ${fault}`)
          let inspected = 0
          const batch = yield* runBatch(setup, {
            method,
            sim: spec,
            queries: contextQueries,
            concurrency: 16,
            inspect: fault === 0 ? (t) => void (inspected++ < sizes.prefixTasks && prefix.add(t, method)) : undefined
          })
          batches.set(`${method}/${fault}`, batch)
          context.push({ method, fault, ...contextFigures(batch) })
        }
      json["context"] = context
      sections.push(
        table(
          `Context: prompt tokens (${TOKENIZER}) on the same ${contextQueries.length} tasks, simulated faults seeded (${SEED})`,
          ["method", "fault", "answered", "calls/task", "mean prompt", "max prompt", "prompt tok/task", "p95 tok/task"],
          context.map((r) => [
            String(r["method"]),
            `${Math.round(Number(r["fault"]) * 100)}%`,
            `${(Number(r["answered"]) * 100).toFixed(1)}%`,
            Number(r["callsPerTask"]),
            Math.round(Number(r["meanPromptTokens"])),
            Number(r["maxPromptTokens"]),
            Math.round(Number(r["promptTokensPerTask"])),
            Math.round(Number(r["p95PromptTokensPerTask"]))
          ]),
          1
        )
      )
      const buckets = (method: MethodName) => byStepBucket(FAULT_RATES.map((f) => batches.get(`${method}/${f}`)!))
      const smurfsBuckets = buckets("smurfs")
      const reactBuckets = buckets("react")
      json["stepsBuckets"] = {
        smurfs: smurfsBuckets,
        react: reactBuckets,
        note: "steps = tool calls per task; all three fault rates pooled"
      }
      sections.push(
        table(
          "Largest prompt per task by steps (tool calls), all fault rates pooled: mean of each task's max prompt tokens",
          ["steps", "smurfs tasks", "smurfs max prompt", "react tasks", "react max prompt"],
          smurfsBuckets.map((b, i) => [
            b.steps,
            b.tasks,
            round(b.meanMaxPromptTokens, 0),
            reactBuckets[i]!.tasks,
            round(reactBuckets[i]!.meanMaxPromptTokens, 0)
          ]),
          0
        )
      )
      const reuse = prefix.figures()
      json["prefixReuse"] = reuse
      sections.push(
        table(
          `Prefix reuse: share of a prompt's tokens equal to the start of the previous prompt of the same role (same task and subtask; last column: any earlier prompt of the role in the task), fault-free runs, first ${Math.min(sizes.prefixTasks, contextQueries.length)} tasks`,
          [
            "method",
            "role",
            "prompts",
            "compared",
            "reused",
            "median",
            "reused vs previous in task",
            "where consecutive prompts first differ"
          ],
          reuse.map((r) => [
            r.method,
            r.role,
            r.prompts,
            r.compared,
            pct(r.reuseShare),
            pct(r.medianShare),
            pct(r.taskReuseShare),
            r.firstChange
          ])
        )
      )
    }

    // 3b. GPU work per task: a server with a prefix cache (bench/sim/prefix-cache.ts), one task at a time so that
    // the requests reach it in a fixed order; each method under each profile whose checkout is at hand.
    if (only("prefix")) {
      const gpuQueries = take(queries, sizes.gpuTasks)
      const { slots } = prefixConfig
      const { prefillMsPerToken, decodeMsPerToken, similarity } = prefixCacheDefaults
      const spec = `sim:cache=${slots},prefill=${prefillMsPerToken}ms,decode=${decodeMsPerToken}ms,similarity=${similarity}`
      const reuse = makeSubtaskReuse(makeTokenCounter())
      const rows: Array<Record<string, unknown>> = []
      const skipped: Array<string> = []
      // smurfs runs with each executor under improved (the reference runs the authors' three requests only); the
      // fused one (JSON replies by default) also with native tool calls (`--tool-calling native`, the sim calling tools)
      type Variant = { readonly executor?: SmurfsExecutor; readonly native?: boolean }
      const variants = (profile: ProfileName, method: MethodName): ReadonlyArray<Variant> =>
        method === "smurfs" && profile === "improved"
          ? [...EXECUTORS.map((executor) => ({ executor })), { executor: "fused", native: true }]
          : [{}]
      for (const profile of ["improved", "reference"] as const satisfies ReadonlyArray<ProfileName>)
        for (const method of CONTEXT_METHODS)
          for (const { executor, native } of variants(profile, method)) {
            if (profile === "reference" && method === "smurfs" && prefixConfig.smurfsSrc === undefined) {
              skipped.push(
                "smurfs/reference (no --smurfs-src or $SMURFS_SRC: the authors' texts are read from their checkout)"
              )
              continue
            }
            if (profile === "reference" && method !== "smurfs" && prefixConfig.stb === undefined) {
              skipped.push(`${method}/reference (no --stb or $SMURFS_STB)`)
              continue
            }
            const named = executor === "fused" ? `fused (${native ? "native" : "json"})` : undefined
            const label = `${method}/${profile}${named ? `/${named}` : ""}`
            log(
              `prefix: ${label} on ${gpuQueries.length} tasks, ${spec}${native ? ", --tool-calling native" : ""}, concurrency 1`
            )
            const batch = yield* runBatch(setup, {
              method,
              sim: spec,
              queries: gpuQueries,
              concurrency: 1,
              profile: { name: profile, stb: prefixConfig.stb, smurfsSrc: prefixConfig.smurfsSrc },
              executor,
              toolCalling: native ? "native" : undefined,
              inspect: (t) => reuse.add(t, label)
            })
            const cache = batch.sim.prefixCache!
            const n = Math.max(1, batch.samples.length)
            rows.push({
              method,
              profile,
              executor: method === "smurfs" ? (named ?? "three-call") : null,
              tasks: batch.samples.length,
              answered: batch.samples.filter((s) => s.answered).length / n,
              callsPerTask: cache.requests / n,
              promptTokensPerTask: cache.promptTokens / n,
              uncachedPromptTokensPerTask: cache.uncachedTokens / n,
              outputTokensPerTask: cache.outputTokens / n,
              gpuSecondsPerTask: cache.gpuMs / 1000 / n,
              prefillSecondsPerTask: (cache.uncachedTokens * prefillMsPerToken) / 1000 / n,
              byRole: Object.fromEntries(
                [...batch.sim.prefixCacheByRole].map(([role, r]) => [
                  role,
                  {
                    callsPerTask: round(r.requests / n, 2),
                    uncachedTokensPerTask: round(r.uncachedTokens / n, 1),
                    gpuSecondsPerTask: round(r.gpuMs / 1000 / n, 3)
                  }
                ])
              )
            })
          }
      const react = rows.find((r) => r["method"] === "react" && r["profile"] === "improved")
      const roles = reuse.figures().filter((r) => r.label.startsWith("smurfs/") || r.label.startsWith("react/"))
      json["prefixCache"] = {
        spec,
        slots,
        prefillMsPerToken,
        decodeMsPerToken,
        similarity,
        tasks: gpuQueries.length,
        concurrency: 1,
        rows,
        skipped,
        reuseWithPreviousInSubtask: roles,
        note: "uncached = prompt tokens the modelled server computes (the rest its slots hold); GPU s = uncached x prefill + reply tokens x decode; reuse = tokens shared with the previous request of the same subtask, any role"
      }
      sections.push(
        table(
          `GPU work per task: a modelled server with ${slots} prefix-cache slots (longest common prefix when it holds ${similarity * 100}% of the prompt, else the least recently used), ${prefillMsPerToken} ms per computed prompt token, ${decodeMsPerToken} ms per reply token; ${gpuQueries.length} tasks one at a time, task-aware sim${skipped.length > 0 ? `; skipped: ${skipped.join("; ")}` : ""}${prefixConfig.smurfsSrc !== undefined ? "; smurfs/reference: the sim does not write the authors' free-text replies, so its figures count their retries" : ""}`,
          [
            "method",
            "profile",
            "executor",
            "answered",
            "calls/task",
            "prompt tok/task",
            "uncached tok/task",
            "uncached vs react",
            "reply tok/task",
            "prefill GPU s/task",
            "GPU s/task"
          ],
          rows.map((r) => [
            String(r["method"]),
            String(r["profile"]),
            r["executor"] === null ? "" : String(r["executor"]),
            pct(Number(r["answered"])),
            round(Number(r["callsPerTask"]), 1),
            Math.round(Number(r["promptTokensPerTask"])),
            Math.round(Number(r["uncachedPromptTokensPerTask"])),
            react
              ? round(Number(r["uncachedPromptTokensPerTask"]) / Number(react["uncachedPromptTokensPerTask"]), 2)
              : null,
            Math.round(Number(r["outputTokensPerTask"])),
            round(Number(r["prefillSecondsPerTask"]), 2),
            round(Number(r["gpuSecondsPerTask"]), 2)
          ]),
          1
        )
      )
      sections.push(
        table(
          "GPU work per task by the calling agent's role: where the prompt tokens the modelled server computes go",
          ["method", "profile", "role", "calls/task", "uncached tok/task", "GPU s/task"],
          rows.flatMap((r) =>
            Object.entries(
              r["byRole"] as Record<
                string,
                { callsPerTask: number; uncachedTokensPerTask: number; gpuSecondsPerTask: number }
              >
            ).map(([role, x]) => [
              String(r["method"]),
              String(r["profile"]),
              role,
              x.callsPerTask,
              Math.round(x.uncachedTokensPerTask),
              round(x.gpuSecondsPerTask, 2)
            ])
          )
        )
      )
      sections.push(
        table(
          "Reuse with the previous request of the same subtask (any role; ReAct: of the task), token-weighted: the share a prefix cache with one slot per subtask reuses",
          ["method/profile", "role", "prompts", "compared", "reused"],
          roles
            .sort((a, b) => a.label.localeCompare(b.label) || a.role.localeCompare(b.role))
            .map((r) => [r.label, r.role, r.prompts, r.compared, pct(r.reuseShare)])
        )
      )
    }

    // 3c. The same on a busy server (issue 33): tasks side by side on a modelled server in virtual time, for every cache
    // model and concurrency, with the client's levers.
    if (only("concurrency")) {
      const tasks = take(queries, sizes.concurrencyTasks)
      const rows = yield* measureConcurrency(setup, tasks, log, variantsOf(!quick))
      json["concurrency"] = {
        tasks: tasks.length,
        caches: CACHE_MODELS,
        concurrencies: CONCURRENCIES,
        rows,
        note: "virtual time: a request holds its slot (or its KV blocks) until its reply is written; the clock moves when every task in flight waits on the server. client: plain, affinity (id_slot per task), lanes (model lanes, src/llm/model-lanes.ts: at most one task per slot sends requests), lanes + affinity (lane i on slot i)"
      }
      sections.push(...concurrencyTables(rows, tasks.length))
    }

    // 4. Warm caches: the same run twice over one cache directory (fresh cache objects, as after a restart).
    if (only("cache")) {
      const cacheDir = mkdtempSync(join(tmpdir(), "smurfs-perf-cache-"))
      const warmQueries = take(queries, sizes.warmTasks)
      const warmSpec = `sim:latency=${sizes.warmLatency}`
      const runs: Array<Record<string, unknown>> = []
      try {
        for (const label of ["cold", "warm"]) {
          log(`cache: smurfs on ${warmQueries.length} tasks, ${label} caches in ${cacheDir}`)
          const batch = yield* runBatch(setup, {
            method: "smurfs",
            sim: warmSpec,
            queries: warmQueries,
            concurrency: sizes.warmConcurrency,
            cacheDir
          })
          runs.push({
            run: label,
            modelCallsReachingModel: batch.sim.calls,
            modelCallsInTrace: sum(batch.samples.map((s) => s.modelCalls)),
            cachedReplies: sum(batch.samples.map((s) => s.cachedCalls)),
            toolCallsReachingEnvironment: batch.envCalls,
            answered: batch.samples.filter((s) => s.answered).length,
            wallS: round(batch.wallMs / 1000, 2)
          })
        }
      } finally {
        rmSync(cacheDir, { recursive: true, force: true })
      }
      json["warmCache"] = { spec: warmSpec, tasks: warmQueries.length, concurrency: sizes.warmConcurrency, runs }
      sections.push(
        table(
          `Warm cache: smurfs, ${warmQueries.length} tasks, ${sizes.warmLatency} per call, concurrency ${sizes.warmConcurrency}, model + tool caches persisted between the runs`,
          ["run", "model calls made", "cached replies", "tool calls made", "answered", "wall s"],
          runs.map((r) => [
            String(r["run"]),
            Number(r["modelCallsReachingModel"]),
            Number(r["cachedReplies"]),
            Number(r["toolCallsReachingEnvironment"]),
            Number(r["answered"]),
            Number(r["wallS"])
          ])
        )
      )
    }

    // 5. Plans with dependencies: tasks of three APIs, planned as three sequential subtasks, then as three
    // independent ones (dependsOn: []) that run at the same time; 100 ms per call, one task at a time.
    // The planner's and the final answer's calls stay sequential, and a subtask that backtracks takes longer
    // than its siblings, so each task's best possible ratio is its critical path on the model (calls outside
    // the subtasks plus the longest subtask's calls) over all its calls: printed beside the measured ratio.
    if (only("plans")) {
      const threeApi = take(
        queries.filter((q) => q.relevant.length === 3),
        sizes.planTasks
      )
      const planCalls = { sequential: new Map<string, SubtaskCalls>(), graph: new Map<string, SubtaskCalls>() }
      const walls = { sequential: new Map<string, number>(), graph: new Map<string, number>() }
      const phases = { sequential: new Map<string, number>(), graph: new Map<string, number>() }
      for (const mode of ["sequential", "graph"] as const) {
        const spec = `sim:latency=100ms,plan=${mode}`
        log(`plans: smurfs on ${threeApi.length} three-API tasks, ${mode} plan, 100ms per call`)
        const batch = yield* runBatch(setup, {
          method: "smurfs",
          sim: spec,
          queries: threeApi,
          concurrency: 1,
          inspect: (t) => {
            planCalls[mode].set(t.taskId, subtaskCalls(t))
            phases[mode].set(t.taskId, subtaskPhaseMs(t))
          }
        })
        for (const s of batch.samples) walls[mode].set(s.id, s.wallMs)
      }
      // Equal subtasks: the tasks whose three subtasks made the same number of calls (no backtracking in any).
      const ids = [...walls.sequential.keys()].filter((id) => walls.graph.has(id))
      const equal = ids.filter((id) => new Set(planCalls.sequential.get(id)?.perSubtask).size === 1)
      const planRows = [
        { subset: "all tasks", ids },
        { subset: "three equal subtasks", ids: equal }
      ].map(({ subset, ids }) => {
        const total = (m: Map<string, number>) => sum(ids.map((id) => m.get(id) ?? 0))
        const seqCalls = ids.map((id) => planCalls.sequential.get(id)).filter((c) => c !== undefined)
        const allCalls = sum(seqCalls.map((c) => c.outside + sum(c.perSubtask)))
        const criticalCalls = sum(seqCalls.map((c) => c.outside + Math.max(0, ...c.perSubtask)))
        return {
          subset,
          tasks: ids.length,
          modelCallsPerTask: round(allCalls / Math.max(1, ids.length), 1),
          sequentialWallMsPerTask: round(total(walls.sequential) / Math.max(1, ids.length), 0),
          graphWallMsPerTask: round(total(walls.graph) / Math.max(1, ids.length), 0),
          wallRatio: round(total(walls.graph) / total(walls.sequential), 3),
          subtaskPhaseRatio: round(total(phases.graph) / total(phases.sequential), 3),
          criticalPathRatio: round(criticalCalls / Math.max(1, allCalls), 3)
        }
      })
      json["planGraph"] = { spec: "sim:latency=100ms,plan=<sequential|graph>", concurrency: 1, rows: planRows }
      sections.push(
        table(
          `Plans with dependencies: smurfs, ${threeApi.length} tasks of three APIs, 100 ms per model call, one task at a time; the same three subtasks run one after another (sequential) or at the same time (graph). Best possible = calls on the critical path (planner, final answer, longest subtask) / all calls`,
          [
            "tasks",
            "n",
            "model calls / task",
            "sequential wall ms / task",
            "graph wall ms / task",
            "graph vs sequential",
            "subtask phase vs sequential",
            "best possible"
          ],
          planRows.map(
            (r) =>
              [
                r.subset,
                r.tasks,
                r.modelCallsPerTask,
                r.sequentialWallMsPerTask,
                r.graphWallMsPerTask,
                r.wallRatio,
                r.subtaskPhaseRatio,
                r.criticalPathRatio
              ] as Array<number | string>
          ),
          3
        )
      )
    }
    return { sections, json }
  })

/** A task's model calls outside any subtask (planner, final answer) and in each subtask, in plan order. */
interface SubtaskCalls {
  readonly outside: number
  readonly perSubtask: ReadonlyArray<number>
}

const subtaskCalls = (t: Trajectory): SubtaskCalls => {
  let outside = 0
  const per = new Map<number, number>()
  for (const e of t.events) {
    if (!isKind(e, "model_call")) continue
    const subtask = (e as { readonly subtask?: unknown }).subtask
    if (typeof subtask === "number") per.set(subtask, (per.get(subtask) ?? 0) + 1)
    else outside++
  }
  return { outside, perSubtask: [...per.entries()].sort(([a], [b]) => a - b).map(([, n]) => n) }
}

/** From the plan to the last subtask's answer: the part of a task that a graph plan runs in parallel. */
const subtaskPhaseMs = (t: Trajectory): number => {
  const plan = t.events.find((e) => isKind(e, "plan"))
  const last = t.events.findLast((e) => isKind(e, "subtask_answered"))
  return plan && last ? Date.parse(last.time) - Date.parse(plan.time) : 0
}

const pct = (share: number) => (Number.isFinite(share) ? `${(share * 100).toFixed(1)}%` : "-")

const vals = (s: ReturnType<typeof summary>) => [s.median, s.p95, s.mean, s.max]

const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  const args = parsePerfArgs(
    argv,
    {
      quick: { type: "boolean" },
      only: { type: "string" },
      out: { type: "string" },
      data: { type: "string" },
      stb: { type: "string" },
      "smurfs-src": { type: "string" },
      slots: { type: "string" }
    },
    usage
  )
  if (typeof args === "number") return args
  const data = perfDataDir(args.data)
  const out = resolve(args.out ?? "runs/perf.json")
  const quick = args.quick === true
  const picked = (args.only ?? SECTIONS.join(","))
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "")
  const unknown = picked.filter((x) => !(SECTIONS as ReadonlyArray<string>).includes(x))
  if (unknown.length > 0) {
    console.error(`--only: unknown section ${unknown.join(", ")}; the sections are ${SECTIONS.join(", ")}\n${usage}`)
    return 2
  }
  const only = (section: Section) => picked.includes(section)
  const slots = args.slots === undefined ? prefixCacheDefaults.slots : Number(args.slots)
  if (!Number.isInteger(slots) || slots < 1) {
    console.error(`--slots: "${args.slots}" is not a number of slots (1 or more)\n${usage}`)
    return 2
  }
  const standIn = join(data, "stabletoolbench")
  const stb = args.stb ?? process.env[STB_ENV] ?? (existsSync(standIn) ? standIn : undefined)
  const smurfsSrc = args["smurfs-src"] ?? process.env[SMURFS_SRC_ENV]
  const started = Date.now()
  console.log(HEADER)
  const program = Effect.gen(function* () {
    const setup = yield* loadSetup(data)
    return yield* run(setup, quick, only, {
      stb: stb && resolve(stb),
      smurfsSrc: smurfsSrc && resolve(smurfsSrc),
      slots
    })
  })
  // as `smurfs bench` runs: spans recorded only for an OTLP endpoint, V8's heap growth bounded
  boundHeapGrowth()
  const result = await Effect.runPromise(Effect.result(program.pipe(Effect.provide(otlpLayer()))))
  if (result._tag === "Failure") {
    console.error(`bench:perf: ${(result.failure as { message?: string }).message ?? String(result.failure)}`)
    return 3
  }
  if (only("http")) {
    // through HTTP: a loopback server at 50 ms a reply, 16 requests in flight, bare loops against the bench
    const http = await measureHttpOverhead({
      data,
      inFlight: 16,
      latencyMs: 50,
      perGroup: quick ? 30 : 100,
      loopSeconds: quick ? 3 : 8,
      rounds: quick ? 1 : 3
    })
    result.success.json["httpOverhead"] = { inFlight: 16, latencyMs: 50, method: "react", ...http }
    result.success.sections.push(
      table(
        `Overhead through HTTP: a loopback Ollama at 50 ms a reply, 16 requests in flight; 16 bare request loops, then smurfs bench (ReAct, 16 tasks at once); rates over the middle 80% of each client's requests (whole run in brackets); ${http.roundRatios.length === 1 ? "one round" : `the median of ${http.roundRatios.length} rounds`} (${http.roundRatios.map((r) => round(r, 3)).join(", ")})`,
        ["client", "requests", "requests/s", "share of bare"],
        [
          [
            "bare loops",
            null,
            `${round(http.bareRequestsPerSecond, 1)} (${round(http.wholeRun.bareRequestsPerSecond, 1)})`,
            1
          ],
          [
            "smurfs bench",
            http.benchRequests,
            `${round(http.benchRequestsPerSecond, 1)} (${round(http.wholeRun.benchRequestsPerSecond, 1)})`,
            `${round(http.ratio, 3)} (${round(http.wholeRun.ratio, 3)})`
          ]
        ],
        3
      )
    )
  }
  console.log(
    `node ${process.versions.node}, smurfs ${version}, ${quick ? "--quick sizes" : "full sizes"}, ${((Date.now() - started) / 1000).toFixed(0)} s in all\n`
  )
  console.log(result.success.sections.join("\n\n"))
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(
    out,
    `${JSON.stringify({ note: HEADER, tokenizer: TOKENIZER, node: process.versions.node, version, quick, createdAt: new Date().toISOString(), ...result.success.json }, null, 2)}\n`
  )
  console.log(`\nwrote ${out}`)
  return 0
}

process.exitCode = await main(process.argv.slice(2))
