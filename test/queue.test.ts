// The distributed bench on a real redis-server: a coordinator and `smurfs worker` processes, kills, and resumes.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Job, Queue } from "bullmq"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { judgeInputFromRecord } from "../bench/eval/judge-input.ts"
import { fakeRecord } from "../bench/eval/test-fixtures.ts"
import { connectionOf, JUDGE_QUEUE, TASK_QUEUE } from "../bench/queue/connection.ts"
import { benchSettings, jobSettingsOf } from "../bench/settings.ts"
import { cliProcesses, tasksDone } from "./cli-processes.ts"
import { MINI_DATA } from "./data.ts"
import { type FakeOllama, startFakeOllama } from "./fake-servers/ollama.ts"
import { startFakeOpenAI } from "./fake-servers/openai.ts"
import { type RedisServer, redisUnavailable, startRedis } from "./redis-server.ts"

const DATA = MINI_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-queue-"))

const { start, killAll } = cliProcesses()
const waitFor = async (what: string, check: () => boolean, ms = 60_000) => {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
/** The smurfs records of a run, as group/file, over every group. */
const records = (out: string) => {
  const dir = join(out, "tasks", "smurfs")
  return existsSync(dir)
    ? readdirSync(dir).flatMap((group) => readdirSync(join(dir, group)).map((f) => join(group, f)))
    : []
}
/** The queue's runs take every task of the fixture (all six groups). */
const TASKS = readdirSync(join(DATA, "queries")).reduce(
  (n, file) => n + (JSON.parse(readFileSync(join(DATA, "queries", file), "utf8")) as Array<unknown>).length,
  0
)

const unavailable = redisUnavailable()

// Several node processes per test: generous limits, for a machine busy with other work (they pass in seconds alone).
describe.skipIf(unavailable !== undefined)(
  `the distributed bench on redis-server${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  { timeout: 180_000 },
  () => {
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

    const bench = (out: string, model: string, extra: ReadonlyArray<string> = []) => [
      "bench",
      "--queue",
      redis.url,
      "--data",
      DATA,
      "--method",
      "smurfs",
      "--env",
      "replay,offline",
      "--model",
      model,
      "--out",
      out,
      ...extra
    ]

    it("two workers and a coordinator finish every task, each recorded once", async () => {
      const out = join(scratch, "two-workers")
      const workers = [
        start(["worker", "--queue", redis.url, "--concurrency", "4"]),
        start(["worker", "--queue", redis.url, "--concurrency", "4"])
      ]
      const coordinator = start(bench(out, "sim:latency=20ms"))
      expect(await coordinator.exited).toBe(0)
      expect(records(out)).toHaveLength(TASKS)
      // every task ran once: the workers' runs add up to the tasks, and both took a share
      expect(workers.map(tasksDone).reduce((a, b) => a + b, 0)).toBe(TASKS)
      expect(workers.every((w) => tasksDone(w) > 0)).toBe(true)
      const converted = readdirSync(join(out, "converted", "smurfs")).flatMap((file) =>
        Object.keys(JSON.parse(readFileSync(join(out, "converted", "smurfs", file), "utf8")) as Record<string, unknown>)
      )
      expect(converted).toHaveLength(TASKS)
      expect(coordinator.stderr).toContain(`${TASKS} tasks recorded now`)
    })

    it("completes every task when a worker is killed with kill -9 mid-run", async () => {
      const out = join(scratch, "kill-worker")
      // a short lock, so that the killed worker's tasks go to the other one within seconds
      const victim = start(["worker", "--queue", redis.url, "--concurrency", "4", "--lock-ms", "1500"])
      const survivor = start(["worker", "--queue", redis.url, "--concurrency", "4", "--lock-ms", "1500"])
      const coordinator = start(bench(out, "sim:latency=25ms"))
      await waitFor("the victim's first task", () => tasksDone(victim) >= 1)
      victim.child.kill("SIGKILL")
      expect(await coordinator.exited).toBe(0)
      expect(records(out)).toHaveLength(TASKS)
      expect(tasksDone(survivor)).toBeGreaterThan(TASKS / 2)
      for (const file of records(out))
        expect(() => JSON.parse(readFileSync(join(out, "tasks", "smurfs", file), "utf8"))).not.toThrow()
    })

    it("keeps the queue when the coordinator is stopped, and --resume collects what the workers finished without running it twice", async () => {
      const out = join(scratch, "resume")
      const worker = start(["worker", "--queue", redis.url, "--concurrency", "4"])
      const first = start(bench(out, "sim:latency=25ms"))
      await waitFor("a few records", () => records(out).length >= 3)
      first.child.kill("SIGINT")
      expect(await first.exited).toBe(130)
      // the worker goes on with the queued tasks while no coordinator listens
      await waitFor("the worker to finish the queue", () => tasksDone(worker) >= TASKS, 90_000)
      const before = records(out).length
      expect(before).toBeLessThan(TASKS)
      const second = start(bench(out, "sim:latency=25ms", ["--resume"]))
      expect(await second.exited).toBe(0)
      expect(records(out)).toHaveLength(TASKS)
      expect(tasksDone(worker)).toBe(TASKS) // nothing ran twice
    })

    it("a job written into Redis by hand changes nothing the worker does: no endpoints, folders or judge files of the job's choosing", async () => {
      const attacker = await startFakeOpenAI()
      const cacheDir = join(scratch, "injected-call-cache")
      const secretFile = join(scratch, "worker-private.json")
      writeFileSync(secretFile, JSON.stringify(["PRIVATE-CONTENT-of-the-worker"]))
      const key = "sk-worker-key-0123456789"
      const worker = start(["worker", "--queue", redis.url, "--concurrency", "2"], {
        OPENAI_API_KEY: key,
        OPENAI_BASE_URL: "http://127.0.0.1:9/v1"
      })
      await waitFor("the worker to start", () => worker.stderr.includes("taking bench tasks"))
      const connection = connectionOf(redis.url)
      const tasks = new Queue(TASK_QUEUE, { connection })
      const judgements = new Queue(JUDGE_QUEUE, { connection })
      try {
        const query = { group: "G1_instruction", id: "1", query: "q", apiList: [], relevant: [] }
        const settings = jobSettingsOf(benchSettings({ out: "/run", model: "openai:qwen2.5:7b" }))
        const injected = [
          // the coordinator's command line, as jobs carried it before: a worker read --endpoints and --call-cache from it
          [
            tasks,
            "argv",
            {
              runId: "evil",
              method: "smurfs",
              query,
              argv: ["--model", "openai:qwen2.5:7b", "--endpoints", attacker.baseURL, "--call-cache", cacheDir]
            }
          ],
          // settings that name endpoints and a folder
          [
            tasks,
            "fields",
            {
              runId: "evil",
              method: "smurfs",
              query,
              settingsVersion: 1,
              settings: { ...settings, endpoints: [attacker.baseURL], callCache: cacheDir }
            }
          ],
          // a model that reads a file of the worker's machine
          [
            tasks,
            "scripted",
            {
              runId: "evil",
              method: "smurfs",
              query,
              settingsVersion: 1,
              settings: { ...settings, model: `scripted:${secretFile}` }
            }
          ],
          // a judge decision whose judge reads that file
          [
            judgements,
            "judge",
            {
              kind: "pass",
              judge: `scripted:${secretFile}`,
              prompts: "smurfs",
              seed: 1,
              input: judgeInputFromRecord(fakeRecord({ taskId: "1", query: "q", finalAnswer: "a", calls: [] }))
            }
          ]
        ] as const
        for (const [queue, id, data] of injected) await queue.add("evil", data, { jobId: `evil-${id}`, attempts: 1 })
        const states = async () =>
          Promise.all(injected.map(async ([queue, id]) => (await Job.fromId(queue, `evil-${id}`))!))
        const until = Date.now() + 60_000
        let jobs = await states()
        while (!(await Promise.all(jobs.map((j) => j.isFailed()))).every(Boolean)) {
          if (Date.now() > until) throw new Error(`the injected jobs were not refused: ${worker.stderr}`)
          await new Promise((r) => setTimeout(r, 100))
          jobs = await states()
        }
        const reasons = jobs.map((j) => j.failedReason)
        expect(reasons[0]).toContain("not a smurfs bench task")
        expect(reasons[1]).toContain("does not take from a job")
        expect(reasons[2]).toContain("give this worker its own --model")
        expect(reasons[3]).toContain("give this worker its own --model")
        // nothing went to the job's endpoint, nothing was written to its folder, nothing of the file reached Redis
        expect(attacker.requests).toHaveLength(0)
        expect(existsSync(cacheDir)).toBe(false)
        expect(JSON.stringify(jobs.map((j) => [j.failedReason, j.returnvalue, j.stacktrace]))).not.toContain(
          "PRIVATE-CONTENT"
        )
        expect(worker.stderr).not.toContain(key)
      } finally {
        await Promise.all([tasks.close(), judgements.close(), attacker.close()])
      }
    })
  }
)

describe("a bench on a pool of two model servers", { timeout: 120_000 }, () => {
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
    const proc = start(
      [
        "bench",
        "--data",
        DATA,
        "--group",
        "G1_instruction",
        "--method",
        "react",
        "--env",
        "replay,offline",
        "--model",
        "ollama:qwen2.5:7b",
        "--endpoints",
        `${a.url}*2,${b.url}*2`,
        "--concurrency",
        "4",
        "--out",
        out
      ],
      { OLLAMA_HOST: "http://127.0.0.1:9" }
    )
    expect(await proc.exited).toBe(0)
    await dead
    expect(readdirSync(join(out, "tasks", "react", "G1_instruction"))).toHaveLength(6)
    const stats = JSON.parse(readFileSync(join(out, "run.json"), "utf8")).endpointStats as Array<{
      endpoint: string
      calls: number
      errors: number
      healthy: boolean
    }>
    expect(stats.map((s) => s.endpoint)).toEqual([a.url, b.url])
    expect(stats[0]!.healthy).toBe(false)
    expect(stats[1]!.calls).toBeGreaterThan(0)
    expect(proc.stderr).toContain(`endpoint ${b.url}:`)
  })
})

/** A ReAct reply: finish at once with an answer (native tool call). */
const sample = (_body: unknown) => ({
  toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }]
})
