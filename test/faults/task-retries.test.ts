// Transient server faults in a bench (issue 36): a 5xx, a cut or reset reply is sent again by the task, a task it still
// ends is run again within the run, and a task redone by --resume keeps its failed attempts; every fault stays in a
// record (before, the first such fault ended the task, and a resume replaced its `error` record and its faults).
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import type { BenchQuery } from "../../bench/datasets.ts"
import { RUN_FORMAT_VERSION, type RunConfig, TaskRecord, taskRecordPath } from "../../bench/run-format.ts"
import { type RunnerOptions, runBench } from "../../bench/runner.ts"
import { react } from "../../src/agents/react.ts"
import { ModelServerError, ModelUnreachable } from "../../src/llm/errors.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { makeScriptedModel } from "../../src/llm/scripted.ts"
import { modelLayer } from "../../src/llm/spec.ts"
import { isKind } from "../../src/trace/events.ts"
import { startFakeOpenAI } from "../fake-servers/openai.ts"

const dirs: Array<string> = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const tempRun = () => {
  const dir = mkdtempSync(join(tmpdir(), "smurfs-task-retries-"))
  dirs.push(dir)
  return join(dir, "run")
}

const GROUP = "G1_instruction"
const queryOf = (id: string): BenchQuery => ({ group: GROUP, id, query: `question ${id}`, apiList: [], relevant: [] })
const query = queryOf("1")
const config: RunConfig = {
  formatVersion: RUN_FORMAT_VERSION,
  packageVersion: "test",
  createdAt: "2026-01-01T00:00:00.000Z",
  data: "memory",
  groups: [GROUP],
  methods: ["react"],
  model: "scripted:test",
  envs: ["offline"],
  toolset: "all",
  concurrency: 1,
  options: {}
}
const options = (runDir: string, extra: Partial<RunnerOptions> = {}): RunnerOptions => ({
  runDir,
  config,
  queries: [query],
  methods: [{ name: "react", method: react() }],
  taskOf: (q) => ({ id: q.id, query: q.query, tools: { name: q.id, tools: [] } }),
  concurrency: 1,
  resume: false,
  modelSpec: "scripted:test",
  stopAfterUnreachable: 100,
  ...extra
})

/** A server whose answers `faulty(i)` (i: the request's index) are an HTTP 500 or a reset; the others end the task. */
const server = (faulty: (i: number) => "500" | "reset" | undefined) =>
  Layer.sync(LanguageModel, () => {
    const inner = makeScriptedModel({
      $cycle: true,
      "*": [{ toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }] }]
    } as never)
    let calls = 0
    return LanguageModel.of({
      info: inner.info,
      generate: (request) =>
        Effect.suspend(() => {
          const fault = faulty(calls++)
          if (fault === "500")
            return Effect.fail(new ModelServerError({ status: 500, host: "h", detail: "llama runner has terminated" }))
          if (fault === "reset")
            return Effect.fail(new ModelUnreachable({ provider: "openai", host: "h", cause: "ECONNRESET" }))
          return inner.generate(request)
        })
    })
  })

const record = (runDir: string, id = "1") =>
  TaskRecord.parse(JSON.parse(readFileSync(taskRecordPath(runDir, "react", GROUP, id), "utf8")))
const retriedEvents = (r: TaskRecord) =>
  r.events.filter((e) => isKind(e, "model_call") && e.data.ok === false && e.data.retried === true).length

describe("transient server faults in a bench", () => {
  it("a 500 and a reset are sent again by the task, which answers, each counted in its record", async () => {
    const runDir = tempRun()
    const exit = await Effect.runPromiseExit(
      runBench(options(runDir)).pipe(Effect.provide(server((i) => (i === 0 ? "500" : i === 1 ? "reset" : undefined))))
    )
    expect(Exit.isSuccess(exit) && exit.value).toMatchObject({ answered: 1, errors: 0 })
    const r = record(runDir)
    expect(r.finishType).toBe("give_answer")
    expect(r.totals.serverRetries).toBe(2)
    expect(retriedEvents(r)).toBe(2)
    expect(r.earlierAttempts).toBeUndefined()
  })

  it("a task the faults still end is run again within the run, and its record keeps the failed attempt", async () => {
    const runDir = tempRun()
    // the first attempt's call fails three times (past its two retries); the second attempt answers
    const exit = await Effect.runPromiseExit(
      runBench(options(runDir)).pipe(Effect.provide(server((i) => (i < 3 ? "500" : undefined))))
    )
    expect(Exit.isSuccess(exit) && exit.value).toMatchObject({ answered: 1, errors: 0 })
    const r = record(runDir)
    expect(r.finishType).toBe("give_answer")
    expect(r.earlierAttempts).toEqual([
      expect.objectContaining({
        redoneBy: "retry",
        errorTag: "ModelServerError",
        failedCalls: 1,
        serverRetries: 2
      })
    ])
  })

  it("a task redone by --resume keeps the attempts of its `error` record: no fault disappears", async () => {
    const runDir = tempRun()
    // every answer fails: the task ends as `error` (no retry within the run here, to be quick)
    const failed = await Effect.runPromiseExit(
      runBench(options(runDir, { taskRetries: 0 })).pipe(Effect.provide(server(() => "500")))
    )
    expect(Exit.isSuccess(failed) && failed.value).toMatchObject({ errors: 1 })
    expect(record(runDir)).toMatchObject({ finishType: "error", totals: { serverRetries: 2 } })
    const resumed = await Effect.runPromiseExit(
      runBench(options(runDir, { resume: true })).pipe(Effect.provide(server(() => undefined)))
    )
    expect(Exit.isSuccess(resumed) && resumed.value).toMatchObject({ answered: 1, errors: 0 })
    const r = record(runDir)
    expect(r.finishType).toBe("give_answer")
    expect(r.earlierAttempts).toEqual([
      expect.objectContaining({ redoneBy: "resume", errorTag: "ModelServerError", failedCalls: 1, serverRetries: 2 })
    ])
  })

  it("a request the HTTP client sent again after a reset of its kept-alive connection is in the record too", async () => {
    const runDir = tempRun()
    const finish = { toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "done" } }] }
    // the first task's request opens the connection; the second task's, written on it, is reset before any reply
    // byte, and the client sends it once more on a new connection (as for a connection the server had closed)
    const server = await startFakeOpenAI({
      chat: (_body: unknown, i: number) => (i === 1 ? { fault: "reset" } : finish)
    })
    try {
      const exit = await Effect.runPromiseExit(
        runBench(options(runDir, { queries: [queryOf("1"), queryOf("2")] })).pipe(
          Effect.provide(modelLayer("openai:qwen2.5:7b", { baseURL: `${server.url}/v1`, apiKey: "k" }))
        )
      )
      expect(Exit.isSuccess(exit) && exit.value).toMatchObject({ answered: 2, errors: 0 })
      const retried = ["1", "2"].map((id) => record(runDir, id).totals.serverRetries ?? 0)
      expect(retried.reduce((a, b) => a + b, 0)).toBe(1)
      const event = ["1", "2"]
        .flatMap((id) => record(runDir, id).events)
        .find((e) => isKind(e, "model_call") && e.data.retried === true)
      expect(event && isKind(event, "model_call") && event.data.error).toContain("reset the connection")
    } finally {
      await server.close()
    }
  })
})
