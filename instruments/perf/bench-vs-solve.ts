// The bench path's CPU per model call against `solve`'s, same tasks, same model, same method, in one process:
// `node instruments/perf/bench-vs-solve.ts [--methods react,smurfs] [--provider sim|memory|ollama] [--tasks 24] [--batches 6]
//   [--concurrency 1] [--progress tty|lines|silent] [--sides bench,solve] [--other <checkout>] [--data <dir>]
//   [--profile <file.cpuprofile>]` (`npm run bench:vs-solve -- ...`). `--profile`: a CPU profile of the measured batches.
// A batch runs `--tasks` ToolBench queries either through `runBenchSettings` (what `smurfs bench` runs: run directory,
// records, progress, server watch, ledger, converted files, run.json's misses; OTLP off as with no endpoint) or through
// `solve` (one call per query, the same tool library on the same replay,offline environment), batches of the sides
// alternating so that a busy machine weighs on each alike. `--other <checkout>` adds that tree's bench path (a paired
// A/B of two trees; give the other checkout a `node_modules` link to this one's). Prints figures; asserts nothing.
//   provider sim: the simulated model in this process at no latency (every role of every method); its CPU is in the
//                 figures of both paths alike (its own wall time per call is printed beside).
//   provider memory: ReAct's replies of the stand-in made in this process at once (ReAct only): the framework alone.
//   provider ollama: the peers' stand-in server in a child process through the Ollama client (ReAct only).
import { fork } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { loadavg, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Writable } from "node:stream"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as AppModule from "../../bench/app.ts"
import { GROUPS } from "../../bench/datasets.ts"
import type * as ProgressModule from "../../bench/progress.ts"
import { sampleDataDir } from "../../bench/sample-data.ts"
import type * as SettingsModule from "../../bench/settings.ts"
import { CurrentTask } from "../../bench/sim/current-task.ts"
import { readRecordings } from "../../bench/sim/knowledge.ts"
import { makeSimModel } from "../../bench/sim/model.ts"
import { parseSimSpec } from "../../bench/sim/options.ts"
import type * as LanguageModelModule from "../../src/llm/language-model.ts"
import type { LanguageModelShape } from "../../src/llm/language-model.ts"
import { ModelTask } from "../../src/llm/model-task.ts"
import type * as SpecModule from "../../src/llm/spec.ts"
import type * as SolveModule from "../../src/solve.ts"
import type * as ChainModule from "../../src/tools/environments/chain.ts"
import { standardizeName } from "../../src/tools/toolbench/names.ts"
import type * as OtlpModule from "../../src/trace/otlp.ts"
import { memoryReply } from "./stand-in-replies.ts"

const { values } = parseArgs({
  options: {
    methods: { type: "string", default: "react,smurfs" },
    provider: { type: "string", default: "sim" },
    tasks: { type: "string", default: "24" },
    batches: { type: "string", default: "6" },
    concurrency: { type: "string", default: "1" },
    progress: { type: "string", default: "tty" },
    sides: { type: "string", default: "bench,solve" },
    other: { type: "string" },
    profile: { type: "string" },
    data: { type: "string" }
  }
})
const ASKED = Math.max(2, Number(values.tasks) || 24)
const BATCHES = Math.max(1, Number(values.batches) || 6)
const CONCURRENCY = Math.max(1, Number(values.concurrency) || 1)
const PROVIDER = values.provider === "ollama" ? "ollama" : values.provider === "memory" ? "memory" : "sim"
const METHODS = values.methods!.split(",").map((m) => m.trim())
const SIDES = values.sides!.split(",").map((s) => s.trim())
const ROOT = fileURLToPath(new URL("../..", import.meta.url))
if (PROVIDER !== "sim" && METHODS.some((m) => m !== "react"))
  throw new Error(`--provider ${PROVIDER} runs ReAct only (it answers ReAct's tool calls): give --methods react`)

// ---- the tasks: the first TASKS queries of the data, in a scratch data directory of their own (with only their
// recorded responses), so that a run's fixed work (reading the query files and the responses) is that of TASKS tasks

const shared = join(ROOT, "..", "shared", "toolbench")
const source = resolve(values.data ?? (existsSync(join(shared, "responses.jsonl")) ? shared : sampleDataDir()))
const data = mkdtempSync(join(tmpdir(), "smurfs-bench-cpu-data-"))
const groups: Array<string> = []
{
  mkdirSync(join(data, "queries"))
  mkdirSync(join(data, "query_ids"))
  const tools = new Set<string>()
  let left = ASKED
  for (const group of GROUPS) {
    if (left <= 0) break
    let raw: Array<{ query_id: number | string; api_list: Array<{ tool_name: string }> }>
    let ids: Record<string, unknown>
    try {
      raw = JSON.parse(readFileSync(join(source, "queries", `${group}.json`), "utf8"))
      ids = JSON.parse(readFileSync(join(source, "query_ids", `${group}.json`), "utf8"))
    } catch {
      continue
    }
    const picked = raw.filter((q) => String(q.query_id) in ids).slice(0, left)
    if (picked.length === 0) continue
    left -= picked.length
    groups.push(group)
    for (const q of picked) for (const api of q.api_list) tools.add(standardizeName(api.tool_name))
    writeFileSync(join(data, "queries", `${group}.json`), JSON.stringify(picked))
    writeFileSync(
      join(data, "query_ids", `${group}.json`),
      JSON.stringify(Object.fromEntries(picked.map((q) => [String(q.query_id), 0])))
    )
  }
  const lines = readFileSync(join(source, "responses.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "" && tools.has(standardizeName((JSON.parse(line) as { tool: string }).tool)))
  writeFileSync(join(data, "responses.jsonl"), `${lines.join("\n")}\n`)
}
/** The tasks of a batch: as many as asked, or as the data holds (the shipped sample has 16). */
const TASKS = (() => {
  let n = 0
  for (const group of groups)
    n += Object.keys(JSON.parse(readFileSync(join(data, "query_ids", `${group}.json`), "utf8"))).length
  return n
})()

// ---- the model

let modelCalls = 0
/** The sim's own time in its replies (wall clock: at no latency a reply is made in one go), for the figures' note. */
let simMs = 0
let standIn: { url: string; kill: () => void } | undefined
const sim = (() => {
  if (PROVIDER !== "sim") return undefined
  const parsed = parseSimSpec(`sim:latency=0,data=${data}`)
  if ("error" in parsed) throw parsed.error
  return makeSimModel(parsed.options, readRecordings(data), "perf")
})()
/** Tool calls before the answer, as the stand-in server makes them (stand-in.ts, not imported: it serves on import). */
/** The in-process model (`perf`), told which query each request is for (from the task key both paths give it). */
const perfModel = (queryOf: (id: string) => unknown): LanguageModelShape =>
  sim
    ? {
        info: { ...sim.model.info, spec: "perf" },
        generate: (request) =>
          Effect.flatMap(Effect.service(ModelTask), (task) => {
            modelCalls++
            const before = sim.stats.simMs
            return sim.model.generate(request).pipe(
              Effect.provideService(CurrentTask, queryOf(task?.key.split(" ").at(-1) ?? "") as never),
              Effect.tap(() => Effect.sync(() => void (simMs += sim.stats.simMs - before)))
            )
          })
      }
    : {
        info: { spec: "perf", provider: "memory", model: "memory", contextTokens: 32768, supportsTools: true },
        generate: (request) => Effect.sync(() => (modelCalls++, memoryReply(request)))
      }

if (PROVIDER === "ollama") {
  const child = fork(fileURLToPath(new URL("./stand-in.ts", import.meta.url)), [], {
    stdio: ["ignore", "pipe", "inherit", "ipc"]
  })
  const url = await new Promise<string>((ok, fail) => {
    child.stdout!.once("data", (d: Buffer) => ok((JSON.parse(d.toString("utf8")) as { url: string }).url))
    child.once("exit", (code) => fail(new Error(`the stand-in server exited with ${code}`)))
  })
  standIn = { url, kill: () => child.kill() }
  // the bench reads the Ollama server's address from the environment, as a user sets it
  process.env["OLLAMA_HOST"] = url
}
const callsSoFar = async () =>
  standIn ? ((await (await fetch(`${standIn.url}/stats`)).json()) as { requests: number }).requests : modelCalls

// ---- a tree: its bench path and its solve

/** A progress display as `smurfs bench` draws it on a terminal (a bar), as lines, or none; nothing is shown. */
const progressOf = (progress: typeof ProgressModule) => {
  if (values.progress === "silent") return progress.silentProgress
  const sink = Object.assign(new Writable({ write: (_chunk, _enc, done) => done() }), {
    isTTY: values.progress !== "lines",
    columns: 120
  })
  return progress.makeProgress({ stream: sink as unknown as NodeJS.WriteStream, tty: values.progress !== "lines" })
}

const loadTree = async (root: string) => {
  const load = async <M>(path: string) => (await import(pathToFileURL(join(root, path)).href)) as M
  const app = await load<typeof AppModule>("bench/app.ts")
  const settings = await load<typeof SettingsModule>("bench/settings.ts")
  const progress = await load<typeof ProgressModule>("bench/progress.ts")
  const { solve } = await load<typeof SolveModule>("src/solve.ts")
  const { registerProvider } = await load<typeof SpecModule>("src/llm/spec.ts")
  const { LanguageModel } = await load<typeof LanguageModelModule>("src/llm/language-model.ts")
  const { makeEnvironmentChain } = await load<typeof ChainModule>("src/tools/environments/chain.ts")
  const { otlpLayer } = await load<typeof OtlpModule>("src/trace/otlp.ts")
  const queries = new Map<string, unknown>()
  if (PROVIDER !== "ollama")
    registerProvider({
      name: "perf",
      usage: "perf",
      bare: true,
      layer: () =>
        Layer.succeed(
          LanguageModel,
          perfModel((id) => queries.get(id))
        ),
      doctor: () => Effect.succeed({ checks: [] }),
      portable: () => true,
      testModel: true
    })
  const model = standIn ? "ollama:stand-in" : "perf"
  const env = await Effect.runPromise(
    makeEnvironmentChain(["replay", "offline"], { responses: join(data, "responses.jsonl") }).pipe(
      Effect.provideService(LanguageModel, {
        info: { spec: "none", provider: "none", model: "none", contextTokens: 0, supportsTools: false },
        generate: () => Effect.die("no model")
      })
    )
  )
  const listed = app.listedTask("all", env)
  const benchOf = (method: string) => async () => {
    const out = mkdtempSync(join(tmpdir(), "smurfs-bench-cpu-run-"))
    try {
      const run = settings.benchSettings({
        out,
        data,
        groups,
        methods: [method],
        model,
        envs: ["replay", "offline"],
        concurrency: CONCURRENCY,
        modelConcurrency: CONCURRENCY
      })
      const cpu = process.threadCpuUsage()
      const outcome = await Effect.runPromise(
        app.runBenchSettings(run, progressOf(progress)).pipe(Effect.provide(otlpLayer()))
      )
      const used = process.threadCpuUsage(cpu)
      if (outcome.kind !== "ran" || outcome.summary.recorded !== TASKS)
        throw new Error(
          `the bench run recorded ${outcome.kind === "ran" ? outcome.summary.recorded : 0} of ${TASKS} tasks`
        )
      return (used.user + used.system) / 1000
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }
  const { loadQueries } = await load<typeof import("../../bench/datasets.ts")>("bench/datasets.ts")
  const all = await Effect.runPromise(loadQueries({ dir: data, groups }))
  for (const q of all) queries.set(q.id, q)
  const solveOf = (method: string) => async () => {
    const cpu = process.threadCpuUsage()
    let next = 0
    const worker = async () => {
      while (next < all.length) {
        const query = all[next++]!
        await solve(query.query, {
          model,
          modelOptions: standIn ? { host: standIn.url, supportsTools: true, concurrency: CONCURRENCY } : {},
          tools: listed(query).tools,
          method: method as "react",
          id: query.id
        })
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    const used = process.threadCpuUsage(cpu)
    return (used.user + used.system) / 1000
  }
  return { benchOf, solveOf }
}

// ---- the batches

interface Side {
  readonly name: string
  /** Runs a batch; its main-thread CPU, ms (the scratch run directory's making and removal left out). */
  readonly run: () => Promise<number>
  readonly perCall: Array<number>
  readonly simPerCall: Array<number>
  calls: number
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!
const ours = await loadTree(ROOT)
const other = values.other === undefined ? undefined : await loadTree(resolve(values.other))
try {
  console.log(
    `node ${process.versions.node}; ${TASKS} tasks per batch (${groups.join(", ")} of ${source}), ${BATCHES} batches per side, concurrency ${CONCURRENCY}, provider ${PROVIDER}, progress ${values.progress}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`
  )
  for (const method of METHODS) {
    const sides: Array<Side> = [
      ...(SIDES.includes("bench") ? [{ name: "bench path", run: ours.benchOf(method) }] : []),
      ...(other ? [{ name: `bench path of ${values.other}`, run: other.benchOf(method) }] : []),
      ...(SIDES.includes("solve") ? [{ name: "solve", run: ours.solveOf(method) }] : [])
    ].map((s) => ({ ...s, perCall: [], simPerCall: [], calls: 0 }))
    for (const side of sides) await side.run() // warm-up: JIT, pools, the model's first build
    // --profile <file>: a CPU profile of the measured batches only (give one side with --sides)
    const profiler = values.profile === undefined ? undefined : new Session()
    if (profiler) {
      profiler.connect()
      await profiler.post("Profiler.enable")
      await profiler.post("Profiler.setSamplingInterval", { interval: 100 })
      await profiler.post("Profiler.start")
    }
    for (let b = 0; b < BATCHES; b++)
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(k + b) % sides.length]!
        const calls = await callsSoFar()
        const sims = simMs
        const cpuMs = await side.run()
        const made = (await callsSoFar()) - calls
        side.calls = made
        side.perCall.push(cpuMs / made)
        side.simPerCall.push((simMs - sims) / made)
      }
    if (profiler) {
      const { profile } = await profiler.post("Profiler.stop")
      const path =
        METHODS.length > 1 ? values.profile!.replace(/(\.cpuprofile)?$/, `-${method}.cpuprofile`) : values.profile!
      writeFileSync(path, JSON.stringify(profile))
      profiler.disconnect()
      console.log(`profile of the measured batches: ${path}`)
    }
    console.log(
      `\n${method}: main-thread CPU per model call${sim ? " (the simulated model's included, its own wall time per call beside)" : ""}, median of ${BATCHES} batches (range); load average now ${loadavg()[0]!.toFixed(1)}`
    )
    for (const side of sides)
      console.log(
        `  ${side.name.padEnd(40)} ${median(side.perCall).toFixed(3)} ms (${Math.min(...side.perCall).toFixed(3)}-${Math.max(...side.perCall).toFixed(3)})  ${(side.calls / TASKS).toFixed(1)} calls/task${sim ? `, sim ${median(side.simPerCall).toFixed(3)} ms/call` : ""}`
      )
    const solveSide = sides.find((s) => s.name === "solve")
    for (const side of sides.filter((s) => s !== solveSide && solveSide)) {
      const paired = side.perCall.map((x, b) => x / solveSide!.perCall[b]!)
      const more = side.perCall.map((x, b) => x - solveSide!.perCall[b]!)
      console.log(
        `  ${side.name} against solve: median of paired ratios ${median(paired).toFixed(2)}, of paired differences ${median(more).toFixed(3)} ms per call`
      )
    }
    if (other && sides.length >= 2 && sides[0]!.name === "bench path") {
      const paired = sides[0]!.perCall.map((x, b) => x / sides[1]!.perCall[b]!)
      const less = sides[0]!.perCall.map((x, b) => sides[1]!.perCall[b]! - x)
      console.log(
        `  this tree's bench path against the other's: median of paired ratios ${median(paired).toFixed(2)}, ${median(less).toFixed(3)} ms less per call`
      )
    }
  }
} finally {
  standIn?.kill()
  rmSync(data, { recursive: true, force: true })
}
process.exit(0)
