// `bench --runs N --queue`: each agent run of a task is its own job on a real redis-server, run by a `smurfs worker`
// with that run's seed on every request, and recorded as that run (issue 31 §1).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { cliProcesses } from "./cli-processes.ts"
import { MINI_DATA } from "./data.ts"
import { type FakeOllama, startFakeOllama } from "./fake-servers/ollama.ts"
import { type RedisServer, redisUnavailable, startRedis } from "./redis-server.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-queue-runs-"))
const { start, killAll } = cliProcesses()
const unavailable = redisUnavailable()

describe.skipIf(unavailable !== undefined)(
  `bench --runs on the queue${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  { timeout: 180_000 },
  () => {
    let redis: RedisServer
    let ollama: FakeOllama
    beforeAll(async () => {
      redis = await startRedis()
      // ReAct finishes at once with a native call
      ollama = await startFakeOllama(() => ({
        toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }]
      }))
    })
    afterEach(() => killAll())
    afterAll(async () => {
      await ollama?.close()
      await redis?.stop()
      rmSync(scratch, { recursive: true, force: true })
    })

    it("queues one job per task and run; the worker samples each with its run's seed; each lands as its run", async () => {
      const out = join(scratch, "run")
      const worker = start(["worker", "--queue", redis.url, "--concurrency", "2"], { OLLAMA_HOST: ollama.url })
      const coordinator = start([
        "bench",
        "--queue",
        redis.url,
        "--data",
        MINI_DATA.path,
        "--group",
        "G1_instruction",
        "--limit",
        "2",
        "--method",
        "react",
        "--model",
        "ollama:qwen2.5:7b",
        "--seeds",
        "7,11,13",
        "--out",
        out
      ])
      expect(await coordinator.exited, coordinator.stderr).toBe(0)
      worker.child.kill("SIGINT")
      const dir = join(out, "tasks", "react", "G1_instruction")
      expect(readdirSync(dir).sort()).toEqual([
        "588.json",
        "588.run1.json",
        "588.run2.json",
        "608.json",
        "608.run1.json",
        "608.run2.json"
      ])
      for (const [file, run, seed] of [
        ["588.json", 0, 7],
        ["588.run1.json", 1, 11],
        ["608.run2.json", 2, 13]
      ] as const)
        expect(JSON.parse(readFileSync(join(dir, file), "utf8"))).toMatchObject({ run, seed })
      // two tasks, three runs: one request each, each with its run's seed
      const seeds = ollama.chatRequests().map((body) => body.options?.seed)
      expect(seeds.sort((a, b) => a - b)).toEqual([7, 7, 11, 11, 13, 13])
    })
  }
)
