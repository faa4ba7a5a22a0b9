// Prompt tokens a real llama.cpp `llama-server` evaluates per task (issue 33), for smurfs and react, tasks in flight
// equal to its slots and above, without and with `--slot-affinity auto`, with its host-memory prompt cache
// (`--cache-ram`, on by default) and without it (`--cache-ram 0`: slots only, what bench/sim models). Each variant gets
// a fresh server (empty caches) serving the GGUF; `smurfs bench` runs the shipped sample's tasks against it through
// `openai:`; the server's own counters (/metrics) say what it evaluated and reused. Prints a table; asserts nothing.
//
// It needs a llama-server built locally (nothing here builds one; docs/performance.md says how):
//
//   node instruments/llama-server/measure.ts --server <path to llama-server> [--model <file.gguf>] [--slots 2]
//     [--concurrency 2,8] [--methods smurfs,react] [--clients plain,affinity] [--cache-ram default,0] [--limit N]
//     [--threads 1] [--ctx-per-slot 16384] [--tool-calling json] [--timeout 30000] [--keep-logs <dir>]
//     [--extra "<llama-server arguments>"]
//
// `--extra` defaults to `--no-jinja`: with its Jinja templates (on by default) this server refuses every json_schema
// reply format on the tiny model ("Failed to initialize samplers"), and without them it refuses native tool calls, so
// react runs with `--tool-calling json` (the same prompts, its action as a JSON reply) unless told otherwise.
// Without --model it serves the tiny generated model (scripts/tiny-gguf.ts): its replies are random, so its figures
// say what the server's caches do with smurfs' requests, not what a real model would answer.
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { writeTinyGguf } from "../../scripts/tiny-gguf.ts"
import {
  type LlamaServer,
  llamaServerMetrics,
  llamaServerProblem,
  llamaServerVersion,
  startLlamaServer
} from "../../test/llama-server.ts"
import { table } from "../perf/table.ts"

const REPO = fileURLToPath(new URL("../../", import.meta.url))
const CLI = join(REPO, "bin", "smurfs.js")

const { values } = parseArgs({
  options: {
    server: { type: "string", default: process.env["SMURFS_LLAMA_SERVER"] },
    model: { type: "string" },
    slots: { type: "string", default: "2" },
    concurrency: { type: "string" },
    methods: { type: "string", default: "smurfs,react" },
    clients: { type: "string", default: "plain,affinity" },
    "cache-ram": { type: "string", default: "default,0" },
    limit: { type: "string" },
    threads: { type: "string", default: "1" },
    "ctx-per-slot": { type: "string", default: "16384" },
    "tool-calling": { type: "string", default: "json" },
    // the tiny model answers in about a second: a request that waits much longer is stuck in the server
    timeout: { type: "string", default: "30000" },
    // the tiny model's template with llama-server's Jinja path refuses every json_schema reply (docs/performance.md)
    extra: { type: "string", default: "--no-jinja" },
    // a folder for each variant's server log (kept whatever happens; without it the logs go with the scratch folder)
    "keep-logs": { type: "string" },
    help: { type: "boolean", short: "h", default: false }
  }
})

const USAGE =
  "usage: node instruments/llama-server/measure.ts --server <path to llama-server> [--model <file.gguf>] [--slots 2] [--concurrency 2,8] [--methods smurfs,react] [--clients plain,affinity] [--cache-ram default,0] [--limit N]"
if (values.help) {
  console.log(USAGE)
  process.exit(0)
}
const problem = llamaServerProblem(values.server)
if (problem !== undefined) {
  console.error(
    `${problem}.\nThis instrument needs a llama-server built locally from llama.cpp (tools/server; e.g. from node-llama-cpp's ` +
      `llama/gitRelease.bundle, see docs/performance.md); give it with --server or SMURFS_LLAMA_SERVER.\n${USAGE}`
  )
  process.exit(2)
}
const BINARY = resolve(values.server!)
const SLOTS = Number(values.slots)
const CONCURRENCIES = (values.concurrency ?? `${SLOTS},${4 * SLOTS}`).split(",").map(Number)
const METHODS = values.methods!.split(",")
const CLIENTS = values.clients!.split(",") as Array<"plain" | "affinity">
const CACHE_RAM = values["cache-ram"]!.split(",")
const CTX_PER_SLOT = Number(values["ctx-per-slot"])
const EXTRA = values.extra!.split(/\s+/).filter((a) => a !== "")
const log = (text: string) => process.stderr.write(`${text}\n`)

/** `smurfs bench` against the server; resolves with its exit code and the end of its stderr. */
const bench = (server: LlamaServer, args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stderr: string }>((done) => {
    const child = spawn(process.execPath, [CLI, "bench", ...args], {
      cwd: REPO,
      env: { ...process.env, NO_COLOR: "1", OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "none" },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr!.on("data", (c: Buffer) => void (stderr = (stderr + c.toString()).slice(-8000)))
    child.on("exit", (code) => done({ code, stderr }))
  })

interface TaskTotals {
  readonly modelCalls: number
  readonly promptTokens: number
  readonly completionTokens: number
}

/** Every task record of a run (tasks/<method>/<group>/<id>.json): its totals and how it finished. */
const records = (out: string): Array<{ totals: TaskTotals; finishType: string }> =>
  readdirSync(join(out, "tasks"), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(join(out, "tasks", f), "utf8")) as { totals: TaskTotals; finishType: string })

const scratch = mkdtempSync(join(tmpdir(), "smurfs-llama-server-"))
const rows: Array<Array<string | number>> = []
let failed = false
let runs = 0
try {
  const model = values.model ? resolve(values.model) : writeTinyGguf(join(scratch, "tiny.gguf"))
  log(`${BINARY}: ${llamaServerVersion(BINARY)}`)
  log(
    `model ${values.model ?? "tiny generated (scripts/tiny-gguf.ts)"}, --parallel ${SLOTS}, -c ${SLOTS * CTX_PER_SLOT}, ` +
      `--threads ${values.threads}${EXTRA.length ? ` ${EXTRA.join(" ")}` : ""}; tasks: the shipped sample (--data sample)`
  )
  for (const cacheRam of CACHE_RAM)
    for (const method of METHODS)
      for (const concurrency of CONCURRENCIES)
        for (const client of CLIENTS) {
          const label = `cache-ram ${cacheRam}, ${method}, concurrency ${concurrency}, ${client}`
          const server = await startLlamaServer({
            binary: BINARY,
            model,
            slots: SLOTS,
            ctxPerSlot: CTX_PER_SLOT,
            threads: Number(values.threads),
            extra: [...(cacheRam === "default" ? [] : ["--cache-ram", cacheRam]), ...EXTRA]
          })
          try {
            const out = join(scratch, `run-${++runs}`)
            const started = performance.now()
            const run = await bench(server, [
              ...["--data", "sample", "--model", "openai:tiny", "--out", out, "--method", method],
              ...[
                "--concurrency",
                String(concurrency),
                "--num-ctx",
                String(CTX_PER_SLOT),
                "--timeout",
                values.timeout!
              ],
              ...(values.limit ? ["--limit", values.limit] : []),
              ...(method === "smurfs" ? [] : ["--tool-calling", values["tool-calling"]!]),
              ...(client === "affinity" ? ["--slot-affinity", "auto"] : [])
            ])
            const wallS = (performance.now() - started) / 1000
            const metrics = await llamaServerMetrics(server)
            const tasks = records(out)
            const errors = tasks.filter((t) => t.finishType === "error").length
            if (run.code !== 0 || errors > 0) {
              failed = true
              log(
                `${label}: smurfs bench exited ${run.code}, ${tasks.length} records (${errors} failed on the server):`
              )
              log(
                run.stderr
                  .split("\n")
                  .filter((l) => /did not answer|looks down|error/i.test(l))
                  .slice(-4)
                  .join("\n")
              )
            }
            if (tasks.length === 0) continue
            const n = tasks.length
            const sum = (f: (t: TaskTotals) => number) => tasks.reduce((s, t) => s + f(t.totals), 0)
            const sent = sum((t) => t.promptTokens)
            const evaluated = metrics["prompt_tokens_total"] ?? Number.NaN
            const cached = metrics["prompt_tokens_cached_total"] ?? Number.NaN
            const row = [
              cacheRam,
              method,
              concurrency,
              client,
              n,
              Math.round(sum((t) => t.modelCalls) / n),
              Math.round(sent / n),
              Math.round(evaluated / n),
              `${((100 * evaluated) / sent).toFixed(1)}%`,
              Math.round(cached / n),
              Math.round((metrics["tokens_predicted_total"] ?? Number.NaN) / n),
              `${Math.round((100 * tasks.filter((t) => t.finishType === "give_answer").length) / n)}%`,
              errors,
              Number(wallS.toFixed(1))
            ]
            rows.push(row)
            log(`${label}: ${row.slice(4).join(" ")}`)
          } finally {
            await server.stop()
            if (values["keep-logs"]) {
              mkdirSync(values["keep-logs"], { recursive: true })
              writeFileSync(join(values["keep-logs"], `run-${runs}-${label.replace(/\W+/g, "-")}.log`), server.log())
            }
          }
        }
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
console.log(
  table(
    `llama-server, --parallel ${SLOTS}: per task (sent: the prompt tokens of its requests; evaluated: what the server computed, llamacpp:prompt_tokens_total; reused: llamacpp:prompt_tokens_cached_total)`,
    [
      "cache-ram",
      "method",
      "in flight",
      "client",
      "tasks",
      "requests",
      "sent",
      "evaluated",
      "evaluated %",
      "reused",
      "decoded",
      "answered",
      "server errors",
      "wall s"
    ],
    rows
  )
)
if (failed) process.exit(1)
