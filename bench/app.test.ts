// The bench application without the CLI: settings built directly, a run, a summary value.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { MINI_DATA } from "../test/data.ts"
import { checkBenchSettings, runBenchSettings, summaryValue, workerBenchSettings } from "./app.ts"
import { silentProgress } from "./progress.ts"
import { benchSettings, jobSettingsOf } from "./settings.ts"

// the repository's few tasks of each group: the test needs some ToolBench data, not the full set
const DATA = MINI_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-app-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe("the bench application", () => {
  it("runs from settings a library builds, and returns its summary as a value", async () => {
    const out = join(scratch, "run")
    const settings = benchSettings({
      out,
      data: DATA,
      model: "sim",
      groups: ["G1_instruction"],
      limit: 2,
      methods: ["react", "smurfs"],
      // one task at a time sends requests: the run goes through, each task in its turn
      lanes: 1
    })
    const outcome = await Effect.runPromise(runBenchSettings(settings, silentProgress))
    expect(outcome.kind).toBe("ran")
    if (outcome.kind !== "ran") return
    expect(summaryValue(settings, outcome)).toMatchObject({
      runDir: out,
      total: 4,
      recorded: 4,
      errors: 0,
      notRecorded: 0,
      next: `smurfs eval --run ${out} --judge <judge model spec>`
    })
    expect(readdirSync(join(out, "tasks", "react", "G1_instruction"))).toHaveLength(2)
    const config = JSON.parse(readFileSync(join(out, "run.json"), "utf8")) as {
      methods: Array<string>
      toolset: string
      options: Record<string, unknown>
    }
    expect(config).toMatchObject({ methods: ["react", "smurfs"], toolset: "all" })
    expect(config.options).toMatchObject({ tries: 1, budget: 200, prompts: "smurfs", lanes: 1, laneGraceMs: null })
  })

  it("says once that tasks wait for a model lane, and runs them all", async () => {
    const out = join(scratch, "laned")
    const settings = benchSettings({
      out,
      data: DATA,
      // a reply takes a while, so that two tasks are in flight at once
      model: "sim:latency=20ms",
      groups: ["G1_instruction"],
      limit: 3,
      methods: ["react"],
      concurrency: 3,
      lanes: 1
    })
    const said: Array<string> = []
    const outcome = await Effect.runPromise(
      runBenchSettings(settings, { ...silentProgress, log: (text) => void said.push(text) })
    )
    expect(outcome.kind === "ran" && summaryValue(settings, outcome)).toMatchObject({ recorded: 3, errors: 0 })
    expect(said.filter((line) => line.startsWith("model lanes:"))).toEqual([
      "model lanes: the requests of 1 task at a time go to the server (--lanes), the others wait for a lane; --lanes off sends every task's at once"
    ])
  })

  it("reads the texts the settings name before a run: a missing checkout stops it at once, naming what to give", () => {
    expect(() => checkBenchSettings(benchSettings({ out: join(scratch, "x"), methods: ["smurfs"] }))).not.toThrow()
    expect(() =>
      checkBenchSettings(benchSettings({ out: join(scratch, "x"), methods: ["smurfs"], profile: "reference" }))
    ).toThrow(/--smurfs-src <dir>/)
    expect(() =>
      checkBenchSettings(benchSettings({ out: join(scratch, "x"), methods: ["react"], stb: "/nonexistent/stb" }))
    ).toThrow(/not found/)
  })

  it("a worker's settings: the job's run options, the worker's own model server and folders", () => {
    const job = jobSettingsOf(
      benchSettings({
        out: "/coordinator/run",
        model: "ollama:m",
        tries: 2,
        callCache: "/coordinator/cache",
        endpoints: ["http://gpu:1"]
      })
    )
    const settings = workerBenchSettings(job, { concurrency: 3, data: "/worker/data", storeDir: "/worker/sim" })
    expect(settings).toMatchObject({
      model: "ollama:m",
      tries: 2,
      data: "/worker/data",
      storeDir: "/worker/sim",
      concurrency: 3
    })
    expect(settings.callCache).toBeUndefined()
    expect(settings.endpoints).toBeUndefined()
    // lanes are the worker's (its server's slots): never in a job
    expect("lanes" in job).toBe(false)
    expect(settings.lanes).toBe("auto")
    expect(workerBenchSettings(job, { concurrency: 3, data: "/d", storeDir: "/s", lanes: 2 }).lanes).toBe(2)
    expect(workerBenchSettings(job, { model: "sim", concurrency: 1, data: "/d", storeDir: "/s" }).model).toBe("sim")
    const scripted = jobSettingsOf(benchSettings({ out: "/r", model: "scripted:/coordinator/replies.json" }))
    expect(() => workerBenchSettings(scripted, { concurrency: 1, data: "/d", storeDir: "/s" })).toThrow(
      /its own --model/
    )
    const stb = jobSettingsOf(benchSettings({ out: "/r", model: "sim", stb: "/coordinator/stb" }))
    expect(() => workerBenchSettings(stb, { concurrency: 1, data: "/d", storeDir: "/s" })).toThrow(/--stb/)
    expect(existsSync("/coordinator")).toBe(false)
  })
})
