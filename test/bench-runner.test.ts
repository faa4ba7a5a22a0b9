import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { Effect, Exit, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { RUN_FORMAT_VERSION, runConfigPath, TaskRecord, taskRecordPath } from "../bench/run-format.ts"
import { type MethodEntry, type RunnerOptions, runBench } from "../bench/runner.ts"
import { react } from "../src/agents/react.ts"
import type { Method, Task } from "../src/agents/task.ts"
import { ModelUnreachable } from "../src/llm/errors.ts"
import { LanguageModel } from "../src/llm/language-model.ts"
import { makeScriptedModel, scriptedLayer } from "../src/llm/scripted.ts"
import { type AtomicWriteFs, nodeAtomicWriteFs } from "../src/trace/atomic-write.ts"
import { readConverted } from "../src/trace/converters/stabletoolbench.ts"
import { isKind } from "../src/trace/events.ts"
import { answeredTrajectory } from "./answering-method.ts"
import { diskWith } from "./disk.ts"
import { echoQueries, echoRunConfig, echoScript, echoTaskOf, GROUP } from "./echo-bench.ts"

const dirs: Array<string> = []
const tempRun = () => {
  const dir = mkdtempSync(join(tmpdir(), "smurfs-run-"))
  dirs.push(dir)
  return join(dir, "run")
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const queries = echoQueries(["1", "2", "3", "4", "5", "6"])
const taskOf = echoTaskOf
const config = echoRunConfig(3)

/** A method that counts how often each task ran, answering with the task id. */
const counting =
  (counts: Map<string, number>): Method =>
  (task) =>
    Effect.sync(() => {
      counts.set(task.id, (counts.get(task.id) ?? 0) + 1)
      return answeredTrajectory(task, `answer ${task.id}`)
    })

const options = (runDir: string, methods: Array<MethodEntry>, extra: Partial<RunnerOptions> = {}): RunnerOptions => ({
  runDir,
  config,
  queries,
  methods,
  taskOf,
  concurrency: 3,
  resume: false,
  modelSpec: "scripted:test",
  ...extra
})

const run = (o: RunnerOptions, layer: Layer.Layer<LanguageModel> = scriptedLayer(echoScript as never)) =>
  Effect.runPromiseExit(runBench(o).pipe(Effect.provide(layer)))

describe("bench runner", () => {
  it("writes one valid record per task and method, run.json, and converted files", async () => {
    const runDir = tempRun()
    const exit = await run(
      options(runDir, [
        { name: "react", method: react() },
        { name: "count", method: counting(new Map()) }
      ])
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    if (!Exit.isSuccess(exit)) return
    expect(exit.value).toMatchObject({ total: 12, skipped: 0, recorded: 12, answered: 12, notRecorded: 0 })
    for (const method of ["react", "count"])
      for (const q of queries) {
        const record = TaskRecord.parse(JSON.parse(readFileSync(taskRecordPath(runDir, method, GROUP, q.id), "utf8")))
        expect(record).toMatchObject({
          taskId: q.id,
          method,
          group: GROUP,
          model: "scripted:test",
          availableTools: ["echo_for_echo"]
        })
      }
    expect(readdirSync(join(runDir, "tasks", "react", GROUP)).sort()).toEqual(queries.map((q) => `${q.id}.json`).sort())
    expect(JSON.parse(readFileSync(runConfigPath(runDir), "utf8"))).toMatchObject({
      formatVersion: RUN_FORMAT_VERSION,
      methods: ["react"]
    })
    const converted = await Effect.runPromise(readConverted(join(runDir, "converted", "react", `${GROUP}.json`)))
    expect(Object.keys(converted)).toEqual(queries.map((q) => q.id))
    expect(converted["1"]!.answer.final_answer).toContain('"final_answer": "done"')
    expect(converted["1"]!.available_tools.map((t) => t.name)).toEqual(["echo_for_echo", "Finish"])
    // records do not keep prompts unless asked
    const record = JSON.parse(readFileSync(taskRecordPath(runDir, "react", GROUP, "1"), "utf8")) as TaskRecord
    expect(record.events.some((e) => isKind(e, "model_call") && "messages" in e.data)).toBe(false)
  })

  it("resumes after a crash: finished tasks are skipped, a torn record and stray temp files are redone once", async () => {
    const runDir = tempRun()
    const first = new Map<string, number>()
    await run(options(runDir, [{ name: "count", method: counting(first) }], { queries: queries.slice(0, 3) }))
    // what a kill -9 can leave: a temp file of an unfinished write, and (from other tools) a torn record
    writeFileSync(join(runDir, "tasks", "count", GROUP, "4.json.tmp-123-abc"), '{"formatVersion": 1, "taskId"')
    writeFileSync(taskRecordPath(runDir, "count", GROUP, "3"), '{"formatVersion": 1, "taskId": "3"')
    const second = new Map<string, number>()
    const exit = await run(options(runDir, [{ name: "count", method: counting(second) }], { resume: true }))
    expect(Exit.isSuccess(exit) && exit.value).toMatchObject({ total: 6, skipped: 2, recorded: 4 })
    expect([...second.entries()].sort()).toEqual([
      ["3", 1],
      ["4", 1],
      ["5", 1],
      ["6", 1]
    ])
    const files = readdirSync(join(runDir, "tasks", "count", GROUP)).sort()
    expect(files).toEqual(["1.json", "2.json", "3.json", "4.json", "5.json", "6.json"])
    for (const f of files)
      expect(
        TaskRecord.safeParse(JSON.parse(readFileSync(join(runDir, "tasks", "count", GROUP, f), "utf8"))).success
      ).toBe(true)
    // a second resume has nothing left to do
    const third = new Map<string, number>()
    const again = await run(options(runDir, [{ name: "count", method: counting(third) }], { resume: true }))
    expect(Exit.isSuccess(again) && again.value).toMatchObject({ skipped: 6, recorded: 0 })
    expect(third.size).toBe(0)
  })

  it("refuses a resume that adds a method unless forced, then adds it to run.json with the difference", async () => {
    const runDir = tempRun()
    await run(
      options(runDir, [{ name: "count", method: counting(new Map()) }], {
        queries: queries.slice(0, 1),
        config: { ...config, methods: ["count"] }
      })
    )
    const later = new Map<string, number>()
    const both = [
      { name: "count", method: counting(new Map()) },
      { name: "later", method: counting(later) }
    ]
    const refused = await run(
      options(runDir, both, {
        queries: queries.slice(0, 1),
        resume: true,
        config: { ...config, methods: ["count", "later"] }
      })
    )
    expect(Exit.isFailure(refused) && JSON.stringify(refused.cause)).toContain(
      'methods (--method): the run has [\\"count\\"], this command asks for [\\"count\\",\\"later\\"]'
    )
    expect(later.size).toBe(0)
    await run(
      options(runDir, both, {
        queries: queries.slice(0, 1),
        resume: true,
        force: true,
        config: { ...config, methods: ["count", "later"] }
      })
    )
    const written = JSON.parse(readFileSync(runConfigPath(runDir), "utf8"))
    expect(written.methods).toEqual(["count", "later"])
    expect(written.options.forcedResumes[0].differences[0]).toContain("methods (--method)")
    expect([...later.keys()]).toEqual(["1"])
  })

  it("refuses a non-empty run directory without --resume, and a run written by a newer format", async () => {
    const runDir = tempRun()
    await run(options(runDir, [{ name: "count", method: counting(new Map()) }], { queries: queries.slice(0, 1) }))
    const refused = await run(options(runDir, [{ name: "count", method: counting(new Map()) }]))
    expect(Exit.isFailure(refused) && JSON.stringify(refused.cause)).toContain("RunDirError")
    expect(
      String(
        Exit.isFailure(refused) &&
          (refused.cause as unknown as { reasons: Array<{ error: Error }> }).reasons[0]!.error.message
      )
    ).toContain("--resume")
    writeFileSync(runConfigPath(runDir), JSON.stringify({ ...config, formatVersion: RUN_FORMAT_VERSION + 1 }))
    const counts = new Map<string, number>()
    const newer = await run(options(runDir, [{ name: "count", method: counting(counts) }], { resume: true }))
    expect(Exit.isFailure(newer)).toBe(true)
    expect(JSON.stringify(Exit.isFailure(newer) && newer.cause)).toContain("newer smurfs")
    expect(counts.size).toBe(0)
  })

  it("stops when the model server is down, keeps finished work and records the failed tasks as error, which a resume redoes", async () => {
    const runDir = tempRun()
    // the server answers the first two tasks, then goes away
    const flaky = Layer.sync(LanguageModel, () => {
      const inner = makeScriptedModel(echoScript as never)
      return LanguageModel.of({
        info: inner.info,
        generate: (request) =>
          /question [12]\b/.test(request.messages.map((m) => m.content).join("\n"))
            ? inner.generate(request)
            : Effect.fail(new ModelUnreachable({ provider: "openai", host: "http://127.0.0.1:9" }))
      })
    })
    const exit = await run(options(runDir, [{ name: "react", method: react() }], { concurrency: 1 }), flaky)
    expect(Exit.isFailure(exit)).toBe(true)
    expect(JSON.stringify(Exit.isFailure(exit) && exit.cause)).toContain("ModelServerDown")
    const finish = (id: string) =>
      TaskRecord.parse(JSON.parse(readFileSync(taskRecordPath(runDir, "react", GROUP, id), "utf8")))
    const files = readdirSync(join(runDir, "tasks", "react", GROUP)).sort()
    // three server failures in a row stop the run; each is an `error` record, never a give-up
    expect(files).toEqual(["1.json", "2.json", "3.json", "4.json", "5.json"])
    expect(["1", "2"].map((id) => finish(id).finishType)).toEqual(["give_answer", "give_answer"])
    for (const id of ["3", "4", "5"])
      expect(finish(id)).toMatchObject({ finishType: "error", errorTag: "ModelUnreachable" })
    // the converted predictions hold only results
    expect(
      Object.keys(JSON.parse(readFileSync(join(runDir, "converted", "react", `${GROUP}.json`), "utf8")) as object)
    ).toEqual(["1", "2"])
    // resume with a working server: the error tasks and the missing one run
    const resumed = await run(options(runDir, [{ name: "react", method: react() }], { resume: true }))
    expect(Exit.isSuccess(resumed) && resumed.value).toMatchObject({
      skipped: 2,
      recorded: 4,
      errors: 0,
      notRecorded: 0
    })
    for (const id of ["3", "4", "5", "6"]) expect(finish(id).finishType).toBe("give_answer")
    expect(
      Object.keys(
        JSON.parse(readFileSync(join(runDir, "converted", "react", `${GROUP}.json`), "utf8")) as object
      ).sort()
    ).toEqual(["1", "2", "3", "4", "5", "6"])
  })
})

describe("bench runner memory", () => {
  // `gc` without --expose-gc on the test process: the flag set at run time, the function taken from a new context
  setFlagsFromString("--expose-gc")
  const gc = runInNewContext("gc") as () => void

  /** Whether `ref`'s task was collected within a few garbage collections: nothing of the run holds it any more. */
  const collected = (ref: WeakRef<Task>) =>
    Effect.gen(function* () {
      for (let i = 0; i < 30; i++) {
        gc()
        if (ref.deref() === undefined) return true
        yield* Effect.sleep(10)
      }
      return false
    })

  it("drops a query's task (its tools) once every method's record of it is written, not at the end of the run", async () => {
    const runDir = tempRun()
    const built = new Map<string, WeakRef<Task>>()
    const earlierKept: Array<string> = []
    // each task, before it answers, waits for the task two queries before it (both methods settled by then) to be collected
    const checking =
      (name: string): Method =>
      (task) =>
        Effect.gen(function* () {
          const earlier = built.get(String(Number(task.id) - 2))
          if (name === "b" && earlier !== undefined && !(yield* collected(earlier))) earlierKept.push(task.id)
          return answeredTrajectory(task, `answer ${task.id}`)
        })
    const exit = await run(
      options(
        runDir,
        [
          { name: "a", method: checking("a") },
          { name: "b", method: checking("b") }
        ],
        {
          concurrency: 1,
          taskOf: (q) => {
            const task = taskOf(q)
            built.set(q.id, new WeakRef(task))
            return task
          }
        }
      )
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    // every query from the third on looked; none found the task of two queries before still held
    expect(earlierKept).toEqual([])
    expect(built.size).toBe(queries.length)
  })
})

describe("bench runner and a slow or full disk", () => {
  /** A disk whose every write waits until `until` resolves; `log` gets the name of each file committed. */
  const slowDisk = (until: Promise<void>, log: Array<string>): AtomicWriteFs => ({
    ...diskWith({
      write: async (file, buffer, offset, length) => {
        await until
        return file.write(buffer, offset, length)
      }
    }),
    rename: async (from, to) => {
      await nodeAtomicWriteFs.rename(from, to)
      log.push(`written ${basename(to)}`)
    }
  })

  it("a task whose record is still being written gives its place to the next task (concurrency 1)", async () => {
    const log: Array<string> = []
    let open!: () => void
    const disk = new Promise<void>((resolve) => (open = resolve))
    // the second task's start opens the disk: had the first task kept its place until its record was written, the second could never start
    const method: Method = (task) =>
      Effect.sync(() => {
        log.push(`start ${task.id}`)
        if (log.filter((l) => l.startsWith("start")).length === 2) open()
        return {
          taskId: task.id,
          query: task.query,
          method: "count",
          model: "m",
          finalAnswer: "a",
          finishType: "give_answer" as const,
          events: [],
          totals: {
            modelCalls: 0,
            promptTokens: 0,
            completionTokens: 0,
            toolCalls: 0,
            backtracks: 0,
            wallMs: 0,
            guardrails: {}
          }
        }
      })
    const runDir = tempRun()
    const exit = await run(
      options(runDir, [{ name: "count", method }], {
        queries: queries.slice(0, 2),
        concurrency: 1,
        recordFs: slowDisk(disk, log)
      })
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    const [first, second] = log.filter((l) => l.startsWith("start")).map((l) => l.slice(6))
    expect(log.indexOf(`start ${second}`)).toBeLessThan(log.indexOf(`written ${first}.json`))
    expect(readdirSync(join(runDir, "tasks", "count", GROUP)).sort()).toEqual(["1.json", "2.json"])
  })

  it("a disk that stalls holds the finished records, not the tasks after them", async () => {
    const log: Array<string> = []
    let open!: () => void
    const disk = new Promise<void>((resolve) => (open = resolve))
    // the stall ends when the last task starts (or after 3 s, so a runner that waits for the disk still ends)
    const fallback = setTimeout(() => open(), 3000)
    const method: Method = (task) =>
      Effect.sync(() => {
        log.push(`start ${task.id}`)
        if (log.filter((l) => l.startsWith("start")).length === queries.length) open()
        return {
          taskId: task.id,
          query: task.query,
          method: "count",
          model: "m",
          finalAnswer: "a",
          finishType: "give_answer" as const,
          events: [],
          totals: {
            modelCalls: 0,
            promptTokens: 0,
            completionTokens: 0,
            toolCalls: 0,
            backtracks: 0,
            wallMs: 0,
            guardrails: {}
          }
        }
      })
    const runDir = tempRun()
    const exit = await run(
      options(runDir, [{ name: "count", method }], { concurrency: 1, recordFs: slowDisk(disk, log) })
    )
    clearTimeout(fallback)
    expect(Exit.isSuccess(exit)).toBe(true)
    // every task started before the first record was committed: the stalled writes held no slot
    const firstWrite = log.findIndex((l) => l.startsWith("written"))
    expect(log.slice(0, firstWrite).filter((l) => l.startsWith("start"))).toHaveLength(queries.length)
    expect(queries.length).toBeGreaterThan(2)
    expect(readdirSync(join(runDir, "tasks", "count", GROUP))).toHaveLength(queries.length)
  })

  it("a record the disk refuses (ENOSPC) stops the run with the disk-full message, and leaves no record or temp file", async () => {
    const full = diskWith({
      write: async () => Promise.reject(Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" }))
    })
    const runDir = tempRun()
    const exit = await run(
      options(runDir, [{ name: "count", method: counting(new Map()) }], { concurrency: 2, recordFs: full })
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(JSON.stringify(exit)).toContain("RunDirError")
    expect(JSON.stringify(exit)).toContain("the disk is full (ENOSPC)")
    const dir = join(runDir, "tasks", "count", GROUP)
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([])
  })
})
