// Redis that goes away mid-run and never comes back: `bench --queue` used to wait forever (closing BullMQ's queue and
// event listener waits for Redis too), and `eval --queue` recorded every decision as failed and ended with 0 or 1.
// Both stop within their bound (SMURFS_QUEUE_LOST_MS) with exit 4 and a message, keeping what was recorded.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { type CliProcess, cliProcesses } from "../cli-processes.ts"
import { MINI_DATA } from "../data.ts"
import { type RedisServer, redisUnavailable, startRedis } from "../redis-server.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-redis-gone-"))
/** The bound under test: short, so that the test is quick; the default is 30 s. */
const LOST_MS = 3000
const { start, killAll } = cliProcesses({ SMURFS_QUEUE_LOST_MS: String(LOST_MS) })

const unavailable = redisUnavailable()

/**
 * Once `proc` is under way (`started` holds, then a second more), stop Redis for good (stopped once whatever
 * happens: a killed redis-server does not exit twice) and wait for the command to end (at most 45 s, else
 * "stuck"); how long it took after the stop.
 */
const stopRedisUnder = async (
  redis: RedisServer,
  proc: CliProcess,
  started: () => boolean
): Promise<{ readonly code: number | null | "stuck"; readonly took: number }> => {
  try {
    const until = Date.now() + 60_000
    while (!started() && Date.now() < until && proc.child.exitCode === null)
      await new Promise((r) => setTimeout(r, 100))
    await new Promise((r) => setTimeout(r, 1000))
    expect(proc.child.exitCode, proc.stderr).toBeNull()
  } finally {
    await redis.stop()
  }
  const stopped = Date.now()
  const code = await Promise.race([proc.exited, new Promise<"stuck">((r) => setTimeout(() => r("stuck"), 45_000))])
  return { code, took: Date.now() - stopped }
}

describe.skipIf(unavailable !== undefined)(
  `Redis gone for good mid-run${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  { timeout: 120_000 },
  () => {
    afterEach(() => killAll())
    afterAll(() => rmSync(scratch, { recursive: true, force: true }))

    it("bench --queue ends with exit 4 and says so within the bound (plus closing), instead of waiting forever", async () => {
      const redis = await startRedis()
      const out = join(scratch, "run")
      // no worker: the coordinator's jobs wait in Redis, as they do mid-run while workers are busy
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
        "smurfs",
        "--model",
        "sim",
        "--out",
        out
      ])
      // the run is under way once its run directory is written and its jobs are queued
      const { code, took } = await stopRedisUnder(redis, coordinator, () => existsSync(join(out, "run.json")))
      expect(code, coordinator.stderr).toBe(4)
      expect(coordinator.stderr).toContain("Redis stopped answering and did not come back within 3 s")
      expect(coordinator.stderr).toContain("--resume")
      // the bound, then at most a couple of seconds to close what can be closed and drop the rest (slack for a busy machine)
      expect(took).toBeLessThan(LOST_MS + 15_000)
    })

    it("eval --queue ends with exit 4 (the queue unavailable), not with every decision failed, and stores no label", async () => {
      // a run to judge, made without the queue
      const run = join(scratch, "judged")
      const bench = start([
        "bench",
        "--data",
        MINI_DATA.path,
        "--group",
        "G1_instruction",
        "--limit",
        "2",
        "--method",
        "react",
        "--model",
        "sim",
        "--out",
        run
      ])
      expect(await bench.exited, bench.stderr).toBe(0)
      const redis = await startRedis()
      // no worker: the decisions wait in Redis
      const evaluation = start(["eval", "--run", run, "--judge", "sim", "--queue", redis.url])
      const { code, took } = await stopRedisUnder(redis, evaluation, () => evaluation.stderr.includes("judge texts:"))
      expect(code, evaluation.stderr).toBe(4)
      expect(evaluation.stderr).toContain("Redis stopped answering and did not come back within 3 s")
      expect(evaluation.stderr).toContain("run the same eval again")
      expect(evaluation.stderr).not.toContain("--resume")
      expect(took).toBeLessThan(LOST_MS + 15_000)
      // nothing was judged, so no label file: a later eval judges every task
      const labels = join(run, "eval")
      const files = existsSync(labels)
        ? readdirSync(labels, { recursive: true }).filter((f) => String(f).endsWith(".json"))
        : []
      expect(files).toEqual([])
    })
  }
)
