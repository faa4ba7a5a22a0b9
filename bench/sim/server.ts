// The modelled model server in virtual time: the requests of tasks in flight overlap as on a real server (each holds
// its slot, or its KV blocks, until its reply is written), later ones wait in its queue, and the clock moves only when
// every task in flight is waiting on the server, so that the figures do not depend on the machine's speed.
import * as Effect from "effect/Effect"
import { type BlockCacheOptions, blockCacheDefaults, makeBlockCache } from "./block-cache.ts"
import { emptyTotals, makePrefixCache, prefixCacheDefaults } from "./prefix-cache.ts"

/** The server's cache: llama-server's / Ollama's slots, or vLLM's / SGLang's block pool. */
export type CacheModel =
  | { readonly kind: "slots"; readonly slots: number; readonly similarity: number }
  | { readonly kind: "blocks"; readonly budgetTokens: number; readonly blockTokens: number }

export interface ServerModelOptions {
  readonly cache: CacheModel
  readonly prefillMsPerToken: number
  readonly decodeMsPerToken: number
  /**
   * Each task's requests name one slot (llama-server's `id_slot`, what `--slot-affinity` sends): its model lane's
   * (lane i, slot i) when the client has lanes (`src/llm/model-lanes.ts`), else the slot the fewest live tasks hold,
   * taken by a new task; a request whose slot is busy waits for it while others go ahead.
   */
  readonly affinity?: boolean | undefined
}

export const serverModelDefaults: ServerModelOptions = {
  cache: { kind: "slots", slots: prefixCacheDefaults.slots, similarity: prefixCacheDefaults.similarity },
  prefillMsPerToken: prefixCacheDefaults.prefillMsPerToken,
  decodeMsPerToken: prefixCacheDefaults.decodeMsPerToken
}

export const blockCacheModel = (budgetTokens = blockCacheDefaults.budgetTokens): CacheModel => ({
  kind: "blocks",
  budgetTokens,
  blockTokens: blockCacheDefaults.blockTokens
})

/** A one-line description of a cache model, for tables. */
export const describeCache = (cache: CacheModel): string =>
  cache.kind === "slots"
    ? `${cache.slots} slots, similarity ${cache.similarity}`
    : `blocks of ${cache.blockTokens}, ${cache.budgetTokens.toLocaleString("en-US")} tokens`

interface Waiting {
  readonly task: string
  /** The client's model lane of the request, if any. */
  readonly lane: number | undefined
  readonly role: string
  readonly prompt: ReadonlyArray<number>
  readonly output: ReadonlyArray<number>
  readonly resume: () => void
}

interface InService {
  readonly endAt: number
  readonly order: number
  readonly finish: () => void
}

/**
 * A server model that a batch of tasks drives: `open(concurrency, tasks)` before, `request(task, prompt, reply, role)`
 * for each model call (an Effect that ends when the modelled server has served it), `taskDone(task)` as each task ends.
 * A request costs `uncached × prefill + reply × decode` of GPU time and takes that long; the clock moves to the next
 * request to end once as many tasks wait on the server as are in flight (`min(concurrency, tasks left)`), or after a
 * second with none arriving (a task that waits on something else: counted in `forced`).
 */
export const makeServerModel = (options: ServerModelOptions = serverModelDefaults) => {
  const { cache } = options
  const slots =
    cache.kind === "slots"
      ? makePrefixCache({
          slots: cache.slots,
          similarity: cache.similarity,
          prefillMsPerToken: options.prefillMsPerToken,
          decodeMsPerToken: options.decodeMsPerToken
        })
      : undefined
  const blocks =
    cache.kind === "blocks"
      ? makeBlockCache({
          blockTokens: cache.blockTokens,
          budgetTokens: cache.budgetTokens,
          prefillMsPerToken: options.prefillMsPerToken,
          decodeMsPerToken: options.decodeMsPerToken
        } satisfies BlockCacheOptions)
      : undefined
  const totals = emptyTotals()
  const byRole = new Map<string, { requests: number; uncachedTokens: number; gpuMs: number }>()
  let now = 0
  let order = 0
  let forced = 0
  let expected = 0
  let tasksLeft = 0
  let concurrency = 1
  /** Tasks with a request the server has not answered, and how many. */
  const waiting = new Map<string, number>()
  const queue: Array<Waiting> = []
  const inService: Array<InService> = []
  /** With affinity: each live task's slot. */
  const slotOf = new Map<string, number>()
  const lastUse: Array<number> = Array.from({ length: cache.kind === "slots" ? cache.slots : 0 }, () => -1)

  const pinFor = (task: string): number => {
    const known = slotOf.get(task)
    if (known !== undefined) return known
    const holders = lastUse.map(() => 0)
    for (const s of slotOf.values()) holders[s]!++
    let best = 0
    for (let s = 1; s < holders.length; s++)
      if (holders[s]! < holders[best]! || (holders[s] === holders[best] && lastUse[s]! < lastUse[best]!)) best = s
    slotOf.set(task, best)
    return best
  }

  const account = (role: string, promptTokens: number, cachedTokens: number, outputTokens: number) => {
    const uncachedTokens = promptTokens - cachedTokens
    const gpuMs = uncachedTokens * options.prefillMsPerToken + outputTokens * options.decodeMsPerToken
    totals.requests++
    totals.promptTokens += promptTokens
    totals.cachedTokens += cachedTokens
    totals.uncachedTokens += uncachedTokens
    totals.outputTokens += outputTokens
    totals.gpuMs += gpuMs
    const r = byRole.get(role) ?? { requests: 0, uncachedTokens: 0, gpuMs: 0 }
    byRole.set(role, {
      requests: r.requests + 1,
      uncachedTokens: r.uncachedTokens + uncachedTokens,
      gpuMs: r.gpuMs + gpuMs
    })
    return gpuMs
  }

  /** Start what can start: queued requests in order, each on a free slot (its own, with affinity) or in the pool. */
  const admit = () => {
    for (let i = 0; i < queue.length; ) {
      const w = queue[i]!
      let started: { cachedTokens: number; end: () => void } | undefined
      if (slots) {
        const pin = options.affinity ? (w.lane !== undefined ? w.lane % lastUse.length : pinFor(w.task)) : undefined
        if (slots.isFree(pin)) {
          const begun = slots.begin(w.prompt, pin)
          lastUse[begun.slot] = order
          started = { cachedTokens: begun.cachedTokens, end: () => void begun.end(w.output) }
        }
      } else if (blocks?.fits(w.prompt, w.output)) {
        const begun = blocks.begin(w.prompt, w.output)
        started = { cachedTokens: begun.cachedTokens, end: begun.end }
      }
      if (started === undefined) {
        i++
        continue
      }
      queue.splice(i, 1)
      const gpuMs = account(w.role, w.prompt.length, started.cachedTokens, w.output.length)
      const end = started.end
      inService.push({
        endAt: now + gpuMs,
        order: order++,
        finish: () => {
          end()
          const n = (waiting.get(w.task) ?? 1) - 1
          if (n === 0) waiting.delete(w.task)
          else waiting.set(w.task, n)
          w.resume()
        }
      })
    }
  }

  const toServer = (w: Waiting) => {
    queue.push(w)
    admit()
  }

  let scheduled = false
  let stall: ReturnType<typeof setTimeout> | undefined
  /** Move the clock when every task in flight waits on the server (checked after the event loop's current work). */
  const check = () => {
    if (scheduled) return
    scheduled = true
    setImmediate(() => {
      scheduled = false
      if (stall !== undefined) clearTimeout(stall)
      stall = undefined
      if (inService.length === 0) return
      if (waiting.size >= expected) return step()
      stall = setTimeout(() => {
        stall = undefined
        forced++
        step()
      }, 1000)
    })
  }
  const step = () => {
    let first = 0
    for (let i = 1; i < inService.length; i++) {
      const a = inService[i]!
      const b = inService[first]!
      if (a.endAt < b.endAt || (a.endAt === b.endAt && a.order < b.order)) first = i
    }
    const [done] = inService.splice(first, 1)
    now = Math.max(now, done!.endAt)
    done!.finish()
    admit()
    check()
  }

  /** The request of `task` (on the client's model lane `lane`, if any): ends when the modelled server has served it. */
  const request = (
    task: string,
    prompt: ReadonlyArray<number>,
    output: ReadonlyArray<number>,
    role: string,
    lane?: number
  ) =>
    Effect.callback<void>((resume) => {
      waiting.set(task, (waiting.get(task) ?? 0) + 1)
      toServer({ task, lane, role, prompt, output, resume: () => resume(Effect.void) })
      check()
    })

  /**
   * A task waits (true) or no longer waits (false) for something the client holds back until the server has served
   * others (a model lane): it counts as waiting on the server, so that the clock moves.
   */
  const hold = (task: string, held: boolean) => {
    const n = (waiting.get(task) ?? 0) + (held ? 1 : -1)
    if (n <= 0) waiting.delete(task)
    else waiting.set(task, n)
    check()
  }

  return {
    /** Before a batch: `tasks` tasks, `concurrency` of them in flight at once. */
    open: (inFlight: number, tasks: number) => {
      concurrency = inFlight
      tasksLeft = tasks
      expected = Math.min(concurrency, tasksLeft)
    },
    /** A task has ended: one fewer to wait for once fewer than `concurrency` are left; its slot is free. */
    taskDone: (task: string) => {
      tasksLeft--
      expected = Math.min(concurrency, tasksLeft)
      slotOf.delete(task)
      check()
    },
    request,
    hold,
    totals,
    byRole,
    options,
    /** Virtual milliseconds since the batch began. */
    now: () => now,
    /** Times the clock moved because no request came for a second rather than because every task waited. */
    forced: () => forced
  }
}

export type ServerModel = ReturnType<typeof makeServerModel>
