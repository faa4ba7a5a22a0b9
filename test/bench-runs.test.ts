// Repeated agent runs (`bench --runs N`, issue 31 §1): one record per run with its own seed, resumable, judged run by run.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { identicalRunsNote, runBenchSettings } from "../bench/app.ts"
import { evaluatePass, evaluateWin } from "../bench/eval/evaluate.ts"
import { PassLabels, passLabelsPath, WinVerdicts, winVerdictsPath } from "../bench/eval/labels.ts"
import { loadSource, sourceProfile } from "../bench/eval/sources.ts"
import { silentProgress } from "../bench/progress.ts"
import { collectResults } from "../bench/report/results.ts"
import { type RunConfig, runConfigPath, runOf, TaskRecord, taskRecordPath } from "../bench/run-format.ts"
import { settingsDiff } from "../bench/run-settings.ts"
import { type RunnerOptions, runBench } from "../bench/runner.ts"
import { agentRunsOf, benchSettings } from "../bench/settings.ts"
import { react } from "../src/agents/react.ts"
import { LanguageModel } from "../src/llm/language-model.ts"
import { makeScriptedModel } from "../src/llm/scripted.ts"
import { MINI_DATA } from "./data.ts"
import { echoQueries, echoRunConfig, echoScript, echoTaskOf, GROUP } from "./echo-bench.ts"

const dirs: Array<string> = []
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), "smurfs-runs-"))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const queries = echoQueries(["1", "2"])
const taskOf = echoTaskOf
const config = echoRunConfig(2)

/** A scripted model that notes the seed of every request it answers. */
const seedNoting = (seeds: Array<number | null | undefined>) =>
  Layer.sync(LanguageModel, () => {
    const inner = makeScriptedModel(echoScript as never)
    return LanguageModel.of({
      info: inner.info,
      generate: (request) => Effect.suspend(() => (seeds.push(request.options?.seed), inner.generate(request)))
    })
  })

const options = (runDir: string, extra: Partial<RunnerOptions> = {}): RunnerOptions => ({
  runDir,
  config,
  queries,
  methods: [{ name: "react", method: react() }],
  taskOf,
  concurrency: 2,
  resume: false,
  modelSpec: "scripted:test",
  ...extra
})

const readRecord = (path: string) => TaskRecord.parse(JSON.parse(readFileSync(path, "utf8")))

describe("repeated agent runs", () => {
  it("--runs 3: each task solved three times, each run its own record with its own seed on every request", async () => {
    const runDir = join(temp(), "run")
    const seeds: Array<number | undefined> = []
    const agentRuns = agentRunsOf({ runs: 3, seed: 7, seeds: undefined })
    expect(agentRuns).toEqual([
      { run: 0, seed: 7 },
      { run: 1, seed: 8 },
      { run: 2, seed: 9 }
    ])
    const exit = await Effect.runPromiseExit(
      runBench(options(runDir, { agentRuns })).pipe(Effect.provide(seedNoting(seeds)))
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    if (Exit.isSuccess(exit)) expect(exit.value).toMatchObject({ total: 6, recorded: 6, skipped: 0 })
    // run 0 where a run of one writes it, runs 1 and 2 beside it
    expect(readdirSync(join(runDir, "tasks", "react", GROUP)).sort()).toEqual([
      "1.json",
      "1.run1.json",
      "1.run2.json",
      "2.json",
      "2.run1.json",
      "2.run2.json"
    ])
    for (const { run, seed } of agentRuns)
      for (const q of queries)
        expect(readRecord(taskRecordPath(runDir, "react", GROUP, q.id, run))).toMatchObject({ taskId: q.id, run, seed })
    // every request of a run carried that run's seed: 2 tasks x 2 requests per run
    expect(seeds.filter((s) => s === 7)).toHaveLength(4)
    expect(seeds.filter((s) => s === 8)).toHaveLength(4)
    expect(seeds.filter((s) => s === 9)).toHaveLength(4)
    // StableToolBench's converted file holds run 0's answers (one per task)
    const converted = JSON.parse(readFileSync(join(runDir, "converted", "react", `${GROUP}.json`), "utf8")) as object
    expect(Object.keys(converted).sort()).toEqual(["1", "2"])
  })

  it("a run of one keeps the old layout: no run or seed in its records, the model's own seed", async () => {
    const runDir = join(temp(), "run")
    const seeds: Array<number | undefined> = []
    const exit = await Effect.runPromiseExit(runBench(options(runDir)).pipe(Effect.provide(seedNoting(seeds))))
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(readdirSync(join(runDir, "tasks", "react", GROUP)).sort()).toEqual(["1.json", "2.json"])
    const record = readRecord(taskRecordPath(runDir, "react", GROUP, "1"))
    expect(record.run).toBeUndefined()
    expect(record.seed).toBeUndefined()
    expect(runOf(record)).toBe(0)
    expect(seeds.every((s) => s === undefined)).toBe(true)
  })

  it("--resume finishes the missing runs only", async () => {
    const runDir = join(temp(), "run")
    const first: Array<number | undefined> = []
    const agentRuns = agentRunsOf({ runs: 2, seed: 1, seeds: undefined })
    await Effect.runPromise(runBench(options(runDir, { agentRuns })).pipe(Effect.provide(seedNoting(first))))
    // a run's record is lost (a kill mid-run): only it is redone, with its own seed
    rmSync(taskRecordPath(runDir, "react", GROUP, "2", 1))
    const again: Array<number | undefined> = []
    const exit = await Effect.runPromiseExit(
      runBench(options(runDir, { agentRuns, resume: true })).pipe(Effect.provide(seedNoting(again)))
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    if (Exit.isSuccess(exit)) expect(exit.value).toMatchObject({ total: 4, skipped: 3, recorded: 1 })
    expect(again).toEqual([2, 2])
    expect(readRecord(taskRecordPath(runDir, "react", GROUP, "2", 1))).toMatchObject({ run: 1, seed: 2 })
  })

  it("a resume may add runs that continue the run's seeds; other seeds are a difference", () => {
    const recorded: RunConfig = { ...config, options: { seed: 42 } }
    expect(settingsDiff(recorded, { ...config, options: { seed: 42, runs: [42, 43, 44] } })).toEqual([])
    expect(
      settingsDiff({ ...config, options: { seed: 42, runs: [42, 43] } }, { ...config, options: { seed: 42 } })
    ).toEqual([])
    expect(settingsDiff(recorded, { ...config, options: { seed: 42, runs: [5, 6] } })).toEqual([
      "agent runs (--runs / --seeds): the run has [42], this command asks for [5,6]"
    ])
  })

  it("--seeds gives each run its seed; --runs and --seeds must agree and seeds must differ", () => {
    expect(agentRunsOf(benchSettings({ out: "x", seeds: [5, 11] }))).toEqual([
      { run: 0, seed: 5 },
      { run: 1, seed: 11 }
    ])
    expect(() => benchSettings({ out: "x", runs: 3, seeds: [1, 2] })).toThrow(/--runs 3 and --seeds/)
    expect(() => benchSettings({ out: "x", seeds: [1, 1] })).toThrow(/its own seed/)
  })

  it("notes that runs at temperature 0 are identical unless the server samples, and not when they sample", () => {
    expect(identicalRunsNote(benchSettings({ out: "x", runs: 3 }))).toMatch(
      /temperature 0.*identical unless the server samples/
    )
    expect(identicalRunsNote(benchSettings({ out: "x", runs: 3, temperature: 0.7 }))).toBeUndefined()
    expect(identicalRunsNote(benchSettings({ out: "x" }))).toBeUndefined()
  })

  it("bench with the sim model on the mini data: eval judges every run, results lists each run's labels", async () => {
    const out = join(temp(), "run")
    const settings = benchSettings({
      out,
      data: MINI_DATA.path,
      model: "sim",
      groups: [GROUP],
      limit: 2,
      methods: ["react"],
      runs: 2
    })
    const outcome = await Effect.runPromise(runBenchSettings(settings, silentProgress))
    expect(outcome.kind).toBe("ran")
    const runJson = JSON.parse(readFileSync(runConfigPath(out), "utf8")) as RunConfig
    expect(runJson.options["runs"]).toEqual([42, 43])
    const source = loadSource(out)
    expect(source.entries.map((e) => [e.taskId, runOf(e)])).toHaveLength(4)
    expect(new Set(source.entries.map((e) => runOf(e)))).toEqual(new Set([0, 1]))
    // a judge that says Solved for run 0 and Unsolved for run 1: the labels land apart
    const summary = await Effect.runPromise(
      evaluatePass(source.entries, {
        store: out,
        judge: "test-judge",
        k: 1,
        // labels keyed by the run's profile, as `smurfs eval` keys them (results reads them by it)
        profile: sourceProfile(out),
        decider: {
          pass: (job) =>
            Effect.succeed({
              decision: {
                label: runOf(job.input) === 0 ? ("Solved" as const) : ("Unsolved" as const),
                reason: `run ${runOf(job.input)}`,
                stage: "rule" as const
              }
            }),
          round: () => Effect.die("no rounds")
        }
      })
    )
    expect(summary).toMatchObject({ judged: 4, failed: [] })
    const taskId = source.entries[0]!.taskId
    const run1 = PassLabels.parse(
      JSON.parse(readFileSync(passLabelsPath(out, "test-judge", "react", GROUP, taskId, 1), "utf8"))
    )
    expect(run1).toMatchObject({ agentRun: 1, runs: { "0": { label: "Unsolved" } } })
    expect(existsSync(passLabelsPath(out, "test-judge", "react", GROUP, taskId))).toBe(true)
    // win rounds: candidate run r against the reference's run r, else its run 0 (a reference of one run)
    const reference = source.entries.filter((e) => runOf(e) === 0)
    const rounds: Array<[string, number, number]> = []
    const win = await Effect.runPromise(
      evaluateWin(source.entries, reference, {
        store: out,
        judge: "test-judge",
        k: 1,
        profile: sourceProfile(out),
        referenceProfile: sourceProfile(out),
        referenceName: "ref",
        referenceSource: out,
        referenceMethod: "react",
        referenceInStore: true,
        decider: {
          pass: () => Effect.die("labels are stored"),
          round: (job) =>
            Effect.sync(() => {
              rounds.push([job.candidate!.taskId, runOf(job.candidate!), runOf(job.reference!)])
              return {
                decision: {
                  winner: "candidate" as const,
                  order: ["candidate", "reference"],
                  stage: "judge" as const,
                  reason: "r"
                }
              }
            })
        }
      })
    )
    expect(win).toMatchObject({ judged: 4, failed: [] })
    expect(rounds.sort()).toEqual(
      [
        [taskId, 0, 0],
        [taskId, 1, 0],
        [source.entries[2]!.taskId, 0, 0],
        [source.entries[2]!.taskId, 1, 0]
      ].sort()
    )
    const verdicts = WinVerdicts.parse(
      JSON.parse(readFileSync(winVerdictsPath(out, "test-judge", "ref", "react", GROUP, taskId, 1), "utf8"))
    )
    expect(verdicts).toMatchObject({ agentRun: 1, rounds: { "0": { winner: "candidate" } } })
    const results = collectResults(out)
    expect(results.map((r) => [r.taskId, r.run ?? 0, r.labels[0]?.label])).toEqual([
      [results[0]!.taskId, 0, "Solved"],
      [results[0]!.taskId, 1, "Unsolved"],
      [results[2]!.taskId, 0, "Solved"],
      [results[2]!.taskId, 1, "Unsolved"]
    ])
  })
})
