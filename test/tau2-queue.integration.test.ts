// `smurfs bench --tau2 --queue`: each conversation (task x agent x trial) is a job on a real redis-server, run by a
// `smurfs worker --tau2 <its checkout>` with the run's user model, its record and reward label written by the
// coordinator in the run directory; `compare` shows pass^1 and pass^2 as for an in-process run (issue 34 §2).
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { cliProcesses } from "./cli-processes.ts"
import { type FakeOpenAI, startFakeOpenAI } from "./fake-servers/openai.ts"
import { type RedisServer, redisUnavailable, startRedis } from "./redis-server.ts"

const REPO = fileURLToPath(new URL("../", import.meta.url))
const FIXTURE = join(REPO, "test", "fixtures", "tau2")
const scratch = mkdtempSync(join(tmpdir(), "smurfs-tau2-queue-"))
const { start, killAll } = cliProcesses()
const unavailable = redisUnavailable()

type Action = { name: string; arguments: Record<string, unknown> }
/** The fixture's tasks 0 and 36: each one's reason for calling (in the user's prompt) and gold actions. */
const TASKS = (
  JSON.parse(readFileSync(join(FIXTURE, "data", "tau2", "domains", "retail", "tasks.json"), "utf8")) as Array<{
    id: string
    user_scenario: { instructions: { reason_for_call: string } }
    evaluation_criteria: { actions: Array<Action> }
  }>
).filter((t) => t.id === "0" || t.id === "36")

type Body = { model: string; messages: Array<{ role: string; content?: string | null }>; tools?: unknown }

/**
 * The user names its task (found by its reason for calling in its prompt), then stops once answered (each reply a little late, so that a kill lands mid-run); tau2-agent takes
 * that task's gold actions, one per step; chat only talks. Replies depend on the request alone.
 */
const reply = (body: Body) => {
  const delayMs = 40
  const texts = body.messages.map((m) => m.content ?? "").join("\n")
  if (body.model === "user") {
    const task = TASKS.find((t) => texts.includes(t.user_scenario.instructions.reason_for_call))
    const heard = body.messages.filter((m) => m.role === "user").length
    return {
      content: heard >= 2 ? "Thanks! ###STOP###" : `Please help with my request (case ${task?.id ?? "?"}).`,
      delayMs
    }
  }
  if (body.tools !== undefined) {
    const task = TASKS.find((t) => texts.includes(`(case ${t.id})`))
    const done = body.messages.filter((m) => m.role === "tool").length
    const next = task?.evaluation_criteria.actions[done]
    return next
      ? { content: "", toolCalls: [{ name: next.name, arguments: next.arguments }], delayMs }
      : { content: "Done.", delayMs }
  }
  // smurfs chat's intent step: small talk, answered directly
  return { content: JSON.stringify({ intent: "small_talk", reply: "Hello! How can I help?" }), delayMs }
}

const recordsOf = (out: string) =>
  ["chat", "tau2-agent"].flatMap((m) => {
    const dir = join(out, "tasks", m, "retail")
    // (a record being written is a temp file beside it until it is whole)
    return existsSync(dir) ? readdirSync(dir).flatMap((f) => (f.endsWith(".json") ? [`${m}/${f}`] : [])) : []
  })

describe.skipIf(unavailable !== undefined)(
  `bench --tau2 on the queue${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  { timeout: 120_000 },
  () => {
    let redis: RedisServer
    let server: FakeOpenAI
    beforeAll(async () => {
      redis = await startRedis()
      server = await startFakeOpenAI({ models: ["agent", "user"], chat: (body: Body) => reply(body) })
    })
    afterEach(() => killAll())
    afterAll(async () => {
      await server?.close()
      await redis?.stop()
      rmSync(scratch, { recursive: true, force: true })
    })

    it("runs each conversation as a job on a worker with its own checkout; records, labels, resume after kill -9 and compare as in process", async () => {
      const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test" }
      const out = join(scratch, "run")
      const worker = start(["worker", "--queue", redis.url, "--concurrency", "2", "--tau2", FIXTURE], env)
      const args = [
        "bench",
        ...["--queue", redis.url, "--tau2", FIXTURE, "--domain", "retail", "--method", "chat,tau2-agent"],
        ...["--ids", "0,36", "--model", "openai:agent", "--user-model", "openai:user", "--trials", "2"],
        ...["--out", out]
      ]
      // the coordinator is killed once the first conversation is on disk, and resumed: the run's jobs are taken up again
      const first = start(args, env)
      const deadline = Date.now() + 60_000
      while (recordsOf(out).length === 0 && first.child.exitCode === null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20))
      first.child.kill("SIGKILL")
      await first.exited
      const before = recordsOf(out).length
      expect(before, first.stderr).toBeGreaterThan(0)
      expect(before).toBeLessThan(8)
      const coordinator = start([...args, "--resume"], env)
      expect(await coordinator.exited, coordinator.stderr).toBe(0)
      expect(coordinator.stderr).toContain(`${before} already done`)
      // 2 tasks x 2 trials x 2 agents, each its own record, written by the coordinator
      expect(recordsOf(out).sort()).toEqual(
        ["chat", "tau2-agent"].flatMap((m) =>
          ["0.json", "0.run1.json", "36.json", "36.run1.json"].map((f) => `${m}/${f}`)
        )
      )
      const record = JSON.parse(readFileSync(join(out, "tasks", "tau2-agent", "retail", "36.run1.json"), "utf8"))
      // the worker ran trial 1 of task 36 on its checkout with the run's user model: the gold write, reward 1
      expect(record).toMatchObject({
        run: 1,
        finishType: "give_answer",
        benchmark: { name: "tau2", trial: 1, userModel: "openai:user", reward: { reward: 1 } }
      })
      expect(record.benchmark.messages.some((m: { role: string }) => m.role === "tool")).toBe(true)
      // every reward is labelled as in process, for compare
      const labels = join(out, "eval", "tau2", "pass")
      expect(existsSync(labels), `no labels in ${out}/eval`).toBe(true)
      expect(worker.stderr).toMatch(/tau2-agent retail\/36: answered/)

      // resumed again: nothing is left to run
      const resumed = start([...args, "--resume"], env)
      expect(await resumed.exited, resumed.stderr).toBe(0)
      expect(resumed.stderr).toContain("8 already done")

      const compare = spawnSync(process.execPath, [join(REPO, "bin", "smurfs.js"), "compare", out], {
        cwd: REPO,
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1", SMURFS_MODEL: "" }
      })
      expect(compare.status, compare.stderr).toBe(0)
      expect(compare.stdout).toMatch(/tau2-agent\s.*\sretail\s+tau2\s+4\/4\s+100\.0 .*\s100\.0 \(k=2\)/)
      expect(compare.stdout).toMatch(/chat\s.*\sretail\s+tau2\s+4\/4\s+0\.0 .*\s0\.0 \(k=2\)/)
      expect(compare.stdout).toMatch(/run\/tau2-agent \(retail, tau2\): .*pass\^1 100\.0 .*, pass\^2 100\.0 /)
    })
  }
)
