// The task a model request belongs to, for servers that keep a cache per slot or sequence: every request of one task
// goes to the same one (llama.cpp's `id_slot`, the embedded engine's sequence), so that its next request finds its
// prefix there instead of a neighbour's.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/** One task in flight: its key, and whether it has ended (its slot is then free for the next task). */
export interface ModelTaskKey {
  readonly key: string
  ended: boolean
}

/** The task of the calling fiber, provided per task by the runner and `solve`; undefined outside a task. */
export const ModelTask = Context.Reference<ModelTaskKey | undefined>("smurfs/llm/ModelTask", {
  defaultValue: () => undefined
})

/** What to do when a task ends, by task (a weak map: a task nobody holds is forgotten with its hooks). */
const endHooks = new WeakMap<ModelTaskKey, Set<() => void>>()

/**
 * Call `hook` once when `task` ends (`withModelTask`; at once if it has ended): what it held for its requests (a model
 * lane) is given back then, not when somebody next looks. Returns how to take the hook back.
 */
export const onTaskEnd = (task: ModelTaskKey, hook: () => void): (() => void) => {
  if (task.ended) {
    hook()
    return () => {}
  }
  let hooks = endHooks.get(task)
  if (hooks === undefined) endHooks.set(task, (hooks = new Set()))
  hooks.add(hook)
  return () => void hooks.delete(hook)
}

/** Mark `task` ended and call its end hooks. */
export const endModelTask = (task: ModelTaskKey): void => {
  if (task.ended) return
  task.ended = true
  const hooks = endHooks.get(task)
  endHooks.delete(task)
  for (const hook of hooks ?? []) hook()
}

/** Run `effect` as the task `key`: its model requests carry it, and it is marked ended when `effect` ends. */
export const withModelTask =
  (key: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const task: ModelTaskKey = { key, ended: false }
      return effect.pipe(Effect.provideService(ModelTask, task), Effect.ensuring(Effect.sync(() => endModelTask(task))))
    })

/**
 * Which of `slots` slots each task uses: a task keeps the slot it got first; a new task takes the slot the fewest live
 * tasks hold, the least recently used among those (so that with no more tasks than slots each has its own, and a task
 * that ends hands its slot to the next). Ended tasks are forgotten as they are seen.
 */
export const makeSlotAffinity = (slots: number) => {
  if (!Number.isInteger(slots) || slots < 1)
    throw new RangeError(`slot affinity needs at least one slot (got ${slots})`)
  const holders: Array<Set<ModelTaskKey>> = Array.from({ length: slots }, () => new Set())
  const lastUse: Array<number> = Array.from({ length: slots }, () => -1)
  const slotOfTask = new Map<ModelTaskKey, number>()
  let clock = 0
  const slotOf = (task: ModelTaskKey): number => {
    let slot = slotOfTask.get(task)
    if (slot === undefined) {
      for (const [held, s] of slotOfTask)
        if (held.ended) {
          slotOfTask.delete(held)
          holders[s]!.delete(held)
        }
      slot = 0
      for (let s = 1; s < slots; s++) {
        const fewer = holders[s]!.size - holders[slot]!.size
        if (fewer < 0 || (fewer === 0 && lastUse[s]! < lastUse[slot]!)) slot = s
      }
      slotOfTask.set(task, slot)
      holders[slot]!.add(task)
    }
    lastUse[slot] = clock++
    return slot
  }
  // Requests of ours in flight: pinned ones per slot, and those sent without a slot (the server put them somewhere).
  const pinned: Array<number> = Array.from({ length: slots }, () => 0)
  let unpinned = 0
  /**
   * The slot the task's next request names, or undefined when it should name none: a request of ours is in flight on
   * that slot, or one without a slot is (it may be on that slot). llama.cpp's server defers a request for a busy slot
   * and, with its host-memory prompt cache (`--cache-ram`, on by default), first swaps the cache of that busy slot
   * (`get_available_slot`): in build 80fb11a such a slot stopped mid-request until the client gave up
   * (docs/performance.md). Unpinned, the request takes a free slot or waits in the server's queue, as without affinity.
   * `release` ends the request. `lane`: the slot the task's model lane names (lane i is slot i), in place of its own.
   */
  const acquire = (
    task: ModelTaskKey,
    lane?: number
  ): { readonly slot: number | undefined; readonly release: () => void } => {
    const slot = lane === undefined ? slotOf(task) : lane % slots
    if (pinned[slot]! > 0 || unpinned > 0) {
      unpinned++
      return { slot: undefined, release: () => void unpinned-- }
    }
    pinned[slot]!++
    return { slot, release: () => void pinned[slot]!-- }
  }
  return { slots, slotOf, acquire }
}

export type SlotAffinity = ReturnType<typeof makeSlotAffinity>
