// Benchmark runs that never lie (spawned CLI): server failures are `error` and exit 4, --resume redoes them and checks settings, one writer per run.
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { TaskRecord } from "../bench/run-format.ts"
import { ExitCode } from "../src/cli/exit-codes.ts"
import { MINI_DATA } from "./data.ts"
import type { FakeServer, Step } from "./fake-servers/core.ts"
import { startFakeOpenAI } from "./fake-servers/openai.ts"

const REPO = fileURLToPath(new URL("../", import.meta.url))
const DATA = MINI_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-server-failures-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const servers: Array<FakeServer> = []
afterEach(async () => void (await Promise.all(servers.splice(0).map((s) => s.close()))))

interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

const start = (
  args: ReadonlyArray<string>,
  env: Record<string, string>
): { child: ChildProcess; done: Promise<Ran>; stderr: () => string } => {
  const child = spawn(process.execPath, ["bin/smurfs.js", ...args], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: "1", SMURFS_MODEL: "", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
  child.stdout!.resume()
  const done = new Promise<Ran>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stderr })))
  return { child, done, stderr: () => stderr }
}
const smurfs = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => start(args, env).done

/** A model that finishes at once: ReAct's Finish with an answer. */
const finishing = (body: any): Step =>
  (body.tools ?? []).some((t: any) => t.function?.name === "Finish")
    ? { toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "the answer" } }] }
    : "the answer"
const server = async (chat: (body: any, i: number) => Step) => {
  const s = await startFakeOpenAI({ chat })
  servers.push(s)
  return s
}
const chatCalls = (s: FakeServer) => s.requests.filter((r) => r.path.endsWith("/chat/completions")).length

const recordsOf = (out: string) => {
  const dir = join(out, "tasks", "react", "G1_instruction")
  return existsSync(dir)
    ? readdirSync(dir)
        .sort()
        .map((f) => TaskRecord.parse(JSON.parse(readFileSync(join(dir, f), "utf8"))))
    : []
}
const benchArgs = (out: string, more: ReadonlyArray<string> = []) => [
  "bench",
  "--data",
  DATA,
  "--group",
  "G1_instruction",
  "--limit",
  "4",
  "--method",
  "react",
  "--env",
  "offline",
  "--model",
  "openai:qwen2.5:7b",
  "--concurrency",
  "1",
  "--out",
  out,
  ...more
]

describe("server failures in a bench are `error`, never give_up", () => {
  it("a wrong OPENAI_BASE_URL (every call 404) exits 4 with what to check; --resume against a working server completes those tasks", async () => {
    const out = join(scratch, "wrong-url")
    const s = await server(finishing)
    // the server's root instead of its /v1: every chat request is a 404 "unknown route"
    const first = await smurfs(benchArgs(out), { OPENAI_BASE_URL: s.url })
    expect(first.code, first.stderr).toBe(ExitCode.ModelUnavailable)
    expect(first.stderr).toContain("looks down")
    expect(first.stderr).toContain("smurfs doctor --model openai:qwen2.5:7b")
    expect(first.stderr).toContain("OPENAI_BASE_URL")
    expect(first.stderr).toContain("--resume")
    const failed = recordsOf(out)
    expect(failed.length).toBeGreaterThanOrEqual(3)
    for (const r of failed) expect(r).toMatchObject({ finishType: "error", errorTag: "ModelServerError" })
    // one call per task: the first 404 ends it
    expect(s.requests.filter((r) => r.path === "/chat/completions")).toHaveLength(failed.length)
    const resumed = await smurfs(benchArgs(out, ["--resume"]), { OPENAI_BASE_URL: s.baseURL })
    expect(resumed.code, resumed.stderr).toBe(ExitCode.Ok)
    const done = recordsOf(out)
    expect(done).toHaveLength(4)
    for (const r of done) expect(r).toMatchObject({ finishType: "give_answer", finalAnswer: "the answer" })
    const converted = JSON.parse(readFileSync(join(out, "converted", "react", "G1_instruction.json"), "utf8")) as object
    expect(Object.keys(converted)).toHaveLength(4)
  }, 300_000)

  it("a hung server (accepts, never answers): each task ends at its first timeout, and the run stops with exit 4", async () => {
    const out = join(scratch, "hung")
    const s = await server(() => ({ fault: "hang" }))
    const started = Date.now()
    const r = await smurfs(benchArgs(out, ["--timeout", "300"]), { OPENAI_BASE_URL: s.baseURL })
    expect(r.code, r.stderr).toBe(ExitCode.ModelUnavailable)
    expect(r.stderr).toContain("within 300 ms")
    const failed = recordsOf(out)
    expect(failed).toHaveLength(3)
    for (const t of failed) expect(t).toMatchObject({ finishType: "error", errorTag: "Timeout" })
    // the first timed-out call of a task marks the endpoint suspect: no second call in that task
    expect(chatCalls(s)).toBe(3)
    expect(Date.now() - started).toBeLessThan(30_000)
  }, 300_000)

  it("a task whose server kept failing (past its retries) among successes is redone by --resume, and the run exits 1 saying so", async () => {
    const out = join(scratch, "one-failure")
    // the second task's every request fails with a 500: its call is sent three times, the task run three times
    // (two retries within the run), then it is an `error` record (one task at a time, one call each)
    const s = await server((body, i) =>
      i >= 1 && i <= 9
        ? { fault: "status", status: 500, message: "llama runner process has terminated" }
        : finishing(body)
    )
    const first = await smurfs(benchArgs(out), { OPENAI_BASE_URL: s.baseURL })
    expect(first.code, first.stderr).toBe(ExitCode.Failure)
    expect(first.stderr).toContain("llama runner process has terminated")
    expect(first.stderr).toContain("--resume")
    expect(
      recordsOf(out)
        .map((t) => t.finishType)
        .sort()
    ).toEqual(["error", "give_answer", "give_answer", "give_answer"])
    const resumed = await smurfs(benchArgs(out, ["--resume"]), { OPENAI_BASE_URL: s.baseURL })
    expect(resumed.code, resumed.stderr).toBe(ExitCode.Ok)
    expect(resumed.stderr).toContain("3 already done")
    expect(recordsOf(out).map((t) => t.finishType)).toEqual([
      "give_answer",
      "give_answer",
      "give_answer",
      "give_answer"
    ])
    // the redone task's record keeps its three failed attempts, each with its failed call and two retried answers
    const redone = recordsOf(out).find((t) => t.earlierAttempts !== undefined)
    expect(redone?.earlierAttempts?.map((a) => [a.redoneBy, a.failedCalls, a.serverRetries])).toEqual([
      ["retry", 1, 2],
      ["retry", 1, 2],
      ["resume", 1, 2]
    ])
  }, 300_000)
})

describe("--resume checks the run's settings", () => {
  it("refuses another model (naming the difference), another --limit, and continues with --force", async () => {
    const out = join(scratch, "settings")
    const s = await server(finishing)
    const env = { OPENAI_BASE_URL: s.baseURL }
    expect(
      (
        await smurfs(
          benchArgs(out).map((a) => (a === "4" ? "2" : a)),
          env
        )
      ).code
    ).toBe(ExitCode.Ok)
    const calls = chatCalls(s)
    const other = await smurfs(
      [
        ...benchArgs(out, ["--resume"]).map((a) =>
          a === "4" ? "2" : a === "openai:qwen2.5:7b" ? "openai:llama3.1:8b" : a
        )
      ],
      env
    )
    expect(other.code).toBe(ExitCode.BadInput)
    expect(other.stderr).toContain('model: the run has "openai:qwen2.5:7b", this command asks for "openai:llama3.1:8b"')
    expect(other.stderr).toContain("--force")
    const limit = await smurfs(benchArgs(out, ["--resume"]), env)
    expect(limit.code).toBe(ExitCode.BadInput)
    expect(limit.stderr).toContain("--limit: the run has 2, this command asks for 4")
    expect(chatCalls(s)).toBe(calls)
    const forced = await smurfs(benchArgs(out, ["--resume", "--force"]), env)
    expect(forced.code, forced.stderr).toBe(ExitCode.Ok)
    expect(recordsOf(out)).toHaveLength(4)
    const config = JSON.parse(readFileSync(join(out, "run.json"), "utf8"))
    expect(config.limit).toBe(2)
    expect(config.options.forcedResumes[0].differences).toEqual(["--limit: the run has 2, this command asks for 4"])
  }, 300_000)
})

describe("one writer per run directory", () => {
  it("a second bench on the same --out is refused while the first runs; after kill -9 of the first, its lock does not block", async () => {
    const out = join(scratch, "two-writers")
    const hung = await server(() => ({ fault: "hang" }))
    const first = start(benchArgs(out, ["--timeout", "60000"]), { OPENAI_BASE_URL: hung.baseURL })
    try {
      // the first writer holds the lock once it waits on the model
      const deadline = Date.now() + 20_000
      while (chatCalls(hung) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
      expect(chatCalls(hung)).toBe(1)
      const lock = JSON.parse(readFileSync(join(out, "run.lock"), "utf8"))
      expect(lock.pid).toBe(first.child.pid)
      const second = await smurfs(benchArgs(out, ["--resume"]), { OPENAI_BASE_URL: hung.baseURL })
      expect(second.code).toBe(ExitCode.BadInput)
      expect(second.stderr).toContain(`another smurfs bench is writing to this run directory (pid ${first.child.pid}`)
      const fresh = await smurfs(benchArgs(out), { OPENAI_BASE_URL: hung.baseURL })
      expect(fresh.code).toBe(ExitCode.BadInput)
      expect(fresh.stderr).toContain("another smurfs bench is writing")
    } finally {
      first.child.kill("SIGKILL")
    }
    expect((await first.done).signal).toBe("SIGKILL")
    // the lock of a dead process stays on disk but blocks nobody
    expect(existsSync(join(out, "run.lock"))).toBe(true)
    const s = await server(finishing)
    const resumed = await smurfs(benchArgs(out, ["--resume"]), { OPENAI_BASE_URL: s.baseURL })
    expect(resumed.code, resumed.stderr).toBe(ExitCode.Ok)
    // taken over with a message naming the owner it replaces
    expect(resumed.stderr).toContain(
      `took over the run directory's lock ${join(out, "run.lock")} from smurfs bench pid ${first.child.pid} on ${hostname()}, since `
    )
    expect(resumed.stderr).toContain("that process is no longer running")
    expect(recordsOf(out)).toHaveLength(4)
    expect(existsSync(join(out, "run.lock"))).toBe(false)
  }, 300_000)
})

describe("smurfs run stops at the server's failure", () => {
  it("a wrong OPENAI_BASE_URL (404): exit 4 after one call, saying what to check", async () => {
    const s = await server(finishing)
    const r = await smurfs(["run", "What is 2 + 3?", "--model", "openai:qwen2.5:7b"], { OPENAI_BASE_URL: s.url })
    expect(r.code, r.stderr).toBe(ExitCode.ModelUnavailable)
    expect(r.stderr).toContain("OPENAI_BASE_URL")
    expect(r.stderr).toContain("smurfs doctor")
    expect(s.requests.filter((q) => q.path === "/chat/completions")).toHaveLength(1)
  }, 300_000)

  it("a hung server: one timed-out retry, then exit 4 with what to check", async () => {
    const s = await server(() => ({ fault: "hang" }))
    const r = await smurfs(["run", "What is 2 + 3?", "--model", "openai:qwen2.5:7b", "--timeout", "300"], {
      OPENAI_BASE_URL: s.baseURL
    })
    expect(r.code, r.stderr).toBe(ExitCode.ModelUnavailable)
    expect(r.stderr).toContain("sent no reply within 300 ms, twice")
    expect(r.stderr).toContain("--timeout")
    expect(chatCalls(s)).toBe(2)
  }, 300_000)
})
