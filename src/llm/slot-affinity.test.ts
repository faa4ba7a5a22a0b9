// Slot affinity (issue 33): on llama.cpp's server each task's requests carry its slot (`id_slot`) and `cache_prompt`.
import * as Effect from "effect/Effect"
import { afterEach, describe, expect, it } from "vitest"
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fake-servers/openai.ts"
import { LanguageModel } from "./language-model.ts"
import { type ModelTaskKey, makeSlotAffinity, withModelTask } from "./model-task.ts"
import { type ModelOptions, modelLayer } from "./spec.ts"

const servers: FakeOpenAI[] = []
const fake = async (...args: Parameters<typeof startFakeOpenAI>) => {
  const server = await startFakeOpenAI(...args)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

/** One request of the calling task. */
const ask = (content: string) =>
  Effect.flatMap(Effect.service(LanguageModel), (m) =>
    m.generate({ role: "executor.thought", messages: [{ role: "user", content }] })
  )

/** A task of two requests, run as `key`. */
const task = (key: string) => withModelTask(key)(Effect.andThen(ask(`${key} first`), ask(`${key} second`)))

const run = <A, E>(server: FakeOpenAI, effect: Effect.Effect<A, E, LanguageModel>, options: ModelOptions) =>
  Effect.runPromise(
    Effect.provide(effect, modelLayer("openai:tiny", { baseURL: server.baseURL, retryBaseMs: 1, ...options }))
  )

/** The slot each request named, by the text it sent. */
const slotsBySent = (server: FakeOpenAI): Record<string, [number | undefined, boolean | undefined]> =>
  Object.fromEntries(server.chatRequests().map((b) => [b.messages.at(-1).content, [b.id_slot, b.cache_prompt]]))

describe("slot affinity", () => {
  it("keeps each task's requests on one slot of its own, the slots read from llama.cpp's /props", async () => {
    const server = await fake({ imitate: "llama.cpp", slots: 4 })
    // two tasks side by side, then a third once both ended
    await run(server, Effect.andThen(Effect.all([task("a"), task("b")], { concurrency: 2 }), task("c")), {
      slotAffinity: "auto",
      concurrency: 2
    })
    const sent = slotsBySent(server)
    expect(sent["a first"]).toEqual(sent["a second"])
    expect(sent["b first"]).toEqual(sent["b second"])
    expect(sent["a first"]![0]).not.toBe(sent["b first"]![0])
    for (const [slot, cache] of Object.values(sent)) {
      expect(slot).toBeGreaterThanOrEqual(0)
      expect(slot).toBeLessThan(4)
      expect(cache).toBe(true)
    }
    expect(sent["c first"]).toEqual(sent["c second"])
  })

  it("sends a number of slots as given, and nothing without the option, outside a task or from another server", async () => {
    const llama = await fake({ imitate: "llama.cpp", slots: 4 })
    await run(llama, task("given"), { slotAffinity: 2 })
    await run(llama, task("off"), {})
    await run(llama, ask("outside"), { slotAffinity: 2 })
    const sent = slotsBySent(llama)
    expect(sent["given first"]![0]).toBeLessThan(2)
    expect(sent["given first"]![1]).toBe(true)
    for (const text of ["off first", "off second", "outside"]) expect(sent[text]).toEqual([undefined, undefined])
    // a server with no /props (vLLM, Ollama): auto pins nothing
    const vllm = await fake({ imitate: "vllm", models: ["tiny"] })
    await run(vllm, task("v"), { slotAffinity: "auto" })
    expect(slotsBySent(vllm)["v first"]).toEqual([undefined, undefined])
  })

  it("never names a slot a request of ours still holds: that request goes without one (llama.cpp stalled the slot)", async () => {
    const busy = new Set<number>()
    const clashes: Array<number> = []
    const server = await fake({
      imitate: "llama.cpp",
      slots: 2,
      chat: async (body: { id_slot?: number }) => {
        const slot = body.id_slot
        if (slot !== undefined) {
          if (busy.has(slot)) clashes.push(slot)
          busy.add(slot)
        }
        await new Promise((resolve) => setTimeout(resolve, 15))
        if (slot !== undefined) busy.delete(slot)
        return "ok"
      }
    })
    // four tasks at once on two slots, then one task with two requests at once
    await run(
      server,
      Effect.andThen(
        Effect.all([task("a"), task("b"), task("c"), task("d")], { concurrency: 4 }),
        withModelTask("e")(Effect.all([ask("e one"), ask("e two")], { concurrency: 2 }))
      ),
      { slotAffinity: "auto", concurrency: 4 }
    )
    expect(clashes).toEqual([])
    const sent = server.chatRequests()
    expect(sent).toHaveLength(10)
    expect(sent.filter((b) => b.id_slot === undefined).length).toBeGreaterThan(0)
    expect(sent.filter((b) => b.id_slot !== undefined).length).toBeGreaterThan(0)
    for (const b of sent) expect(b.cache_prompt).toBe(true)
  })
})

describe("slot affinity with model lanes", () => {
  it("gives each task holding a lane the lane's slot, so a task waiting for a lane never shares a slot", async () => {
    const server = await fake({ imitate: "llama.cpp", slots: 4 })
    // three tasks on two lanes: the third takes the lane (and the slot) of the first to end, not a third slot
    await run(server, Effect.all([task("a"), task("b"), task("c")], { concurrency: 3 }), {
      slotAffinity: "auto",
      lanes: 2,
      concurrency: 3
    })
    const sent = slotsBySent(server)
    for (const key of ["a", "b", "c"]) {
      expect(sent[`${key} first`]).toEqual(sent[`${key} second`])
      expect([0, 1]).toContain(sent[`${key} first`]![0])
    }
    expect(sent["a first"]![0]).not.toBe(sent["b first"]![0])
  })

  it("takes the server's slots for lanes: auto (llama.cpp's /props), so one task at a time on one slot", async () => {
    const server = await fake({ imitate: "llama.cpp", slots: 1 })
    await run(server, Effect.all([task("a"), task("b")], { concurrency: 2 }), { lanes: "auto", concurrency: 2 })
    const order = server.chatRequests().map((b) => b.messages.at(-1).content)
    // a task keeps its lane from one request to the next: no request of b between a's two
    expect(order).toEqual(["a first", "a second", "b first", "b second"])
  })
})

describe("makeSlotAffinity", () => {
  const live = (key: string): ModelTaskKey => ({ key, ended: false })

  it("gives live tasks their own slots while there are enough, and an ended task's slot to the next", () => {
    const affinity = makeSlotAffinity(2)
    const a = live("a")
    const b = live("b")
    expect([affinity.slotOf(a), affinity.slotOf(b), affinity.slotOf(a)]).toEqual([0, 1, 0])
    a.ended = true
    expect(affinity.slotOf(live("c"))).toBe(0)
    // a third live task shares the least recently used slot
    expect(affinity.slotOf(live("d"))).toBe(1)
  })

  it("acquires a task's slot only while no request of ours is on it, nor any sent without a slot", () => {
    const affinity = makeSlotAffinity(2)
    const a = live("a")
    const b = live("b")
    const first = affinity.acquire(a)
    expect(first.slot).toBe(0)
    // a's second request while its first is in flight: none
    const second = affinity.acquire(a)
    expect(second.slot).toBeUndefined()
    // b's slot is free, but a request without a slot is in flight and may sit there
    const other = affinity.acquire(b)
    expect(other.slot).toBeUndefined()
    second.release()
    other.release()
    expect(affinity.acquire(b).slot).toBe(1)
    first.release()
    expect(affinity.acquire(a).slot).toBe(0)
  })

  it("names a lane's slot (lane i on slot i) under the same rule: a lane's second request in flight goes without one", () => {
    const affinity = makeSlotAffinity(2)
    const a = live("a")
    // lane 3 on a server of 2 slots: slot 1, whatever slot the task would have got on its own
    const first = affinity.acquire(a, 3)
    expect(first.slot).toBe(1)
    // the same task's parallel request (subtasks side by side) on that lane: not pinned to the busy slot
    const second = affinity.acquire(a, 3)
    expect(second.slot).toBeUndefined()
    second.release()
    first.release()
    expect(affinity.acquire(a, 0).slot).toBe(0)
  })
})
