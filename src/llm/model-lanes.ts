// Model lanes (issue 33): at most N tasks send requests to the model server at once, each keeping its lane from one
// request to the next, so that a server with N slots keeps every task's prefix in a slot of its own while more tasks
// than slots are in flight (the rest wait, first come first served, for a lane to be given back).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { LanguageModel, type LanguageModelShape } from "./language-model.ts"
import { ModelTask, type ModelTaskKey, onTaskEnd } from "./model-task.ts"

/** How long a task may hold a lane with no request in flight while another task waits for one (`graceMs`). */
export const MODEL_LANE_GRACE_MS = 2000

/**
 * The lane (0 to lanes − 1) of the calling request, set by the lanes on each request they let through: with slot
 * affinity lane i is slot i (`id_slot`), so each task holding a lane has a slot of its own. Undefined without lanes.
 */
export const ModelLane = Context.Reference<number | undefined>("smurfs/llm/ModelLane", {
  defaultValue: () => undefined
})

/** The clock of the grace time (tests give their own). */
export interface LaneClock {
  readonly now: () => number
  /** Call `fire` after `ms`; returns how to cancel it. */
  readonly schedule: (ms: number, fire: () => void) => () => void
}

const realClock: LaneClock = {
  now: () => performance.now(),
  schedule: (ms, fire) => {
    const timer = setTimeout(fire, ms)
    // a lane's timer never keeps a finished program alive
    timer.unref()
    return () => clearTimeout(timer)
  }
}

export interface ModelLanesOptions {
  /** Tasks whose requests go to the server at once: the server's slots (llama.cpp `--parallel`, OLLAMA_NUM_PARALLEL). */
  readonly lanes: number
  /**
   * A task with no request in flight for this long gives its lane to a waiting task (it is calling a slow tool; the
   * GPU should not wait for it), and queues for a new lane with its next request. Never without a waiting task.
   * Default MODEL_LANE_GRACE_MS.
   */
  readonly graceMs?: number | undefined
  /**
   * Told when a task starts (true) and stops (false) waiting for one of the `lanes` lanes: progress, a modelled
   * server's clock.
   */
  readonly onWait?: ((task: ModelTaskKey, waiting: boolean, lanes: number) => void) | undefined
  readonly clock?: LaneClock | undefined
}

/** One lane: the task holding it and since when that task has had no request in flight. */
interface Lane {
  readonly index: number
  holder: ModelTaskKey | undefined
  inFlight: number
  idleSince: number
  /** Cancels the grace timer, while one runs. */
  cancelGrace: (() => void) | undefined
  /** Takes the holder's end hook back. */
  unhook: (() => void) | undefined
}

/** A request of a task: settled once its lane's count no longer includes it. */
interface Request {
  settled: boolean
  /** The lane, once the request has one. */
  lane: number | undefined
  /** Wakes the waiting request (set once it waits). */
  wake: ((lane: number) => void) | undefined
}

/** A task waiting for a lane, with its requests (a task may send several at once: subtasks in parallel). */
interface Waiter {
  readonly task: ModelTaskKey
  readonly requests: Set<Request>
}

/** What the lanes hold now (tests, progress). */
export interface LaneSnapshot {
  /** The task holding each lane (its key), or undefined. */
  readonly holders: ReadonlyArray<string | undefined>
  /** Tasks waiting for a lane, first first. */
  readonly waiting: ReadonlyArray<string>
}

/**
 * Lanes over a model (`wrap`): a request of a task that holds a lane goes ahead; one of a task without a lane takes a
 * free lane or waits, in the order tasks asked, until a lane is given back. A task gives its lane back when it ends,
 * or when it has had no request in flight for `graceMs` and another task waits. Requests outside a task
 * (`withModelTask`) are not laned. An interrupted request that waited leaves no lane held.
 */
export const makeModelLanes = (options: ModelLanesOptions) => {
  if (!Number.isInteger(options.lanes) || options.lanes < 1)
    throw new RangeError(`model lanes need at least one lane (got ${options.lanes})`)
  const graceMs = options.graceMs ?? MODEL_LANE_GRACE_MS
  const clock = options.clock ?? realClock
  const lanes: Array<Lane> = Array.from({ length: options.lanes }, (_, index) => ({
    index,
    holder: undefined,
    inFlight: 0,
    idleSince: 0,
    cancelGrace: undefined,
    unhook: undefined
  }))
  const laneOf = new Map<ModelTaskKey, Lane>()
  const queue: Array<Waiter> = []

  const stopGrace = (lane: Lane) => {
    lane.cancelGrace?.()
    lane.cancelGrace = undefined
  }

  const take = (lane: Lane, task: ModelTaskKey, requests: number) => {
    lane.holder = task
    lane.inFlight = requests
    laneOf.set(task, lane)
    // a task that ended already (a key made by hand) gives the lane back once its requests leave it
    lane.unhook = task.ended ? undefined : onTaskEnd(task, () => release(lane))
  }

  /** The lane's holder gives it back; the first waiting task takes it. */
  const release = (lane: Lane) => {
    stopGrace(lane)
    lane.unhook?.()
    lane.unhook = undefined
    if (lane.holder !== undefined) laneOf.delete(lane.holder)
    lane.holder = undefined
    lane.inFlight = 0
    const next = queue.shift()
    if (next === undefined) return
    options.onWait?.(next.task, false, options.lanes)
    take(lane, next.task, next.requests.size)
    for (const request of next.requests) {
      request.lane = lane.index
      request.wake?.(lane.index)
    }
    // the lanes of idle holders may be wanted by the waiters still in line
    if (queue.length > 0) for (const other of lanes) graceFor(other)
  }

  /** With a task waiting, an idle holder keeps its lane for what is left of its grace time, then gives it back. */
  const graceFor = (lane: Lane) => {
    if (lane.holder === undefined || lane.inFlight > 0 || lane.cancelGrace !== undefined || queue.length === 0) return
    if (lane.holder.ended) return release(lane)
    if (!Number.isFinite(graceMs)) return
    const left = graceMs - (clock.now() - lane.idleSince)
    if (left <= 0) return release(lane)
    lane.cancelGrace = clock.schedule(left, () => {
      lane.cancelGrace = undefined
      if (lane.inFlight === 0 && queue.length > 0) release(lane)
    })
  }

  /** A request of `task` leaves its lane (its reply came, it failed, or it was interrupted). */
  const leave = (task: ModelTaskKey, request: Request) => {
    if (request.settled) return
    request.settled = true
    const lane = laneOf.get(task)
    if (lane === undefined) return
    lane.inFlight--
    if (lane.inFlight > 0) return
    lane.idleSince = clock.now()
    graceFor(lane)
  }

  /** The lane of a request of `task` now, or undefined after queueing it (`request.wake` gets its lane). */
  const enter = (task: ModelTaskKey, request: Request): number | undefined => {
    const own = laneOf.get(task)
    if (own !== undefined) {
      own.inFlight++
      stopGrace(own)
      request.lane = own.index
      return own.index
    }
    const waiting = queue.find((w) => w.task === task)
    if (waiting !== undefined) {
      waiting.requests.add(request)
      return undefined
    }
    // a task that ended without its hook (a key made by hand) holds nothing
    for (const lane of lanes) if (lane.holder?.ended) release(lane)
    const free = queue.length === 0 ? lanes.find((l) => l.holder === undefined) : undefined
    if (free !== undefined) {
      take(free, task, 1)
      request.lane = free.index
      return free.index
    }
    queue.push({ task, requests: new Set([request]) })
    options.onWait?.(task, true, options.lanes)
    for (const lane of lanes) graceFor(lane)
    return undefined
  }

  /** A waiting request was interrupted: out of the line, or, if its lane came meanwhile, out of the lane. */
  const abandon = (task: ModelTaskKey, request: Request) => {
    if (request.lane !== undefined) {
      leave(task, request)
      // the task has not used the lane: the next in line gets it at once
      const lane = laneOf.get(task)
      if (lane !== undefined && lane.inFlight === 0) release(lane)
      return
    }
    request.settled = true
    const at = queue.findIndex((w) => w.task === task)
    if (at < 0) return
    const waiter = queue[at]!
    waiter.requests.delete(request)
    if (waiter.requests.size > 0) return
    queue.splice(at, 1)
    options.onWait?.(task, false, options.lanes)
  }

  const wrap = (inner: LanguageModelShape): LanguageModelShape =>
    LanguageModel.of({
      info: inner.info,
      ...(inner.timeoutMs !== undefined ? { timeoutMs: inner.timeoutMs } : {}),
      generate: (request) =>
        Effect.flatMap(Effect.service(ModelTask), (task) =>
          task === undefined || task.ended
            ? inner.generate(request)
            : Effect.uninterruptibleMask((restore) => {
                const own: Request = { settled: false, lane: undefined, wake: undefined }
                const now = enter(task, own)
                const lane =
                  now !== undefined
                    ? Effect.succeed(now)
                    : restore(
                        Effect.callback<number>((done) => {
                          // the lane may have come between the queueing and this
                          if (own.lane !== undefined) done(Effect.succeed(own.lane))
                          else own.wake = (lane) => done(Effect.succeed(lane))
                        })
                      ).pipe(Effect.onInterrupt(() => Effect.sync(() => abandon(task, own))))
                return Effect.flatMap(lane, (index) =>
                  restore(Effect.provideService(inner.generate(request), ModelLane, index)).pipe(
                    Effect.ensuring(Effect.sync(() => leave(task, own)))
                  )
                )
              })
        )
    })

  const snapshot = (): LaneSnapshot => ({
    holders: lanes.map((l) => l.holder?.key),
    waiting: queue.map((w) => w.task.key)
  })

  return { lanes: options.lanes, wrap, snapshot }
}

export type ModelLanes = ReturnType<typeof makeModelLanes>

/**
 * Lanes over the model in context, their number found once, at the first laned request (`lanes`: e.g. the slots a
 * server reports); undefined there means no lanes.
 */
export const withModelLanes = (
  inner: LanguageModelShape,
  lanes: Effect.Effect<number | undefined>,
  options: Omit<ModelLanesOptions, "lanes"> = {}
): Effect.Effect<LanguageModelShape> =>
  Effect.map(Effect.cached(lanes), (count) => {
    let laned: LanguageModelShape | undefined
    return LanguageModel.of({
      info: inner.info,
      ...(inner.timeoutMs !== undefined ? { timeoutMs: inner.timeoutMs } : {}),
      generate: (request) =>
        laned !== undefined
          ? laned.generate(request)
          : Effect.flatMap(count, (n) => {
              laned ??= n === undefined ? inner : makeModelLanes({ ...options, lanes: n }).wrap(inner)
              return laned.generate(request)
            })
    })
  })

/** A LanguageModel with lanes over the one in context (see `withModelLanes`). */
export const modelLanesLayer = (
  lanes: Effect.Effect<number | undefined>,
  options: Omit<ModelLanesOptions, "lanes"> = {}
): Layer.Layer<LanguageModel, never, LanguageModel> =>
  Layer.effect(
    LanguageModel,
    Effect.flatMap(Effect.service(LanguageModel), (inner) => withModelLanes(inner, lanes, options))
  )
