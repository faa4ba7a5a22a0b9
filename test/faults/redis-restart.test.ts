// Redis restarted empty in the middle of a queued bench: the coordinator notices that its jobs are gone and
// queues them again, so the run finishes (before, it waited forever with no message).
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

/** The same model, each call 1.5 s: tasks are still running when Redis goes. */
const slow = Layer.effect(
  LanguageModel,
  Effect.map(Effect.service(LanguageModel), (model) => ({
    ...model,
    generate: (request: Parameters<typeof model.generate>[0]) => Effect.delay(model.generate(request), "1500 millis")
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
      ["before a worker took them", false],
      ["while a worker runs them", true]
    ])(
      "%s: the coordinator queues its lost jobs again and every task finishes within a minute",
      async (_label, workerFirst) => {
        const requeued: Array<number> = []
        const jobs = ["1", "2", "3"].map((id) => ({ method: "smurfs", query: query(id) }))
        const started = Date.now()
        const results = Effect.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              const executor = yield* makeQueueExecutor({
                ...QUEUE_DEFAULTS,
                queueUrl: redis.url,
                runId: `restarted-${workerFirst ? "running" : "waiting"}`,
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
        const workerOptions = {
          queueUrl: redis.url,
          concurrency: 2,
          lockMs: 5000,
          sessionOf: sessionOf(workerFirst ? slow : answering),
          log: () => {}
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
          expect(done).not.toBe("stuck")
          const records = done as Awaited<typeof results>
          expect(records.map((r) => (r.kind === "record" ? r.record.finishType : r.error))).toEqual([
            "give_answer",
            "give_answer",
            "give_answer"
          ])
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
