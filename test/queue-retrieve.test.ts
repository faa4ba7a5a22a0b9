// `--toolset retrieve` on queue workers (issue 13 point 7): a worker builds the corpus from its own --data and
// runs each task exactly as the bench does in process; the retrieved sets of both runs are the same.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { kindOf } from "../src/trace/events.ts"
import { cliProcesses, tasksDone } from "./cli-processes.ts"
import { MINI_DATA } from "./data.ts"
import { type RedisServer, redisUnavailable, startRedis } from "./redis-server.ts"

const DATA = `${MINI_DATA.path}/`
const scratch = mkdtempSync(join(tmpdir(), "smurfs-queue-retrieve-"))

const { start, killAll } = cliProcesses({ SMURFS_DATA: "" })

type Record_ = {
  availableTools: Array<string>
  events: Array<{ type: string; data: { scope: string; query: string; tools: Array<{ name: string }> } }>
}
const record = (out: string, method: string, id: string) =>
  JSON.parse(readFileSync(join(out, "tasks", method, "G1_instruction", `${id}.json`), "utf8")) as Record_
/** Every retrieval a task's smurfs trajectory recorded: its scope, its query and the tools, in order. */
const retrievals = (out: string, id: string) =>
  record(out, "smurfs", id)
    .events.filter((e) => kindOf(e) === "retrieval")
    .map((e) => [e.data.scope, e.data.query, e.data.tools.map((t) => t.name)])

const unavailable = redisUnavailable()

describe.skipIf(unavailable !== undefined)(
  `--toolset retrieve on queue workers${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  { timeout: 180_000 },
  () => {
    let redis: RedisServer
    beforeAll(async () => {
      redis = await startRedis()
    })
    afterEach(() => {
      killAll()
    })
    afterAll(async () => {
      await redis?.stop()
      rmSync(scratch, { recursive: true, force: true })
    })

    const bench = (out: string, extra: ReadonlyArray<string> = [], limit = "6", methods = "smurfs,react") => [
      "bench",
      "--data",
      DATA,
      "--group",
      "G1_instruction",
      "--limit",
      limit,
      "--method",
      methods,
      "--env",
      "offline",
      "--toolset",
      "retrieve:3",
      "--model",
      "sim",
      "--out",
      out,
      ...extra
    ]

    it("a worker retrieves exactly as the in-process run: the same task sets, the same per-subtask sets", async () => {
      const local = join(scratch, "in-process")
      const queued = join(scratch, "queued")
      const inProcess = start(bench(local))
      expect(await inProcess.exited, inProcess.stderr).toBe(0)
      // the worker's own --data: the same corpus as the coordinator's
      const worker = start(["worker", "--queue", redis.url, "--concurrency", "4", "--data", DATA])
      const coordinator = start(bench(queued, ["--queue", redis.url]))
      expect(await coordinator.exited, coordinator.stderr).toBe(0)
      expect(tasksDone(worker)).toBe(12) // the worker ran every task (6 queries, 2 methods)

      const localSets = JSON.parse(readFileSync(join(local, "run.json"), "utf8")).retrieval
      const queuedSets = JSON.parse(readFileSync(join(queued, "run.json"), "utf8")).retrieval
      expect(queuedSets).toEqual(localSets)
      const ids = readdirSync(join(local, "tasks", "smurfs", "G1_instruction")).map((f) => f.replace(/\.json$/, ""))
      expect(ids).toHaveLength(6)
      for (const id of ids) {
        expect(record(queued, "react", id).availableTools).toEqual(localSets.sets[`G1_instruction/${id}`])
        expect(record(queued, "react", id).availableTools).toHaveLength(3)
        const all = retrievals(local, id)
        // the task's set first, then one per subtask
        expect(all[0]).toEqual(["task", expect.any(String), localSets.sets[`G1_instruction/${id}`]])
        expect(all.filter(([scope]) => scope === "subtask").length).toBeGreaterThan(0)
        expect(retrievals(queued, id)).toEqual(all)
      }
    })

    it("a worker whose --data holds another corpus refuses the tasks and says to give it the coordinator's data", async () => {
      // one query file of the six: a smaller corpus than the run's
      const other = join(scratch, "other-data")
      for (const dir of ["queries", "query_ids"]) {
        mkdirSync(join(other, dir), { recursive: true })
        copyFileSync(join(DATA, dir, "G1_instruction.json"), join(other, dir, "G1_instruction.json"))
      }
      const worker = start(["worker", "--queue", redis.url, "--data", other])
      const coordinator = start(bench(join(scratch, "other"), ["--queue", redis.url], "1", "react"))
      await coordinator.exited
      expect(coordinator.stderr).toContain("is not the run's")
      expect(coordinator.stderr).toContain("smurfs worker --data <dir>")
      expect(tasksDone(worker)).toBe(0)
    })
  }
)
