// `smurfs bench --tau2` end to end on the fixture: chat and tau2-agent, 2 trials, killed with SIGKILL mid-run, resumed,
// and `compare` showing both rows with pass^1 and pass^2. The agent and the user are one fake OpenAI-compatible server
// (two model names) that answers from the request alone, so a resumed run gets the same replies.
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { cliProcesses } from "./cli-processes.ts"
import { type FakeOpenAI, startFakeOpenAI } from "./fake-servers/openai.ts"

const REPO = fileURLToPath(new URL("../", import.meta.url))
const FIXTURE = join(REPO, "test", "fixtures", "tau2")
const scratch = mkdtempSync(join(tmpdir(), "smurfs-tau2-bench-"))
const { start, killAll } = cliProcesses()
let server: FakeOpenAI | undefined

afterAll(async () => {
  killAll()
  await server?.close()
  rmSync(scratch, { recursive: true, force: true })
})

/** Task 0's gold actions, from the fixture: what tau2-agent calls, one per step. */
const gold = (
  JSON.parse(readFileSync(join(FIXTURE, "data", "tau2", "domains", "retail", "tasks.json"), "utf8")) as Array<{
    id: string
    evaluation_criteria: { actions: Array<{ name: string; arguments: Record<string, unknown> }> }
  }>
).find((t) => t.id === "0")!.evaluation_criteria.actions

type Body = { model: string; messages: Array<{ role: string }>; tools?: unknown; response_format?: unknown }

/** The user says what it wants, then stops once the agent has answered; the agent (tau2-agent) takes the gold actions. */
const reply = (body: Body) => {
  const delayMs = 60
  if (body.model === "user") {
    // the user sees the agent's texts as "user" messages: its greeting, then the answer
    const heard = body.messages.filter((m) => m.role === "user").length
    return { content: heard >= 2 ? "Thanks! ###STOP###" : "I want to exchange two items of order #W2378156.", delayMs }
  }
  if (body.tools !== undefined) {
    const done = body.messages.filter((m) => m.role === "tool").length
    const next = gold[done]
    return next
      ? { content: "", toolCalls: [{ name: next.name, arguments: next.arguments }], delayMs }
      : { content: "The exchange is requested.", delayMs }
  }
  // smurfs chat's intent step: small talk, answered directly
  return { content: JSON.stringify({ intent: "small_talk", reply: "Hello! How can I help?" }), delayMs }
}

const records = (out: string) =>
  ["chat", "tau2-agent"].flatMap((m) => {
    const dir = join(out, "tasks", m, "retail")
    return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")) : []
  })

describe("smurfs bench --tau2", () => {
  it("runs chat and tau2-agent for 2 trials, survives kill -9, resumes, and compare shows pass^1 and pass^2 of both", async () => {
    server = await startFakeOpenAI({ models: ["agent", "user"], chat: (body: Body) => reply(body) })
    const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test" }
    const out = join(scratch, "run")
    const args = [
      "bench",
      ...["--tau2", FIXTURE, "--domain", "retail", "--method", "chat,tau2-agent", "--ids", "0"],
      ...["--model", "openai:agent", "--user-model", "openai:user", "--trials", "2", "--concurrency", "1"],
      ...["--out", out]
    ]
    const first = start(args, env)
    // killed once the first conversation is on disk, before the last
    const deadline = Date.now() + 60_000
    while (records(out).length === 0 && first.child.exitCode === null && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20))
    first.child.kill("SIGKILL")
    await first.exited
    const before = records(out).length
    expect(before, first.stderr).toBeGreaterThan(0)
    expect(before).toBeLessThan(4)

    const resumed = start([...args, "--resume"], env)
    expect(await resumed.exited, resumed.stderr).toBe(0)
    expect(records(out)).toHaveLength(4)
    expect(resumed.stderr).toContain(`${before} already done`)

    const compare = spawnSync(process.execPath, [join(REPO, "bin", "smurfs.js"), "compare", out], {
      cwd: REPO,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1", SMURFS_MODEL: "" }
    })
    expect(compare.status, compare.stderr).toBe(0)
    // one row per agent, judged by τ²'s reward, with pass^k over the 2 trials: tau2-agent takes the gold actions
    // every time (pass^1 = pass^2 = 100), chat only talks (0)
    expect(compare.stdout).toMatch(/tau2-agent\s.*\sretail\s+tau2\s+2\/2\s+100\.0 .*\s100\.0 \(k=2\)/)
    expect(compare.stdout).toMatch(/chat\s.*\sretail\s+tau2\s+2\/2\s+0\.0 .*\s0\.0 \(k=2\)/)
    // the statistics below the table: pass^1 and pass^2 of each row
    expect(compare.stdout).toMatch(/run\/tau2-agent \(retail, tau2\): .*pass\^1 100\.0 .*, pass\^2 100\.0 /)
    expect(compare.stdout).toMatch(/run\/chat \(retail, tau2\): .*pass\^1 0\.0 .*, pass\^2 0\.0 /)
    // the two agents' rewards paired task by task, as two judged methods' labels are
    expect(compare.stdout).toMatch(/retail, tau2, pass: run\/chat − run\/tau2-agent = -100\.0 /)
  }, 120_000)
})
