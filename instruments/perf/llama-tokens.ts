// `npm run bench:llama-tokens`: prompt tokens sent against prompt tokens the embedded llama.cpp engine actually evaluated
// (its KV cache kept the rest), per task, for smurfs (three-call and fused), react and dfsdt on the tiny generated model
// at concurrency 1 and 4, beside what the prefix-cache model (bench/sim/prefix-cache.ts) predicts for the same requests.
// Measured, not modelled: each request's tokens come from the engine (SMURFS_LLAMA_METER). Prints; asserts nothing.
//
//   node instruments/perf/llama-tokens.ts [--tasks N] [--threads N]
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { makePrefixCache } from "../../bench/sim/prefix-cache.ts"
import { writeTinyGguf } from "../../scripts/tiny-gguf.ts"

const REPO = fileURLToPath(new URL("../../", import.meta.url))
const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name)
  return at >= 0 ? Number(args[at + 1]) : fallback
}
const TASKS = option("--tasks", 2)
const THREADS = option("--threads", 1)

interface Metered {
  readonly role: string
  readonly sequence: number
  readonly startedMs: number
  readonly endedMs: number
  readonly prompt: ReadonlyArray<number>
  readonly output: ReadonlyArray<number>
  readonly evaluated: number
}

const bench = (argv: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<void>((resolve, reject) =>
    execFile(
      process.execPath,
      [join(REPO, "bin/smurfs.js"), "bench", ...argv],
      { cwd: REPO, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, _stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve())
    )
  )

const CONFIGS = [
  { label: "smurfs (default)", args: ["--method", "smurfs"] },
  { label: "smurfs three-call", args: ["--method", "smurfs", "--executor", "three-call"] },
  { label: "react", args: ["--method", "react"] },
  { label: "dfsdt", args: ["--method", "dfsdt"] }
] as const

const scratch = mkdtempSync(join(tmpdir(), "smurfs-llama-tokens-"))
try {
  const model = writeTinyGguf(join(scratch, "tiny.gguf"))
  console.log(
    `embedded engine, tiny generated model, ${TASKS} tasks of G1_instruction (the shipped sample, data/sample), ${THREADS} thread(s)`
  )
  console.log(
    "method              conc  requests  sent/task  evaluated/task  evaluated%  modelled/task  modelled%  replies/task"
  )
  for (const concurrency of [1, 4])
    for (const config of CONFIGS) {
      const out = join(scratch, `run-${config.label.replace(/\W+/g, "-")}-${concurrency}`)
      const meter = `${out}.meter.jsonl`
      writeFileSync(meter, "")
      await bench(
        [
          ...["--data", "sample", "--group", "G1_instruction", "--limit", String(TASKS)],
          ...["--model", `llama:${model}`, "--out", out, "--concurrency", String(concurrency), "--num-ctx", "16384"],
          ...config.args
        ],
        { SMURFS_LLAMA_THREADS: String(THREADS), SMURFS_LLAMA_METER: meter }
      )
      const requests = readFileSync(meter, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as Metered)
        .sort((a, b) => a.startedMs - b.startedMs)
      const tasks = readdirSync(join(out, "tasks"), { recursive: true }).filter((f) => String(f).endsWith(".json"))
      const sent = requests.reduce((n, r) => n + r.prompt.length, 0)
      const evaluated = requests.reduce((n, r) => n + r.evaluated, 0)
      // the tokens the engine wrote (its decode work); the tiny model's text is garbage, so their count says how many
      // replies and fields a method asks for and how long the grammar lets them run, not how long a real model writes
      const replies = requests.reduce((n, r) => n + r.output.length, 0)
      // the model of a server with one slot per sequence, choosing the longest common prefix as the engine does
      const cache = makePrefixCache({ slots: concurrency, prefillMsPerToken: 0, decodeMsPerToken: 0, similarity: 0 })
      // requests in flight hold their sequence, as they do in the engine: replayed as starts and ends in time order
      const events = requests.flatMap((r, i) => [
        { at: r.startedMs, start: true, i },
        { at: r.endedMs, start: false, i }
      ])
      events.sort((a, b) => a.at - b.at || (a.start ? 1 : -1))
      const inFlight = new Map<number, ReturnType<typeof cache.begin>>()
      for (const e of events) {
        const r = requests[e.i]!
        if (e.start) inFlight.set(e.i, cache.begin(r.prompt))
        else inFlight.get(e.i)?.end(r.output)
      }
      const modelled = cache.totals.uncachedTokens
      const perTask = (n: number) => Math.round(n / Math.max(1, tasks.length))
      const pct = (n: number) => `${((100 * n) / Math.max(1, sent)).toFixed(1)}%`
      console.log(
        [
          config.label.padEnd(18),
          String(concurrency).padStart(5),
          String(requests.length).padStart(9),
          String(perTask(sent)).padStart(10),
          String(perTask(evaluated)).padStart(15),
          pct(evaluated).padStart(11),
          String(perTask(modelled)).padStart(14),
          pct(modelled).padStart(10),
          String(perTask(replies)).padStart(13)
        ].join(" ")
      )
    }
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
