// What a queued τ² conversation carries to a worker (JobSettings' tau2 part) and how the worker reads it: the domain,
// the user's model and whose texts prompt them travel; the checkout is the worker's own, never a path from the job.
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { workerBenchSettings } from "../../app.ts"
import { benchSettings, JobSettings, jobSettingsOf } from "../../settings.ts"
import { tau2JobSettings } from "./harness.ts"
import { tau2SessionOf } from "./worker-session.ts"

const FIXTURE = fileURLToPath(new URL("../../../test/fixtures/tau2", import.meta.url))

const run = benchSettings({
  out: "/runs/t",
  tau2: "/home/me/tau2-bench",
  queue: "redis://127.0.0.1:6379/0",
  methods: ["chat", "tau2-agent"],
  userModel: "openai:gpt-4.1",
  taskSplit: "test",
  model: "ollama:qwen3:8b",
  stb: "/home/me/StableToolBench",
  runs: 2
})
const TEXTS = { agent: "tau2:/home/me/tau2-bench/src/tau2/agent/llm_agent.py", user: "smurfs" }
const own = { concurrency: 1, data: "/data", storeDir: "/tmp/store" }

describe("a τ² job's settings", () => {
  it("carry the domain, the user model and whose texts prompt them, and nothing of the coordinator's folders", () => {
    const job = tau2JobSettings(run, TEXTS)
    expect(job.tau2).toEqual({
      domain: "retail",
      userModel: "openai:gpt-4.1",
      taskSplit: "test",
      agentPrompt: "tau2",
      userGuidelines: "smurfs"
    })
    // a conversation sends no StableToolBench text: the worker needs no --stb for it
    expect(job.prompts).toBe("smurfs")
    expect(JSON.stringify(job)).not.toMatch(/\/home\/me|\/runs/)
    // the round trip through Redis (JSON) and the worker's allow-list gives the same settings back
    expect(JobSettings.parse(JSON.parse(JSON.stringify(job)))).toEqual(job)
  })

  it("are validated: a path, an unknown field or an unknown text source in them is refused", () => {
    const job = tau2JobSettings(run, TEXTS)
    expect(JobSettings.safeParse({ ...job, tau2: { ...job.tau2, dir: "/elsewhere" } }).success).toBe(false)
    expect(JobSettings.safeParse({ ...job, tau2: { ...job.tau2, agentPrompt: "mine" } }).success).toBe(false)
    expect(JobSettings.safeParse({ ...job, tau2: { ...job.tau2, domain: "" } }).success).toBe(false)
    const { userModel: _, ...noUser } = job.tau2!
    expect(JobSettings.safeParse({ ...job, tau2: noUser }).success).toBe(false)
  })

  it("run on the worker's own checkout, with the run's user model or the worker's own", () => {
    const job = tau2JobSettings(run, TEXTS)
    const settings = workerBenchSettings(job, { ...own, tau2: "/srv/tau2" })
    expect(settings).toMatchObject({
      tau2: "/srv/tau2",
      domain: "retail",
      userModel: "openai:gpt-4.1",
      taskSplit: "test",
      model: "ollama:qwen3:8b",
      methods: ["tau2-agent", "chat"]
    })
    expect(workerBenchSettings(job, { ...own, tau2: "/srv/tau2", userModel: "ollama:user" }).userModel).toBe(
      "ollama:user"
    )
    expect(() => workerBenchSettings(job, own)).toThrow(/smurfs worker --tau2 <dir>/)
    // a user model that names the coordinator's file is never read from a job
    const scripted = { ...job, tau2: { ...job.tau2!, userModel: "scripted:/home/me/user.json" } }
    expect(() => workerBenchSettings(scripted, { ...own, tau2: "/srv/tau2" })).toThrow(/its own --user-model/)
    expect(workerBenchSettings(scripted, { ...own, tau2: "/srv/tau2", userModel: "sim" }).userModel).toBe("sim")
  })

  it("a StableToolBench job carries none, and --queue with --tau2 is taken while --replay-from is not", () => {
    expect("tau2" in jobSettingsOf(benchSettings({ out: "/r" }))).toBe(false)
    expect(benchSettings({ out: "/r", tau2: "/t", userModel: "sim", queue: "redis://h:6379" }).queue).toBe(
      "redis://h:6379"
    )
    expect(() => benchSettings({ out: "/r", tau2: "/t", userModel: "sim", replayFrom: "/old" })).toThrow(
      /--replay-from is for StableToolBench/
    )
    // the natural-language assertions' judge runs in the coordinator's process only: refused rather than left unjudged
    expect(() =>
      benchSettings({ out: "/r", tau2: "/t", userModel: "sim", judge: "sim", queue: "redis://h:6379" })
    ).toThrow(/run without --queue to judge them/)
    expect(benchSettings({ out: "/r", tau2: "/t", userModel: "sim", judge: "sim" }).judge).toBe("sim")
  })

  it("a worker whose checkout gives other texts than the run's refuses the run", async () => {
    const job = tau2JobSettings({ ...run, tau2: FIXTURE }, TEXTS)
    const settings = workerBenchSettings(job, { ...own, tau2: FIXTURE, model: "sim", userModel: "sim" })
    // the fixture holds the domain's data only: our own texts, where the run prompts the agent with τ²'s
    await expect(tau2SessionOf(settings, job.tau2!)).rejects.toThrow(/τ²'s own .* this worker's --tau2/)
    const ours = tau2JobSettings({ ...run, tau2: FIXTURE }, { agent: "smurfs", user: "smurfs" })
    const session = await tau2SessionOf(settings, ours.tau2!)
    try {
      expect(session.runJob).toBeDefined()
      // a task id its checkout lacks is no conversation: the job is refused, never run on another task
      const result = await session.runtime.runPromise(
        session.runJob!({
          method: "tau2-agent",
          query: { group: "retail", id: "9999", query: "?", apiList: [], relevant: [] }
        })
      )
      expect(result).toMatchObject({ kind: "crashed", error: expect.stringMatching(/has no retail task 9999/) })
    } finally {
      await session.runtime.dispose()
    }
  })
})
