import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import type { LanguageModelShape } from "../../src/llm/language-model.ts"
import { ModelLane, makeModelLanes } from "../../src/llm/model-lanes.ts"
import { ModelTask, withModelTask } from "../../src/llm/model-task.ts"
import { makeServerModel, type ServerModelOptions } from "./server.ts"

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)
const costs = { prefillMsPerToken: 1, decodeMsPerToken: 10 }
const slots = (n: number, extra: Partial<ServerModelOptions> = {}): ServerModelOptions => ({
  cache: { kind: "slots", slots: n, similarity: 0 },
  ...costs,
  ...extra
})

/** `tasks` tasks, each a list of prompts sent one after the other (replies of one token), `concurrency` at a time. */
const drive = (
  options: ServerModelOptions,
  tasks: ReadonlyArray<{ readonly key: string; readonly prompts: ReadonlyArray<ReadonlyArray<number>> }>,
  concurrency: number
) => {
  const server = makeServerModel(options)
  server.open(concurrency, tasks.length)
  const ends: Array<string> = []
  const run = (task: (typeof tasks)[number]) =>
    Effect.forEach(task.prompts, (prompt, i) =>
      Effect.tap(server.request(task.key, prompt, [9], "step"), () =>
        Effect.sync(() => ends.push(`${task.key}${i} @${server.now()}`))
      )
    ).pipe(Effect.ensuring(Effect.sync(() => server.taskDone(task.key))))
  return Effect.runPromise(Effect.forEach(tasks, run, { concurrency })).then(() => ({ server, ends }))
}

/** A task whose second prompt continues its first (prompt, reply, more). */
const taskOf = (key: string, base: number) => {
  const first = range(base, 20)
  return { key, prompts: [first, [...first, 9, ...range(base + 50, 5)]] }
}

describe("modelled server in virtual time", () => {
  it("keeps a slot for a request while it is served: tasks side by side each keep their prefix", async () => {
    const { server } = await drive(slots(2), [taskOf("a", 0), taskOf("b", 1000)], 2)
    // each second request computes only its 5 new tokens (+ none of the reply it holds)
    expect(server.totals.uncachedTokens).toBe(20 + 20 + 5 + 5)
    expect(server.forced()).toBe(0)
  })

  it("queues requests past its slots in arrival order and moves the clock by each request's GPU time", async () => {
    const { server, ends } = await drive(slots(1), [taskOf("a", 0), taskOf("b", 1000)], 2)
    // one slot: a's and b's requests take turns, and each evicts the other's prefix
    expect(server.totals.uncachedTokens).toBe(20 + 20 + 26 + 26)
    // a0 ends at 20 + 10; b0 was queued behind it and ends 30 later; then a1 (26 + 10) and b1
    expect(ends).toEqual(["a0 @30", "b0 @60", "a1 @96", "b1 @132"])
  })

  it("with the client's model lanes, as many tasks as slots send requests, so that each keeps its prefix", async () => {
    const server = makeServerModel(slots(1, { affinity: true }))
    server.open(2, 2)
    // a model on the server whose prompt is the message's tokens; the lanes as `--lanes` ships them
    const model: LanguageModelShape = {
      info: { spec: "m", provider: "sim", model: "m", contextTokens: 4096, supportsTools: false },
      generate: (request) =>
        Effect.flatMap(Effect.all([Effect.service(ModelTask), Effect.service(ModelLane)]), ([task, lane]) =>
          Effect.as(server.request(task!.key, JSON.parse(request.messages[0]!.content), [9], "step", lane), {
            text: "",
            usage: { promptTokens: 0, completionTokens: 0 },
            model: "m",
            durationMs: 0
          })
        )
    }
    const laned = makeModelLanes({ lanes: 1, onWait: (task, waiting) => server.hold(task.key, waiting) }).wrap(model)
    const run = (task: ReturnType<typeof taskOf>) =>
      withModelTask(task.key)(
        Effect.forEach(task.prompts, (prompt) =>
          laned.generate({ role: "step", messages: [{ role: "user", content: JSON.stringify(prompt) }] })
        )
      ).pipe(Effect.ensuring(Effect.sync(() => server.taskDone(task.key))))
    await Effect.runPromise(Effect.forEach([taskOf("a", 0), taskOf("b", 1000)], run, { concurrency: 2 }))
    expect(server.totals.uncachedTokens).toBe(20 + 5 + 20 + 5)
    // b waiting for its lane counts as waiting on the server: the clock never had to move on its own
    expect(server.forced()).toBe(0)
  })

  it("with affinity, a task's request waits for its own slot", async () => {
    // three tasks on two slots: the third shares a's slot (the least recently used of those one live task holds)
    const { server } = await drive(
      slots(2, { affinity: true }),
      [taskOf("a", 0), taskOf("b", 1000), taskOf("c", 2000)],
      3
    )
    expect(server.totals.requests).toBe(6)
    expect(server.forced()).toBe(0)
  })

  it("serves from a block pool with its budget", async () => {
    const { server } = await drive(
      { cache: { kind: "blocks", budgetTokens: 1024, blockTokens: 4 }, ...costs },
      [taskOf("a", 0), taskOf("b", 1000)],
      2
    )
    // the continuation reuses the full blocks of the first prompt and reply (20 + 1 tokens: 5 blocks)
    expect(server.totals.uncachedTokens).toBe(20 + 20 + 6 + 6)
  })
})
