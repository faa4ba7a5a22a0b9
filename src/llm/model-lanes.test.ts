// Model lanes (issue 33): at most N tasks send requests at once, each keeping its lane until it ends or idles past its
// grace time while another waits. A scripted model whose replies the test releases one by one makes the order exact.
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { describe, expect, it, vi } from "vitest"
import { LanguageModel, type LanguageModelShape } from "./language-model.ts"
import { type LaneClock, ModelLane, makeModelLanes } from "./model-lanes.ts"
import { withModelTask } from "./model-task.ts"

/** A model whose every request waits until the test answers it; it notes what was sent, on which lane. */
const gatedModel = () => {
  const started: Array<string> = []
  const lanes = new Map<string, number | undefined>()
  const pending = new Map<string, () => void>()
  const model: LanguageModelShape = {
    info: { spec: "gated", provider: "scripted", model: "gated", contextTokens: 4096, supportsTools: false },
    generate: (request) =>
      Effect.flatMap(Effect.service(ModelLane), (lane) =>
        Effect.callback<{ text: string; usage: { promptTokens: number; completionTokens: number } } & never>(
          (resume) => {
            const text = request.messages.at(-1)!.content
            started.push(text)
            lanes.set(text, lane)
            pending.set(text, () =>
              resume(
                Effect.succeed({
                  text,
                  usage: { promptTokens: 1, completionTokens: 1 },
                  model: "gated",
                  durationMs: 0
                } as never)
              )
            )
            return Effect.sync(() => void pending.delete(text))
          }
        )
      )
  }
  /** Answer the request that sent `text` (once it has started). */
  const answer = async (text: string) => {
    await vi.waitFor(() => expect(pending.has(text)).toBe(true))
    pending.get(text)!()
    pending.delete(text)
  }
  return { model, started, lanes, answer }
}

/** A clock the test moves; timers fire as it passes them. */
const manualClock = () => {
  let now = 0
  const timers = new Set<{ readonly at: number; readonly fire: () => void }>()
  const clock: LaneClock = {
    now: () => now,
    schedule: (ms, fire) => {
      const timer = { at: now + ms, fire }
      timers.add(timer)
      return () => void timers.delete(timer)
    }
  }
  const advance = (ms: number) => {
    now += ms
    for (const timer of [...timers])
      if (timer.at <= now) {
        timers.delete(timer)
        timer.fire()
      }
  }
  return { clock, advance, timers }
}

const ask = (text: string) =>
  Effect.flatMap(Effect.service(LanguageModel), (m) =>
    m.generate({ role: "step", messages: [{ role: "user", content: text }] })
  )

/** A task of requests one after the other, with `between` run after each but the last (a tool call). */
const task = (key: string, texts: ReadonlyArray<string>, between: Effect.Effect<void> = Effect.void) =>
  withModelTask(key)(
    Effect.forEach(texts, (text, i) => (i < texts.length - 1 ? Effect.andThen(ask(text), between) : ask(text)), {
      discard: true
    })
  )

/** A gate the test opens: a tool call that takes as long as the test wants. */
const gate = () => {
  let open: (() => void) | undefined
  let opened = false
  const wait = Effect.callback<void>((resume) => {
    if (opened) resume(Effect.void)
    else open = () => resume(Effect.void)
  })
  return {
    wait,
    open: () => {
      opened = true
      open?.()
    }
  }
}

const setup = (lanes: number, graceMs = 1000) => {
  const gated = gatedModel()
  const time = manualClock()
  const laned = makeModelLanes({ lanes, graceMs, clock: time.clock })
  const run = <A, E>(effect: Effect.Effect<A, E, LanguageModel>) =>
    Effect.runFork(Effect.provideService(effect, LanguageModel, laned.wrap(gated.model)))
  return { ...gated, ...time, laned, run }
}

describe("model lanes", () => {
  it("lets as many tasks as lanes send requests; the others wait in the order they came until a task ends", async () => {
    const { run, answer, started, laned } = setup(1)
    const a = run(task("a", ["a1", "a2"]))
    await vi.waitFor(() => expect(started).toEqual(["a1"]))
    const b = run(task("b", ["b1", "b2"]))
    const c = run(task("c", ["c1"]))
    await vi.waitFor(() => expect(laned.snapshot().waiting).toEqual(["b", "c"]))
    // a keeps its lane between its requests: its second goes ahead of the tasks waiting
    await answer("a1")
    await vi.waitFor(() => expect(started).toEqual(["a1", "a2"]))
    await answer("a2")
    await Effect.runPromise(Fiber.join(a))
    // a ended: b, the first in line, has the lane for both its requests, then c
    await answer("b1")
    await answer("b2")
    await answer("c1")
    await Effect.runPromise(Effect.all([Fiber.join(b), Fiber.join(c)]))
    expect(started).toEqual(["a1", "a2", "b1", "b2", "c1"])
    expect(laned.snapshot()).toEqual({ holders: [undefined], waiting: [] })
  })

  it("gives each request its task's lane, and an ended task's lane to the next task", async () => {
    const { run, answer, lanes } = setup(2)
    const a = run(task("a", ["a1"]))
    const b = run(task("b", ["b1", "b2"]))
    const c = run(task("c", ["c1"]))
    await answer("a1")
    await answer("b1")
    await answer("c1")
    await answer("b2")
    await Effect.runPromise(Effect.all([Fiber.join(a), Fiber.join(b), Fiber.join(c)]))
    expect(Object.fromEntries(lanes)).toEqual({ a1: 0, b1: 1, b2: 1, c1: 0 })
  })

  it("takes the lane of a task idle past its grace time for a waiting task; that task queues for a new one", async () => {
    const { run, answer, started, laned, advance } = setup(1, 1000)
    const tool = gate()
    const a = run(task("a", ["a1", "a2"], tool.wait))
    await answer("a1")
    // a calls a slow tool: no request in flight; b comes and waits out a's grace time
    const b = run(task("b", ["b1"]))
    await vi.waitFor(() => expect(laned.snapshot().waiting).toEqual(["b"]))
    advance(999)
    expect(started).toEqual(["a1"])
    advance(1)
    await vi.waitFor(() => expect(started).toEqual(["a1", "b1"]))
    expect(laned.snapshot().holders).toEqual(["b"])
    // a's tool answers: a's next request waits for a lane like any other
    tool.open()
    await vi.waitFor(() => expect(laned.snapshot().waiting).toEqual(["a"]))
    await answer("b1")
    await answer("a2")
    await Effect.runPromise(Effect.all([Fiber.join(a), Fiber.join(b)]))
    expect(started).toEqual(["a1", "b1", "a2"])
  })

  it("keeps an idle task's lane while nobody waits, and a busy task's lane whoever waits", async () => {
    const { run, answer, started, laned, advance, timers } = setup(1, 1000)
    const tool = gate()
    const a = run(task("a", ["a1", "a2", "a3"], tool.wait))
    await answer("a1")
    // idle far past the grace time with nobody waiting: no timer, the lane stays a's
    advance(60_000)
    expect(timers.size).toBe(0)
    expect(laned.snapshot().holders).toEqual(["a"])
    tool.open()
    await vi.waitFor(() => expect(started).toEqual(["a1", "a2"]))
    // a request in flight: a waiting task does not take the lane, however long it waits
    const b = run(task("b", ["b1"]))
    await vi.waitFor(() => expect(laned.snapshot().waiting).toEqual(["b"]))
    advance(60_000)
    expect(laned.snapshot().holders).toEqual(["a"])
    await answer("a2")
    await answer("a3")
    await answer("b1")
    await Effect.runPromise(Effect.all([Fiber.join(a), Fiber.join(b)]))
    expect(started).toEqual(["a1", "a2", "a3", "b1"])
  })

  it("leaves no lane held by an interrupted task, waiting or running", async () => {
    const { run, answer, started, laned } = setup(1)
    const a = run(task("a", ["a1"]))
    await vi.waitFor(() => expect(started).toEqual(["a1"]))
    const b = run(task("b", ["b1"]))
    const c = run(task("c", ["c1"]))
    await vi.waitFor(() => expect(laned.snapshot().waiting).toEqual(["b", "c"]))
    // b gives up while it waits: out of the line
    await Effect.runPromise(Fiber.interrupt(b))
    expect(laned.snapshot().waiting).toEqual(["c"])
    // a is interrupted while its request runs: its lane goes to c
    await Effect.runPromise(Fiber.interrupt(a))
    await vi.waitFor(() => expect(started).toEqual(["a1", "c1"]))
    await answer("c1")
    await Effect.runPromise(Fiber.join(c))
    expect(laned.snapshot()).toEqual({ holders: [undefined], waiting: [] })
  })

  it("does not lane requests outside a task", async () => {
    const { run, answer, started, lanes } = setup(1)
    const a = run(task("a", ["a1"]))
    await vi.waitFor(() => expect(started).toEqual(["a1"]))
    const outside = run(ask("outside"))
    await vi.waitFor(() => expect(started).toEqual(["a1", "outside"]))
    expect(lanes.get("outside")).toBeUndefined()
    await answer("outside")
    await answer("a1")
    await Effect.runPromise(Effect.all([Fiber.join(a), Fiber.join(outside)]))
  })

  it("lets a task's parallel requests wait together and go together", async () => {
    const { run, answer, started, laned } = setup(1)
    const a = run(task("a", ["a1"]))
    await vi.waitFor(() => expect(started).toEqual(["a1"]))
    // b's two subtasks ask at once: one place in line, both go when b has the lane
    const b = run(withModelTask("b")(Effect.all([ask("b1"), ask("b2")], { concurrency: 2 })))
    await vi.waitFor(() => expect(laned.snapshot().waiting).toEqual(["b"]))
    await answer("a1")
    await vi.waitFor(() => expect([...started].sort()).toEqual(["a1", "b1", "b2"]))
    await answer("b1")
    await answer("b2")
    await Effect.runPromise(Effect.all([Fiber.join(a), Fiber.join(b)]))
  })

  it("refuses fewer than one lane", () => {
    expect(() => makeModelLanes({ lanes: 0 })).toThrow(RangeError)
  })
})
