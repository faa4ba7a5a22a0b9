// The distributed bench on a real redis-server: a coordinator and `smurfs worker` processes, kills, and resumes.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { cliProcesses, tasksDone } from "./cli-processes.ts"
import { type FakeOllama, startFakeOllama } from "./fake-servers/ollama.ts"
import { type RedisServer, redisUnavailable, startRedis } from "./redis-server.ts"
import { FULL_DATA, lacks, skipNote } from "./data.ts"

const DATA = FULL_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-queue-"))

const { start, killAll } = cliProcesses()
const waitFor = async (what: string, check: () => boolean, ms = 60_000) => {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
const records = (out: string) => (existsSync(join(out, "tasks", "smurfs", "G1_instruction")) ? readdirSync(join(out, "tasks", "smurfs", "G1_instruction")) : [])

const unavailable = redisUnavailable()

// Several node processes per test: generous limits, for a machine busy with other work (they pass in seconds alone).
describe.skipIf(unavailable !== undefined || lacks(FULL_DATA))(`the distributed bench on redis-server${unavailable ? ` (skipped: ${unavailable})` : skipNote(FULL_DATA)}`, { timeout: 180_000 }, () => {
  let redis: RedisServer
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterEach(async () => {
    killAll()
  })
  afterAll(async () => {
    await redis?.stop()
    rmSync(scratch, { recursive: true, force: true })
  })

  const bench = (out: string, model: string, extra: ReadonlyArray<string> = []) =>
    ["bench", "--queue", redis.url, "--data", DATA, "--group", "G1_instruction", "--limit", "40", "--method", "smurfs", "--env", "replay,offline", "--model", model, "--out", out, ...extra]

  it("two workers and a coordinator finish 40 tasks, each recorded once", async () => {
    const out = join(scratch, "two-workers")
    const workers = [start(["worker", "--queue", redis.url, "--concurrency", "4"]), start(["worker", "--queue", redis.url, "--concurrency", "4"])]
    const coordinator = start(bench(out, "sim:latency=20ms"))
    expect(await coordinator.exited).toBe(0)
    expect(records(out)).toHaveLength(40)
    // every task ran once: the workers' runs add up to 40, and both took a share
    expect(workers.map(tasksDone).reduce((a, b) => a + b, 0)).toBe(40)
    expect(workers.every((w) => tasksDone(w) > 0)).toBe(true)
    const converted = JSON.parse(readFileSync(join(out, "converted", "smurfs", "G1_instruction.json"), "utf8")) as Record<string, unknown>
    expect(Object.keys(converted)).toHaveLength(40)
    expect(coordinator.stderr).toContain("40 tasks recorded now")
  })

  it("completes all 40 when a worker is killed with kill -9 mid-run", async () => {
    const out = join(scratch, "kill-worker")
    // a short lock, so that the killed worker's tasks go to the other one within seconds
    const victim = start(["worker", "--queue", redis.url, "--concurrency", "4", "--lock-ms", "1500"])
    const survivor = start(["worker", "--queue", redis.url, "--concurrency", "4", "--lock-ms", "1500"])
    const coordinator = start(bench(out, "sim:latency=25ms"))
    await waitFor("the victim's first task", () => tasksDone(victim) >= 1)
    victim.child.kill("SIGKILL")
    expect(await coordinator.exited).toBe(0)
    expect(records(out)).toHaveLength(40)
    expect(tasksDone(survivor)).toBeGreaterThan(20)
    for (const file of records(out)) expect(() => JSON.parse(readFileSync(join(out, "tasks", "smurfs", "G1_instruction", file), "utf8"))).not.toThrow()
  })

  it("keeps the queue when the coordinator is stopped, and --resume collects what the workers finished without running it twice", async () => {
    const out = join(scratch, "resume")
    const worker = start(["worker", "--queue", redis.url, "--concurrency", "4"])
    const first = start(bench(out, "sim:latency=25ms"))
    await waitFor("a few records", () => records(out).length >= 3)
    first.child.kill("SIGINT")
    expect(await first.exited).toBe(130)
    // the worker goes on with the queued tasks while no coordinator listens
    await waitFor("the worker to finish the queue", () => tasksDone(worker) >= 40, 90_000)
    const before = records(out).length
    expect(before).toBeLessThan(40)
    const second = start(bench(out, "sim:latency=25ms", ["--resume"]))
    expect(await second.exited).toBe(0)
    expect(records(out)).toHaveLength(40)
    expect(tasksDone(worker)).toBe(40) // nothing ran twice
  })
})

describe.skipIf(lacks(FULL_DATA))("a bench on a pool of two model servers" + skipNote(FULL_DATA), { timeout: 120_000 }, () => {
  const servers: Array<FakeOllama> = []
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()))
  })

  it("records every task when one server dies mid-run", async () => {
    // Server a dies on its second request, while that request is in flight and most tasks are still to run
    // (not when a poll of the run directory notices records: a fast run could be over by then).
    let served = 0
    let dead: Promise<void> | undefined
    const a = await startFakeOllama({
      chat: (body) => {
        if (++served === 2) setImmediate(() => (dead = a.close()))
        return { ...sample(body), delayMs: 15 }
      }
    })
    const b = await startFakeOllama({ chat: (body) => ({ ...sample(body), delayMs: 15 }) })
    servers.push(b)
    const out = join(scratch, "pool")
    const proc = start(["bench", "--data", DATA, "--group", "G1_instruction", "--limit", "12", "--method", "react", "--env", "replay,offline", "--model", "ollama:qwen2.5:7b",
      "--endpoints", `${a.url}*2,${b.url}*2`, "--concurrency", "4", "--out", out], { OLLAMA_HOST: "http://127.0.0.1:9" })
    expect(await proc.exited).toBe(0)
    await dead
    expect(readdirSync(join(out, "tasks", "react", "G1_instruction"))).toHaveLength(12)
    const stats = JSON.parse(readFileSync(join(out, "run.json"), "utf8")).endpointStats as Array<{ endpoint: string; calls: number; errors: number; healthy: boolean }>
    expect(stats.map((s) => s.endpoint)).toEqual([a.url, b.url])
    expect(stats[0]!.healthy).toBe(false)
    expect(stats[1]!.calls).toBeGreaterThan(0)
    expect(proc.stderr).toContain(`endpoint ${b.url}:`)
  })
})

/** A ReAct reply: finish at once with an answer (native tool call). */
const sample = (_body: unknown) => ({ toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }] })
