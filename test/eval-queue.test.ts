// `smurfs eval --queue` on a real redis-server: judge decisions made by a `smurfs worker` equal the in-process eval's.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cliProcesses } from "./cli-processes.ts"
import { MINI_DATA } from "./data.ts"
import { type RedisServer, redisUnavailable, startRedis } from "./redis-server.ts"

const DATA = MINI_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-eval-queue-"))

const { start: smurfs, killAll } = cliProcesses({ SMURFS_STB: "" })

/** Every label file under a run's eval/, by path; win verdicts without the reference's absolute path (it names the copy). */
const labels = (run: string): Record<string, unknown> => {
  const root = join(run, "eval")
  const out: Record<string, unknown> = {}
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else {
        const { reference: _source, ...rest } = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>
        out[relative(root, path)] = rest
      }
    }
  }
  walk(root)
  return out
}

const unavailable = redisUnavailable()

describe.skipIf(unavailable !== undefined)(
  `smurfs eval --queue on redis-server${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  { timeout: 120_000 },
  () => {
    let redis: RedisServer
    beforeAll(async () => {
      redis = await startRedis()
    })
    afterAll(async () => {
      killAll()
      await redis?.stop()
      rmSync(scratch, { recursive: true, force: true })
    })

    it("a worker's pass labels and win rounds equal the in-process eval's, stored the same way", async () => {
      const made = join(scratch, "made")
      const bench = smurfs([
        "bench",
        "--data",
        DATA,
        "--group",
        "G1_instruction",
        "--limit",
        "4",
        "--method",
        "smurfs,react",
        "--env",
        "replay,offline",
        "--model",
        "sim",
        "--out",
        made
      ])
      expect(await bench.exited).toBe(0)
      // two copies of the same run under the same name (the reference's name comes from it)
      const local = join(scratch, "local", "run")
      const queued = join(scratch, "queued", "run")
      for (const dir of [local, queued]) {
        mkdirSync(dir, { recursive: true })
        cpSync(made, dir, { recursive: true })
      }
      const evalOf = (run: string, extra: ReadonlyArray<string>) =>
        smurfs([
          "eval",
          "--run",
          run,
          "--judge",
          "sim",
          "--k",
          "2",
          "--method",
          "smurfs",
          "--reference",
          run,
          "--reference-method",
          "react",
          ...extra
        ])

      const inProcess = evalOf(local, [])
      expect(await inProcess.exited).toBe(0)

      const worker = smurfs(["worker", "--queue", redis.url, "--concurrency", "4"])
      const coordinator = evalOf(queued, ["--queue", redis.url])
      expect(await coordinator.exited).toBe(0)
      worker.child.kill("SIGINT")
      expect(await worker.exited).toBe(0)

      const expected = labels(local)
      // 4 smurfs + 4 react answers with 2 pass labels each, and 4 tasks with 2 win rounds each
      expect(Object.keys(expected)).toHaveLength(12)
      expect(labels(queued)).toEqual(expected)
      // the decisions were the worker's (the coordinator has no judge model with --queue), each made once
      expect(worker.stderr.match(/judged a pass label/g)).toHaveLength(16)
      expect(worker.stderr.match(/judged a win round/g)).toHaveLength(8)
      expect(coordinator.stderr).toContain("pass: 8 decisions made")

      // resume: everything is stored, so a second queued eval sends nothing and keeps every decision
      const again = evalOf(queued, ["--queue", redis.url])
      expect(await again.exited).toBe(0)
      expect(again.stderr).toContain("pass: 0 decisions made, 8 kept from earlier")
      expect(labels(queued)).toEqual(expected)
    })

    it("a queue URL that is not redis:// is bad input, before anything is judged", async () => {
      const run = smurfs(["eval", "--run", join(scratch, "made"), "--judge", "sim", "--queue", "http://127.0.0.1:1"])
      expect(await run.exited).toBe(3)
      expect(run.stderr).toContain("the scheme must be redis: or rediss:")
    })
  }
)
