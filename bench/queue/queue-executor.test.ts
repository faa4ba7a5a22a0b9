// The coordinator's queue executor and a worker, in-process, on a real redis-server: server failures, duplicates.

import { Worker } from "bullmq"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { smurfs } from "../../src/agents/smurfs.ts"
import { ModelUnreachable } from "../../src/llm/errors.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { scriptedLayer } from "../../src/llm/scripted.ts"
import { makeToolLibrary } from "../../src/tools/library.ts"
import { type RedisServer, redisUnavailable, startRedis } from "../../test/redis-server.ts"
import type { BenchQuery } from "../datasets.ts"
import { judgeInputFromRecord } from "../eval/judge-input.ts"
import { judgePrompts } from "../eval/judge-prompts.ts"
import { fakeRecord } from "../eval/test-fixtures.ts"
import type { TaskJob } from "../execute-task.ts"
import { benchSettings, jobSettingsOf } from "../settings.ts"
import { connectionOf, TASK_QUEUE } from "./connection.ts"
import { signatureOf, signedResultOf } from "./job.ts"
import { makeQueueDecider, startJudgeWorker } from "./judge-queue.ts"
import { makeQueueExecutor, QUEUE_DEFAULTS, type QueueExecutorSettings } from "./queue-executor.ts"
import { type Session, startWorker, type WorkerSettings } from "./worker.ts"

/** The run options the coordinator's jobs carry. */
const SETTINGS = jobSettingsOf(benchSettings({ out: "/run", model: "ollama:m" }))

const query = (id: string): BenchQuery => ({
  group: "G1_instruction",
  id,
  query: `question ${id}`,
  apiList: [],
  relevant: []
})

/** A model server that refuses every connection. */
const deadServer = Layer.succeed(LanguageModel, {
  info: { spec: "ollama:m", provider: "ollama", model: "m", contextTokens: 8192, supportsTools: true },
  generate: () => Effect.fail(new ModelUnreachable({ provider: "ollama", host: "http://127.0.0.1:9" }))
})

/** A model that answers every role at once. */
const answering = scriptedLayer({
  $cycle: true,
  planner: [{ subtasks: ["answer"] }],
  "*": [{ answer: "42", thought: "t", tool: "none", status: "solved", reason: "r" }]
} as never)

const sessionWith =
  (layer: Layer.Layer<LanguageModel>, runs: { count: number }, planner = false) =>
  async (): Promise<Session> => ({
    runtime: ManagedRuntime.make(layer),
    methods: new Map([
      ["smurfs", (task) => Effect.suspend(() => (runs.count++, smurfs({ planner, verifier: false })(task)))]
    ]),
    taskOf: (q) => Effect.succeed({ id: q.id, query: q.query, tools: makeToolLibrary("empty", []) }),
    modelSpec: "ollama:m",
    fullTrace: false
  })

const unavailable = redisUnavailable()

describe.skipIf(unavailable !== undefined)(
  `the queue executor with a worker${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  () => {
    let redis: RedisServer
    beforeAll(async () => {
      redis = await startRedis()
    })
    afterAll(async () => {
      await redis?.stop()
    })

    /** A worker on this Redis: one task at a time, a 5 s lock, no log unless given. */
    const workerWith = (settings: Partial<WorkerSettings> & Pick<WorkerSettings, "sessionOf">) =>
      startWorker({ queueUrl: redis.url, concurrency: 1, lockMs: 5000, log: () => {}, ...settings })

    /** A coordinator's executor on this Redis with the run's settings and a fast sweep. */
    const executorOf = (settings: Partial<QueueExecutorSettings> & Pick<QueueExecutorSettings, "runId">) =>
      makeQueueExecutor({ ...QUEUE_DEFAULTS, queueUrl: redis.url, settings: SETTINGS, sweepMs: 200, ...settings })

    const execute = (runId: string, jobs: ReadonlyArray<TaskJob>, settle: boolean) =>
      Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const executor = yield* executorOf({
              runId,
              attempts: 3,
              backoffMs: 50
            })
            return yield* Effect.forEach(
              jobs,
              (job) =>
                Effect.tap(executor.execute(job), () =>
                  settle && executor.settled ? executor.settled(job) : Effect.void
                ),
              { concurrency: "unbounded" }
            )
          })
        )
      )

    it("retries a task whose model server fails with backoff, then reports it as a server failure, never as a give-up", async () => {
      const runs = { count: 0 }
      const lines: Array<string> = []
      const { close } = workerWith({
        concurrency: 2,
        sessionOf: sessionWith(deadServer, runs),
        log: (l) => void lines.push(l)
      })
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
      const { close } = workerWith({
        concurrency: 2,
        sessionOf: sessionWith(answering, runs)
      })
      try {
        const jobs = [
          { method: "smurfs", query: query("7") },
          { method: "smurfs", query: query("8") }
        ]
        // a coordinator that stops before writing: the results stay queued
        const first = await execute("twice", jobs, false)
        // the next coordinator of the same run asks again: it gets the same records, nothing runs twice
        const second = await execute("twice", jobs, true)
        expect(runs.count).toBe(2)
        expect(second.map((r) => (r.kind === "record" ? r.record.finalAnswer : r.error))).toEqual(
          first.map((r) => (r.kind === "record" ? r.record.finalAnswer : r.error))
        )
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
      const threeSubtasks = scriptedLayer({
        $cycle: true,
        planner: [{ subtasks: ["a", "b", "c"] }],
        "*": [{ answer: "42", thought: "t", tool: "none", status: "solved", reason: "r" }]
      } as never)
      const slow = Layer.effect(
        LanguageModel,
        Effect.map(Effect.service(LanguageModel), (model) => ({
          ...model,
          generate: (request: Parameters<typeof model.generate>[0]) =>
            Effect.delay(model.generate(request), "60 millis")
        }))
      ).pipe(Layer.provide(threeSubtasks))
      const { close } = workerWith({
        progressMs: 40,
        sessionOf: sessionWith(slow, runs, true)
      })
      const reports: Array<{ id: string; modelCalls: number; tokens: number }> = []
      try {
        const [result] = await Effect.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              const executor = yield* executorOf({
                runId: "live-counts",
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
        expect(
          reports.every((r) => r.id === "live" && r.modelCalls > 0 && r.modelCalls <= record!.totals.modelCalls)
        ).toBe(true)
        expect(reports.map((r) => r.modelCalls)).toEqual([...reports.map((r) => r.modelCalls)].sort((x, y) => x - y))
        expect(reports[0]!.modelCalls).toBeLessThan(record!.totals.modelCalls)
      } finally {
        await close()
      }
    })

    it("refuses a result that is the record of another task than the job's", async () => {
      // a worker (or a hand-altered job) answering every job with the record of task "other"
      const forged = new Worker(
        TASK_QUEUE,
        async () => fakeRecord({ taskId: "other", query: "q", finalAnswer: "forged", calls: [] }),
        { connection: connectionOf(redis.url) }
      )
      try {
        const [result] = await execute("forged", [{ method: "smurfs", query: query("9") }], true)
        expect(result?.kind).toBe("crashed")
        expect(result?.kind === "crashed" ? result.error : "").toContain("the record of another task")
      } finally {
        await forged.close()
      }
    })

    it("with SMURFS_QUEUE_SECRET, takes only signed jobs and signed results of the same secret", async () => {
      const runs = { count: 0 }
      const lines: Array<string> = []
      const run = (runId: string, secret: string) =>
        Effect.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              const executor = yield* executorOf({
                runId,
                secret,
                attempts: 1,
                backoffMs: 50
              })
              return yield* executor.execute({ method: "smurfs", query: query("s") })
            })
          )
        )
      const worker = workerWith({
        secret: "shared",
        sessionOf: sessionWith(answering, runs),
        log: (l) => void lines.push(l)
      })
      try {
        const signed = await run("signed", "shared")
        expect(signed.kind === "record" && signed.record.finishType).toBe("give_answer")
        // a coordinator with another secret: the worker refuses its job before running anything, says so, and
        // leaves the job (never fails it for good) for a worker that holds that secret
        const other = run("other-secret", "not-shared")
        while (!lines.some((l) => l.includes("left in the queue"))) await new Promise((r) => setTimeout(r, 50))
        expect(lines.join("\n")).toMatch(/not signed with this worker's SMURFS_QUEUE_SECRET.*left in the queue/)
        expect(runs.count).toBe(1)
        const verifying = workerWith({
          secret: "not-shared",
          sessionOf: sessionWith(answering, runs)
        })
        try {
          const taken = await other
          expect(taken.kind === "record" && taken.record.finishType).toBe("give_answer")
          expect(runs.count).toBe(2)
        } finally {
          await verifying.close()
        }
      } finally {
        await worker.close()
      }
      // an unsigned result (a worker without the secret, or one written by hand) is refused by a coordinator that has one
      const unsigned = workerWith({
        secret: undefined,
        sessionOf: sessionWith(answering, runs)
      })
      try {
        const result = await run("unsigned", "shared")
        expect(result.kind).toBe("crashed")
        expect(result.kind === "crashed" ? result.error : "").toContain("without a valid signature")
      } finally {
        await unsigned.close()
      }
    })

    it("refuses a job of another settings version, and one whose settings name what a worker never takes from a job", async () => {
      const runs = { count: 0 }
      const lines: Array<string> = []
      const worker = workerWith({
        secret: undefined,
        sessionOf: sessionWith(answering, runs),
        log: (l) => void lines.push(l)
      })
      const { Queue, QueueEvents } = await import("bullmq")
      const queue = new Queue(TASK_QUEUE, { connection: connectionOf(redis.url) })
      const events = new QueueEvents(TASK_QUEUE, { connection: connectionOf(redis.url) })
      try {
        await events.waitUntilReady()
        const failed = (id: string) =>
          new Promise<string>((resolve) =>
            events.on("failed", ({ jobId, failedReason }) => jobId === id && resolve(failedReason))
          )
        const task = { runId: "r", method: "smurfs", query: query("v") }
        const newer = failed("newer")
        await queue.add("smurfs", { ...task, settingsVersion: 99, settings: SETTINGS }, { jobId: "newer" })
        expect(await newer).toContain("version 99")
        const local = failed("local")
        await queue.add(
          "smurfs",
          {
            ...task,
            settingsVersion: 1,
            settings: { ...SETTINGS, endpoints: ["http://127.0.0.1:9"], callCache: "/tmp/elsewhere" }
          },
          { jobId: "local" }
        )
        expect(await local).toContain("does not take from a job")
        expect(runs.count).toBe(0)
      } finally {
        await Promise.all([queue.close(), events.close()])
        await worker.close()
      }
    })

    it("a judge decision signed with another SMURFS_QUEUE_SECRET is refused by the worker, and comes back as a failure", async () => {
      const sessions = { count: 0 }
      const worker = startJudgeWorker({
        queueUrl: redis.url,
        concurrency: 1,
        lockMs: 5000,
        secret: "worker-secret",
        sessionOf: async () => (
          sessions.count++, { runtime: ManagedRuntime.make(answering), prompts: judgePrompts(undefined) }
        ),
        log: () => {}
      })
      try {
        const input = judgeInputFromRecord(fakeRecord({ taskId: "j", query: "q", finalAnswer: "a", calls: [] }))
        const outcome = await Effect.runPromise(
          Effect.scoped(
            Effect.flatMap(
              makeQueueDecider({
                ...QUEUE_DEFAULTS,
                queueUrl: redis.url,
                secret: "eval-secret",
                attempts: 1,
                sweepMs: 200
              }),
              (decider) => decider.pass({ kind: "pass", judge: "sim", prompts: "smurfs", seed: 1, input })
            )
          )
        )
        expect("error" in outcome ? outcome.error : "").toContain("SMURFS_QUEUE_SECRET")
        expect(sessions.count).toBe(0)
      } finally {
        await worker.close()
      }
    })

    it("with SMURFS_QUEUE_SECRET, a replayed job (the same id and nonce) is not run again, nor one copied under another id", async () => {
      const runs = { count: 0 }
      const lines: Array<string> = []
      const worker = (log: (line: string) => void) =>
        workerWith({
          secret: "shared",
          sessionOf: sessionWith(answering, runs),
          log
        })
      const { Queue, QueueEvents, Job } = await import("bullmq")
      const queue = new Queue(TASK_QUEUE, { connection: connectionOf(redis.url) })
      const events = new QueueEvents(TASK_QUEUE, { connection: connectionOf(redis.url) })
      const first = worker(() => {})
      let data: unknown
      try {
        await events.waitUntilReady()
        const [result] = await Effect.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              const executor = yield* executorOf({
                runId: "replayed",
                secret: "shared"
              })
              return yield* Effect.forEach([{ method: "smurfs", query: query("once") }], (job) => executor.execute(job))
            })
          )
        )
        expect(result?.kind === "record" && result.record.finishType).toBe("give_answer")
        expect(runs.count).toBe(1)
        // what the coordinator signed, as anyone who can read Redis sees it; then the job is done and removed
        const sent = await Job.fromId(queue, "replayed/smurfs/G1_instruction/once")
        data = sent?.data
        expect(data).toMatchObject({ jobId: "replayed/smurfs/G1_instruction/once", nonce: expect.any(String) })
        await sent?.remove()
      } finally {
        await first.close()
      }
      // another worker (nothing of the first run in its memory) is given the same signed job again
      const second = worker((l) => void lines.push(l))
      try {
        const outcome = (id: string) =>
          new Promise<string>((resolve) => {
            events.on("failed", ({ jobId, failedReason }) => jobId === id && resolve(`failed: ${failedReason}`))
            events.on("completed", ({ jobId }) => jobId === id && resolve("completed"))
          })
        const replayed = outcome("replayed/smurfs/G1_instruction/once")
        await queue.add("smurfs", data, { jobId: "replayed/smurfs/G1_instruction/once" })
        expect(await replayed).toContain("a replay, not run again")
        // the same signed job under another id
        const copied = outcome("replayed/smurfs/G1_instruction/copy")
        await queue.add("smurfs", data, { jobId: "replayed/smurfs/G1_instruction/copy" })
        expect(await copied).toContain("copied under another id")
        expect(runs.count).toBe(1)
        expect(lines.join("\n")).toMatch(/refused: .*a replay, not run again[\s\S]*refused: .*copied under another id/)
      } finally {
        await second.close()
        await Promise.all([queue.close(), events.close()])
      }
    })

    it("a result for a job already done is refused and said, never taken twice", async () => {
      const runs = { count: 0 }
      const refused: Array<string> = []
      const { Queue, Job } = await import("bullmq")
      const queue = new Queue(TASK_QUEUE, { connection: connectionOf(redis.url) })
      const id = "done-twice/smurfs/G1_instruction/d"
      const honest = workerWith({
        secret: "shared",
        sessionOf: sessionWith(answering, runs)
      })
      try {
        const results = await Effect.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              const executor = yield* executorOf({
                runId: "done-twice",
                secret: "shared",
                onRefused: (message) => void refused.push(message)
              })
              const job = { method: "smurfs", query: query("d") }
              const taken = yield* executor.execute(job)
              const data = yield* Effect.promise(async () => (await Job.fromId(queue, id))?.data)
              yield* executor.settled?.(job) ?? Effect.void
              yield* Effect.promise(() => honest.close())
              // the job is sent again and run again by a worker that keeps no record of it (another release, or
              // a second run), whose result is validly signed and differs
              const again = new Worker(
                TASK_QUEUE,
                async (j) => {
                  const result = fakeRecord({ taskId: "d", query: "question d", finalAnswer: "again", calls: [] })
                  const nonce = (j.data as { nonce: string }).nonce
                  return { result, signature: signatureOf("shared", signedResultOf(j.id, nonce, result)) }
                },
                { connection: connectionOf(redis.url) }
              )
              yield* Effect.promise(() => queue.add("smurfs", data, { jobId: id }))
              const until = Date.now() + 15_000
              while (refused.length === 0 && Date.now() < until) yield* Effect.sleep("50 millis")
              yield* Effect.promise(() => again.close())
              return [taken]
            })
          )
        )
        expect(results).toHaveLength(1)
        expect(results[0]?.kind === "record" && results[0].record.finalAnswer).toBe("42")
        expect(refused).toEqual([
          `a result came for job ${id}, which is already done (a replayed job, or one run twice): refused, not counted again`
        ])
      } finally {
        await honest.close()
        await queue.close()
      }
    })

    it("says how to start Redis when the queue cannot be reached", async () => {
      const error = await Effect.runPromise(
        Effect.flip(
          Effect.scoped(
            makeQueueExecutor({
              ...QUEUE_DEFAULTS,
              queueUrl: "redis://127.0.0.1:9/0",
              runId: "x",
              settings: SETTINGS,
              connectTimeoutMs: 500
            })
          )
        )
      )
      expect(error._tag).toBe("QueueUnavailable")
      expect(error.message).toContain("Start Redis")
    })
  }
)
