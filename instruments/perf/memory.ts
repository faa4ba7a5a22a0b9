// `npm run bench:memory`: peak resident memory of whole bench runs (smurfs, react and dfsdt on StableToolBench's test
// queries, the simulated model) through the path `smurfs bench` takes, each configuration in a fresh child process so
// that one run's garbage never counts against another. It prints figures; it asserts nothing.
import { spawn } from "node:child_process"
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { getHeapStatistics, writeHeapSnapshot } from "node:v8"
import * as Effect from "effect/Effect"
import { runBenchSettings } from "../../bench/app.ts"
import { GROUPS } from "../../bench/datasets.ts"
import { boundHeapGrowth, HEAP_GROWING_PERCENT } from "../../bench/heap-growth.ts"
import { makeProgress } from "../../bench/progress.ts"
import { benchSettings } from "../../bench/settings.ts"
import { SIM_NOTE } from "../../bench/sim/model.ts"
import { METHOD_NAMES } from "../../src/agents/methods.ts"
import { version } from "../../src/version.ts"
import { parsePerfArgs, perfDataDir } from "./args.ts"
import { table } from "./table.ts"

const SELF = fileURLToPath(import.meta.url)
const MB = 1024 * 1024

const usage = `usage: node instruments/perf/memory.ts [--runs <queries per group>x<concurrency>,...] [--latency 100ms] [--data <dir>] [--out runs/memory.json]
  --runs     the runs, each "<queries per group>x<concurrency>" (all = every query; 43 per group = 774 tasks)
             (default all x64, 43x64, all x256)
  --latency  the simulated model's latency per call (default 100ms)
  --data     the ToolBench data directory (default <repo>/../shared/toolbench)
  --out      where to write the figures as JSON (default runs/memory.json)
  --v8-defaults  leave V8's heap growth as node sets it (by default each run bounds it as \`smurfs bench\` does)
  --live     also the heap that the run still holds once its tasks are done (a full collection then; --expose-gc)
  --node-flags  extra flags for each run's node process (e.g. "--max-semi-space-size=4")
  --snapshot <file> --snapshot-after <s>  write a heap snapshot of each run's process this long into it (one run)`

/** What one run measured, in its own process. */
interface RunFigures {
  readonly tasks: number
  readonly concurrency: number
  readonly recorded: number
  readonly baselineRssMb: number
  readonly peakRssMb: number
  readonly tasksPeakRssMb: number
  /** The heap after a full collection once the tasks are done (--live only). */
  readonly liveAfterTasksMb?: number | undefined
  readonly maxRssMb: number
  readonly peakHeapMb: number
  readonly endHeapMb: number
  readonly wallS: number
  /** Main-thread and GC CPU of the run (user and system). */
  readonly cpuS: number
}

/** In the child: one whole bench run into a scratch run directory, its memory sampled every 20 ms. */
const child = async (
  data: string,
  limit: number | undefined,
  concurrency: number,
  latency: string,
  snapshot: { readonly path: string; readonly afterS: number } | undefined,
  bounded: boolean
) => {
  // as `smurfs bench` runs: the command bounds the heap's growth for itself (bench/heap-growth.ts)
  if (bounded) boundHeapGrowth()
  const out = mkdtempSync(join(tmpdir(), "smurfs-memory-"))
  try {
    const settings = benchSettings({
      out,
      data,
      groups: [...GROUPS],
      methods: [...METHOD_NAMES],
      model: `sim:latency=${latency}`,
      envs: ["replay", "offline"],
      concurrency,
      ...(limit === undefined ? {} : { limit })
    })
    const baseline = process.memoryUsage().rss
    let peakRss = baseline
    let peakHeap = 0
    // the peak while tasks ran, apart from the run's end (converted files, misses counted over the records)
    let tasksPeakRss = 0
    // the CLI's own progress (its counters and line log), written nowhere
    const cli = makeProgress({ stream: createWriteStream("/dev/null") as never, tty: false })
    // with --expose-gc (--live): what the run still holds once its tasks are done, after a full collection
    let liveAfterTasks: number | undefined
    const gc = (globalThis as { gc?: () => void }).gc
    const progress = {
      ...cli,
      stop: () => {
        sample()
        tasksPeakRss = peakRss
        if (gc) {
          gc()
          liveAfterTasks = process.memoryUsage().heapUsed
        }
        cli.stop()
      }
    }
    const sample = () => {
      const m = process.memoryUsage()
      peakRss = Math.max(peakRss, m.rss)
      peakHeap = Math.max(peakHeap, m.heapUsed)
    }
    const timer = setInterval(sample, 20)
    // a heap snapshot in the middle of the run, to see what holds memory (Chrome DevTools reads it)
    const snap = snapshot && setTimeout(() => writeHeapSnapshot(snapshot.path), snapshot.afterS * 1000)
    const started = performance.now()
    const cpu = process.cpuUsage()
    const outcome = await Effect.runPromise(runBenchSettings(settings, progress))
    sample()
    clearInterval(timer)
    clearTimeout(snap)
    if (outcome.kind !== "ran") throw new Error("no queries matched")
    const figures: RunFigures = {
      tasks: outcome.summary.total,
      concurrency,
      recorded: outcome.summary.recorded,
      baselineRssMb: baseline / MB,
      peakRssMb: peakRss / MB,
      tasksPeakRssMb: tasksPeakRss / MB,
      ...(liveAfterTasks === undefined ? {} : { liveAfterTasksMb: liveAfterTasks / MB }),
      maxRssMb: process.resourceUsage().maxRSS / 1024,
      peakHeapMb: peakHeap / MB,
      endHeapMb: getHeapStatistics().used_heap_size / MB,
      wallS: (performance.now() - started) / 1000,
      cpuS: (({ user, system }) => (user + system) / 1e6)(process.cpuUsage(cpu))
    }
    process.stdout.write(`${JSON.stringify(figures)}\n`)
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

/** Run one configuration in a fresh node process and read its figures. */
const inChild = (args: ReadonlyArray<string>, nodeFlags: ReadonlyArray<string>): Promise<RunFigures> =>
  new Promise((done, fail) => {
    const proc = spawn(process.execPath, [...nodeFlags, SELF, "--child", ...args], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let stdout = ""
    proc.stdout.on("data", (c: Buffer) => void (stdout += c.toString()))
    proc.on("error", fail)
    proc.on("exit", (code) => {
      const line = stdout.trim().split("\n").at(-1)
      if (code !== 0 || !line) fail(new Error(`the run ${args.join(" ")} exited with ${code}`))
      else done(JSON.parse(line) as RunFigures)
    })
  })

const round = (n: number, digits = 0) => Number(n.toFixed(digits))

const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  const args = parsePerfArgs(
    argv,
    {
      child: { type: "boolean" },
      limit: { type: "string" },
      concurrency: { type: "string" },
      runs: { type: "string" },
      latency: { type: "string" },
      data: { type: "string" },
      out: { type: "string" },
      "node-flags": { type: "string" },
      snapshot: { type: "string" },
      "v8-defaults": { type: "boolean" },
      live: { type: "boolean" },
      "snapshot-after": { type: "string" }
    },
    usage
  )
  if (typeof args === "number") return args
  const data = perfDataDir(args.data)
  const latency = args.latency ?? "100ms"
  if (args.child) {
    await child(
      data,
      args.limit === undefined ? undefined : Number(args.limit),
      Number(args.concurrency),
      latency,
      args.snapshot === undefined ? undefined : { path: args.snapshot, afterS: Number(args["snapshot-after"] ?? 30) },
      args["v8-defaults"] !== true
    )
    return 0
  }
  const runs = (args.runs ?? "allx64,43x64,allx256").split(",").map((r) => {
    const m = /^(all|\d+)x(\d+)$/.exec(r.trim())
    if (!m) throw new Error(`--runs: "${r}" is not <queries per group>x<concurrency>\n${usage}`)
    return { limit: m[1] === "all" ? undefined : Number(m[1]), concurrency: Number(m[2]) }
  })
  const nodeFlags = [
    ...(args["node-flags"] ?? "").split(" ").filter((f) => f !== ""),
    ...(args.live === true ? ["--expose-gc"] : [])
  ]
  console.log(
    `NOTE: bench runs of smurfs, react and dfsdt driven by a ${SIM_NOTE}, ${latency} per call, replay,offline tools; each run in a fresh process.`
  )
  const rows: Array<RunFigures> = []
  for (const run of runs) {
    process.stderr.write(
      `memory: ${run.limit === undefined ? "every query" : `${run.limit} queries per group`}, concurrency ${run.concurrency}\n`
    )
    const figures = await inChild(
      [
        "--data",
        data,
        "--latency",
        latency,
        "--concurrency",
        String(run.concurrency),
        ...(run.limit === undefined ? [] : ["--limit", String(run.limit)]),
        ...(args["v8-defaults"] === true ? ["--v8-defaults"] : []),
        ...(args.snapshot === undefined
          ? []
          : ["--snapshot", resolve(args.snapshot), "--snapshot-after", args["snapshot-after"] ?? "30"])
      ],
      nodeFlags
    )
    rows.push(figures)
  }
  const growth =
    args["v8-defaults"] === true
      ? "V8's default heap growth"
      : `heap growth bounded as smurfs bench does (--heap-growing-percent=${HEAP_GROWING_PERCENT})`
  console.log(
    `node ${process.versions.node}, smurfs ${version}, ${growth}${nodeFlags.length > 0 ? `, ${nodeFlags.join(" ")}` : ""}\n`
  )
  console.log(
    table(
      "Peak memory of whole bench runs (smurfs, react, dfsdt; records written to a scratch run directory; RSS sampled every 20 ms)",
      [
        "tasks",
        "concurrency",
        "recorded",
        "RSS before MB",
        "peak RSS MB",
        "while tasks ran MB",
        "max RSS MB",
        "peak heap MB",
        "heap at end MB",
        "wall s",
        "CPU s",
        ...(args.live === true ? ["live heap after tasks MB"] : [])
      ],
      rows.map((r) => [
        r.tasks,
        r.concurrency,
        r.recorded,
        round(r.baselineRssMb),
        round(r.peakRssMb),
        round(r.tasksPeakRssMb),
        round(r.maxRssMb),
        round(r.peakHeapMb),
        round(r.endHeapMb),
        round(r.wallS, 1),
        round(r.cpuS, 1),
        ...(r.liveAfterTasksMb === undefined ? [] : [round(r.liveAfterTasksMb, 1)])
      ]),
      0
    )
  )
  const out = resolve(args.out ?? "runs/memory.json")
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(
    out,
    `${JSON.stringify({ node: process.versions.node, version, latency, heapGrowth: growth, nodeFlags, createdAt: new Date().toISOString(), runs: rows }, null, 2)}\n`
  )
  console.log(`\nwrote ${out}`)
  return 0
}

process.exitCode = await main(process.argv.slice(2))
