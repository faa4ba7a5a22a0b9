// Redis restarted empty in the middle of a queued bench: the coordinator notices that its jobs are gone and
// queues them again, so the run finishes (before, it waited forever with no message). A worker with room for more
// takes such a job again while its first run goes on here: the second joins the first (before, BullMQ stopped
// renewing the second's lock when the first ended, the job stalled three times and failed for good: exit 1).
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { BenchQuery } from "../../bench/datasets.ts"
import { makeQueueExecutor, QUEUE_DEFAULTS } from "../../bench/queue/queue-executor.ts"
import { type Session, startWorker } from "../../bench/queue/worker.ts"
import { benchSettings, jobSettingsOf } from "../../bench/settings.ts"
import { smurfs } from "../../src/agents/smurfs.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { scriptedLayer } from "../../src/llm/scripted.ts"
import { makeToolLibrary } from "../../src/tools/library.ts"
import { type RedisServer, redisUnavailable, startRedis } from "../redis-server.ts"

const SETTINGS = jobSettingsOf(benchSettings({ out: "/run", model: "ollama:m" }))

const query = (id: string): BenchQuery => ({
  group: "G1_instruction",
  id,
  query: `question ${id}`,
  apiList: [],
  relevant: []
})

/** A model that answers every role at once. */
const answering = scriptedLayer({
  $cycle: true,
  "*": [{ answer: "42", thought: "t", tool: "none", status: "solved", reason: "r" }]
} as never)

/** The same model, each call `ms` long: tasks are still running when Redis goes. */
const slowBy = (ms: number) =>
  Layer.effect(
    LanguageModel,
    Effect.map(Effect.service(LanguageModel), (model) => ({
      ...model,
      generate: (request: Parameters<typeof model.generate>[0]) => Effect.delay(model.generate(request), ms)
    }))
  ).pipe(Layer.provide(answering))

const sessionOf = (layer: Layer.Layer<LanguageModel>) => async (): Promise<Session> => ({
  runtime: ManagedRuntime.make(layer),
  methods: new Map([["smurfs", (task) => smurfs({ planner: false, verifier: false })(task)]]),
  taskOf: (q) => Effect.succeed({ id: q.id, query: q.query, tools: makeToolLibrary("empty", []) }),
  modelSpec: "scripted:answering",
  fullTrace: false
})

const unavailable = redisUnavailable()

describe.skipIf(unavailable !== undefined)(
  `Redis restarted empty mid-run${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  () => {
    let redis: RedisServer
    beforeAll(async () => {
      redis = await startRedis()
    })
    afterAll(async () => {
      await redis?.stop()
    })

    it.each([
      ["before a worker took them", false, 2, 5000, 0],
      ["while a worker runs them", true, 2, 5000, 1500],
      // room for every job twice, and tasks longer than the lock: the worker takes each lost job again at once
      ["while a worker with room for more runs them, longer than its lock", true, 6, 1000, 4000]
    ])(
      "%s: the coordinator queues its lost jobs again and every task finishes within a minute",
      async (label, workerFirst, concurrency, lockMs, callMs) => {
        const requeued: Array<number> = []
        const jobs = ["1", "2", "3"].map((id) => ({ method: "smurfs", query: query(id) }))
        const started = Date.now()
        const results = Effect.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              const executor = yield* makeQueueExecutor({
                ...QUEUE_DEFAULTS,
                queueUrl: redis.url,
                runId: `restarted-${label.replaceAll(" ", "-").replaceAll(",", "")}`,
                settings: SETTINGS,
                sweepMs: 300,
                onRequeued: (n) => void requeued.push(n)
              })
              return yield* Effect.forEach(
                jobs,
                (job) => Effect.tap(executor.execute(job), () => executor.settled?.(job) ?? Effect.void),
                { concurrency: "unbounded" }
              )
            })
          )
        )
        const lines: Array<string> = []
        const workerOptions = {
          queueUrl: redis.url,
          concurrency,
          lockMs,
          sessionOf: sessionOf(callMs > 0 ? slowBy(callMs) : answering),
          log: (line: string) => void lines.push(line)
        }
        const early = workerFirst ? startWorker(workerOptions) : undefined
        // the jobs are queued (and, with a worker, two are running); then Redis restarts with nothing in it
        await new Promise((resolve) => setTimeout(resolve, 1000))
        await redis.stop()
        redis = await startRedis(redis.port)
        const worker = early ?? startWorker(workerOptions)
        try {
          const done = await Promise.race([
            results,
            new Promise<"stuck">((resolve) => setTimeout(() => resolve("stuck"), 60_000))
          ])
          expect(done, lines.join("\n")).not.toBe("stuck")
          const records = done as Awaited<typeof results>
          expect(records.map((r) => (r.kind === "record" ? r.record.finishType : r.error))).toEqual([
            "give_answer",
            "give_answer",
            "give_answer"
          ])
          // each job taken again while its first run went on joined that run, never failed for good
          if (concurrency > 3) expect(lines.join("\n")).toContain("joined that run")
          expect(lines.join("\n")).not.toContain("refused")
          expect(requeued.reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
          expect(Date.now() - started).toBeLessThan(60_000)
        } finally {
          await worker.close()
        }
      },
      90_000
    )
  }
)
