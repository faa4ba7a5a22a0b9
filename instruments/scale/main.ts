// `npm run bench:scale`: tasks per second of the distributed bench with 1, 2 and 4 workers on a real redis-server,
// each worker with its own fake model server (100 ms a call). It prints figures; it asserts nothing about timings.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { startFakeOllama } from "../../test/fake-servers/ollama.ts"
import { redisUnavailable, startRedis } from "../../test/redis-server.ts"
import { table } from "../perf/table.ts"

const REPO = fileURLToPath(new URL("../../", import.meta.url))
const CLI = join(REPO, "bin", "smurfs.js")

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    tasks: { type: "string" },
    latency: { type: "string", default: "100" },
    concurrency: { type: "string", default: "4" },
    workers: { type: "string", default: "1,2,4" },
    data: { type: "string", default: resolve(REPO, "../shared/toolbench") }
  }
})
const TASKS = Number(values.tasks ?? (values.quick ? 48 : 160))
const LATENCY_MS = Number(values.latency)
const CONCURRENCY = Number(values.concurrency)
const WORKER_COUNTS = values.workers!.split(",").map(Number)
const log = (text: string) => process.stderr.write(`${text}\n`)

/** A ReAct chain of two model calls: call the task's first tool, then finish with an answer. */
const reply = (body: { messages?: Array<{ role: string }>; tools?: Array<{ function: { name: string } }> }) => {
  const called = (body.messages ?? []).some((m) => m.role === "tool")
  const first = body.tools?.find((t) => t.function.name !== "Finish")?.function.name
  return called || !first
    ? {
        toolCalls: [
          { name: "Finish", arguments: { return_type: "give_answer", final_answer: "The tool answered the question." } }
        ],
        delayMs: LATENCY_MS
      }
    : { toolCalls: [{ name: first, arguments: {} }], delayMs: LATENCY_MS }
}

const spawnCli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr!.on("data", (c: Buffer) => void (stderr += c.toString()))
  return { child, stderr: () => stderr, exited: new Promise<number | null>((r) => child.on("exit", (code) => r(code))) }
}

const waitFor = async (check: () => boolean, what: string) => {
  const until = Date.now() + 30_000
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Tasks per second over the records: from the first task's start to the last one's end, as the workers stamped them. */
const throughput = (out: string): { tasks: number; seconds: number } => {
  const dir = join(out, "tasks", "react", "G1_instruction")
  const spans = readdirSync(dir).map(
    (f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as { startedAt: string; finishedAt: string }
  )
  const first = Math.min(...spans.map((s) => Date.parse(s.startedAt)))
  const last = Math.max(...spans.map((s) => Date.parse(s.finishedAt)))
  return { tasks: spans.length, seconds: (last - first) / 1000 }
}

const main = async () => {
  const missing = redisUnavailable()
  if (missing) {
    log(`bench:scale needs ${missing}`)
    process.exit(3)
  }
  log(
    `NOTE: fake model servers on loopback (${LATENCY_MS} ms a call, 2 calls a task); these figures measure the queue and the workers, never a model.`
  )
  const redis = await startRedis()
  const scratch = mkdtempSync(join(tmpdir(), "smurfs-scale-"))
  const rows: Array<{ workers: number; tasks: number; seconds: number; perSecond: number }> = []
  const running: Array<ChildProcess> = []
  try {
    for (const count of WORKER_COUNTS) {
      const servers = await Promise.all(
        Array.from({ length: count }, () => startFakeOllama({ chat: (body) => reply(body) }))
      )
      const workers = servers.map((s) =>
        spawnCli([
          "worker",
          "--queue",
          redis.url,
          "--concurrency",
          String(CONCURRENCY),
          "--endpoints",
          `${s.url}*${CONCURRENCY}`
        ])
      )
      running.push(...workers.map((w) => w.child))
      await waitFor(() => workers.every((w) => w.stderr().includes("taking ")), "the workers")
      const out = join(scratch, `workers-${count}`)
      const coordinator = spawnCli(
        [
          "bench",
          "--queue",
          redis.url,
          "--data",
          values.data!,
          "--group",
          "G1_instruction",
          "--limit",
          String(TASKS),
          "--method",
          "react",
          "--env",
          "replay,offline",
          "--tool-calling",
          "native",
          "--model",
          "ollama:qwen2.5:7b",
          "--out",
          out
        ],
        { OLLAMA_HOST: servers[0]!.url }
      )
      const code = await coordinator.exited
      if (code !== 0) throw new Error(`the coordinator exited with ${code}: ${coordinator.stderr().slice(-2000)}`)
      const { tasks, seconds } = throughput(out)
      rows.push({ workers: count, tasks, seconds, perSecond: tasks / seconds })
      log(`${count} worker(s): ${tasks} tasks in ${seconds.toFixed(2)} s`)
      for (const w of workers) w.child.kill("SIGKILL")
      await Promise.all(servers.map((s) => s.close()))
    }
  } finally {
    for (const c of running) if (c.exitCode === null) c.kill("SIGKILL")
    await redis.stop()
    rmSync(scratch, { recursive: true, force: true })
  }
  const base = rows[0]!.perSecond
  console.log(
    table(
      "Distributed bench throughput (BullMQ on Redis)",
      ["workers", "tasks", "wall (s)", "tasks/s", "speed-up"],
      rows.map((r) => [r.workers, r.tasks, r.seconds, r.perSecond, `${(r.perSecond / base).toFixed(2)}x`])
    )
  )
  console.log(
    `each worker: --concurrency ${CONCURRENCY}, its own fake Ollama at ${LATENCY_MS} ms a call; redis-server on loopback; ${process.version}, ${(await import("node:os")).cpus().length} cores`
  )
}

await main()
