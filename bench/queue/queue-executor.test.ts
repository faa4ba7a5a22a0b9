// The coordinator's queue executor and a worker, in-process, on a real redis-server: server failures, duplicates.
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { smurfs } from "../../src/agents/smurfs.ts"
import { ModelUnreachable } from "../../src/llm/errors.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { scriptedLayer } from "../../src/llm/scripted.ts"
import { makeToolLibrary } from "../../src/tools/library.ts"
import { type RedisServer, redisUnavailable, startRedis } from "../../test/redis-server.ts"
import type { BenchQuery } from "../datasets.ts"
import type { TaskJob } from "../execute-task.ts"
import { benchSettings, jobSettingsOf } from "../settings.ts"
import { makeQueueExecutor, QUEUE_DEFAULTS } from "./queue-executor.ts"
import { type Session, startWorker } from "./worker.ts"

/** The run options the coordinator's jobs carry. */
const SETTINGS = jobSettingsOf(benchSettings({ out: "/run", model: "ollama:m" }))

const query = (id: string): BenchQuery => ({ group: "G1_instruction", id, query: `question ${id}`, apiList: [], relevant: [] })

/** A model server that refuses every connection. */
const deadServer = Layer.succeed(LanguageModel, {
  info: { spec: "ollama:m", provider: "ollama", model: "m", contextTokens: 8192, supportsTools: true },
  generate: () => Effect.fail(new ModelUnreachable({ provider: "ollama", host: "http://127.0.0.1:9" }))
})

/** A model that answers every role at once. */
const answering = scriptedLayer({ $cycle: true, planner: [{ subtasks: ["answer"] }], "*": [{ answer: "42", thought: "t", tool: "none", status: "solved", reason: "r" }] } as never)

const sessionWith = (layer: Layer.Layer<LanguageModel>, runs: { count: number }, planner = false) => async (): Promise<Session> => ({
  runtime: ManagedRuntime.make(layer),
  methods: new Map([["smurfs", (task) => Effect.suspend(() => (runs.count++, smurfs({ planner, verifier: false })(task)))]]),
  taskOf: (q) => Effect.succeed({ id: q.id, query: q.query, tools: makeToolLibrary("empty", []) }),
  modelSpec: "ollama:m",
  fullTrace: false
})

const unavailable = redisUnavailable()

describe.skipIf(unavailable !== undefined)(`the queue executor with a worker${unavailable ? ` (skipped: ${unavailable})` : ""}`, () => {
  let redis: RedisServer
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(async () => {
    await redis?.stop()
  })

  const execute = (runId: string, jobs: ReadonlyArray<TaskJob>, settle: boolean) =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const executor = yield* makeQueueExecutor({ ...QUEUE_DEFAULTS, queueUrl: redis.url, runId, settings: SETTINGS, attempts: 3, backoffMs: 50, sweepMs: 200 })
          return yield* Effect.forEach(jobs, (job) => Effect.tap(executor.execute(job), () => (settle && executor.settled ? executor.settled(job) : Effect.void)), { concurrency: "unbounded" })
        })
      )
    )

  it("retries a task whose model server fails with backoff, then reports it as a server failure, never as a give-up", async () => {
    const runs = { count: 0 }
    const lines: Array<string> = []
    const { close } = startWorker({ queueUrl: redis.url, concurrency: 2, lockMs: 5000, sessionOf: sessionWith(deadServer, runs), log: (l) => void lines.push(l) })
    try {
      const [result] = await execute("dead-server", [{ method: "smurfs", query: query("1") }], true)
      expect(result?.kind).toBe("record")
      const record = result?.kind === "record" ? result.record : undefined
      expect(record?.finishType).toBe("error")
      expect(record?.errorTag).toBe("ModelUnreachable")
      expect(runs.count).toBe(3) // every attempt ran
      expect(lines.filter((l) => l.includes("the queue retries it"))).toHaveLength(2)
    } finally {
      await close()
    }
  })

  it("takes a result that is already in the queue without running the task again", async () => {
    const runs = { count: 0 }
    const { close } = startWorker({ queueUrl: redis.url, concurrency: 2, lockMs: 5000, sessionOf: sessionWith(answering, runs), log: () => {} })
    try {
      const jobs = [{ method: "smurfs", query: query("7") }, { method: "smurfs", query: query("8") }]
      // a coordinator that stops before writing: the results stay queued
      const first = await execute("twice", jobs, false)
      // the next coordinator of the same run asks again: it gets the same records, nothing runs twice
      const second = await execute("twice", jobs, true)
      expect(runs.count).toBe(2)
      expect(second.map((r) => (r.kind === "record" ? r.record.finalAnswer : r.error))).toEqual(first.map((r) => (r.kind === "record" ? r.record.finalAnswer : r.error)))
      expect(second.every((r) => r.kind === "record" && r.record.finishType === "give_answer")).toBe(true)
      // once settled, the jobs are gone: a third ask runs them anew
      await execute("twice", jobs, true)
      expect(runs.count).toBe(4)
    } finally {
      await close()
    }
  })

  it("sends a running task's model calls and tokens to the coordinator while it runs", async () => {
    const runs = { count: 0 }
    // a plan of three subtasks, every call 60 ms: the task is still running when its worker reports
    const threeSubtasks = scriptedLayer({ $cycle: true, planner: [{ subtasks: ["a", "b", "c"] }], "*": [{ answer: "42", thought: "t", tool: "none", status: "solved", reason: "r" }] } as never)
    const slow = Layer.effect(
      LanguageModel,
      Effect.map(Effect.service(LanguageModel), (model) => ({ ...model, generate: (request: Parameters<typeof model.generate>[0]) => Effect.delay(model.generate(request), "60 millis") }))
    ).pipe(Layer.provide(threeSubtasks))
    const { close } = startWorker({ queueUrl: redis.url, concurrency: 1, lockMs: 5000, progressMs: 40, sessionOf: sessionWith(slow, runs, true), log: () => {} })
    const reports: Array<{ id: string; modelCalls: number; tokens: number }> = []
    try {
      const [result] = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const executor = yield* makeQueueExecutor({
              ...QUEUE_DEFAULTS,
              queueUrl: redis.url,
              runId: "live-counts",
              settings: SETTINGS,
              sweepMs: 200,
              onTaskCalls: (job, calls) => void reports.push({ id: job.query.id, ...calls })
            })
            return yield* Effect.forEach([{ method: "smurfs", query: query("live") }], (job) => executor.execute(job))
          })
        )
      )
      const record = result?.kind === "record" ? result.record : undefined
      expect(record?.finishType).toBe("give_answer")
      // reports came while the task ran: each counts fewer calls than the whole task, and they only grow
      expect(reports.length).toBeGreaterThan(0)
      expect(reports.every((r) => r.id === "live" && r.modelCalls > 0 && r.modelCalls <= record!.totals.modelCalls)).toBe(true)
      expect(reports.map((r) => r.modelCalls)).toEqual([...reports.map((r) => r.modelCalls)].sort((x, y) => x - y))
      expect(reports[0]!.modelCalls).toBeLessThan(record!.totals.modelCalls)
    } finally {
      await close()
    }
  })

  it("says how to start Redis when the queue cannot be reached", async () => {
    const error = await Effect.runPromise(
      Effect.flip(Effect.scoped(makeQueueExecutor({ ...QUEUE_DEFAULTS, queueUrl: "redis://127.0.0.1:9/0", runId: "x", settings: SETTINGS, connectTimeoutMs: 500 })))
    )
    expect(error._tag).toBe("QueueUnavailable")
    expect(error.message).toContain("Start Redis")
  })
})
