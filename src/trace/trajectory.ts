// A run's trajectory: its events, final answer and per-task totals, as one serializable value.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { dataOf, kindOf, makeEvent, Trace, type TraceShape } from "./events.ts"
import type { RunEvent, Totals } from "./record.ts"
import { capStrings, hasLongString } from "./size-caps.ts"

export type { FinishType, Totals, Trajectory } from "./record.ts"

/** Sum the totals of a list of events. */
export const totalsOf = (events: ReadonlyArray<RunEvent>, wallMs: number): Totals => {
  let modelCalls = 0,
    promptTokens = 0,
    completionTokens = 0,
    toolCalls = 0,
    backtracks = 0,
    cachedModelCalls = 0,
    cachedToolCalls = 0,
    missedToolCalls = 0,
    serverRetries = 0,
    simulatedToolCalls = 0
  const guardrails: Record<string, number> = {}
  const guardrailsRecovered: Record<string, number> = {}
  for (const e of events) {
    switch (kindOf(e)) {
      case "model_call": {
        const d = dataOf(e, "model_call")
        if (d.retried) {
          serverRetries++
          break
        }
        if (d.cached) cachedModelCalls++
        else modelCalls++
        promptTokens += Number(d.promptTokens ?? 0)
        completionTokens += Number(d.completionTokens ?? 0)
        break
      }
      case "tool_call":
        if (dataOf(e, "tool_call").cached) cachedToolCalls++
        else toolCalls++
        if (dataOf(e, "tool_call").missed) missedToolCalls++
        if (dataOf(e, "tool_call").served === "simulated") simulatedToolCalls++
        break
      case "backtrack":
        backtracks++
        break
      case "guardrail": {
        const d = dataOf(e, "guardrail")
        const name = String(d.guardrail ?? "unknown")
        guardrails[name] = (guardrails[name] ?? 0) + 1
        if (d.recovered === true) guardrailsRecovered[name] = (guardrailsRecovered[name] ?? 0) + 1
        break
      }
    }
  }
  return {
    modelCalls,
    promptTokens,
    completionTokens,
    toolCalls,
    backtracks,
    wallMs,
    guardrails,
    guardrailsRecovered,
    cachedModelCalls,
    cachedToolCalls,
    missedToolCalls,
    ...(serverRetries > 0 ? { serverRetries } : {}),
    simulatedToolCalls
  }
}

/**
 * Whether recorded trajectories keep the prompt of each model call (`messages` of model_call events); listeners
 * see them either way. A bench writes them only under --full-trace: without it, a task in flight need not hold
 * every prompt it sent until its record drops them.
 */
export const RecordPrompts = Context.Reference<boolean>("smurfs/RecordPrompts", { defaultValue: () => true })

/** `event` without the prompt of its model call. */
const withoutPrompt = (event: RunEvent): RunEvent => {
  if (kindOf(event) !== "model_call" || !("messages" in event.data)) return event
  const { messages: _dropped, ...data } = event.data
  return { ...event, data }
}

/**
 * A Trace that records events for one task and forwards each to an optional listener
 * (the CLI's live view, a JSONL file).
 */
export const makeRecorder = (taskId: string, listener?: (event: RunEvent) => void) =>
  Effect.map(Effect.service(RecordPrompts), (prompts) => {
    // one array, appended to in place: an event is one step of the run, not three (the Ref it was updated
    // in place through cost a flatMap and an update per event)
    const events: Array<RunEvent> = []
    const record = (event: RunEvent): RunEvent => {
      try {
        listener?.(event)
      } catch {
        // a listener's failure must never break a run
      }
      return prompts ? event : withoutPrompt(event)
    }
    const trace: TraceShape = {
      // strings are capped as they are recorded, not when the task ends: a task of many 30 MB replies keeps
      // 64 Ki characters of each, not every reply whole until its record is written. Data with nothing to
      // cut is kept as the emitter built it (each builds its own), not copied once more.
      emit: (kind, data, link) =>
        Effect.sync(
          () => void events.push(record(makeEvent(taskId, kind, hasLongString(data) ? capStrings(data) : data, link)))
        ),
      // a sub-agent's event joins this run: same correlation id as every event of this task
      forward: (event) => void events.push(record({ ...event, correlationid: taskId }))
    }
    return { trace, events: Effect.sync(() => events) }
  })

/**
 * A listener for the events of every method run inside it, whatever the method's own options say
 * (the Promise API's `onEvent`). No listener by default.
 */
export const EventListener = Context.Reference<((event: RunEvent) => void) | undefined>("smurfs/EventListener", {
  defaultValue: () => undefined
})

/** Run `effect` with a recording Trace; returns its value and the recorded events. */
export const recording = <A, E, R>(
  taskId: string,
  effect: Effect.Effect<A, E, R>,
  listener?: (event: RunEvent) => void
) =>
  Effect.gen(function* () {
    const outer = yield* Effect.service(EventListener)
    const recorder = yield* makeRecorder(
      taskId,
      outer && listener
        ? (e: RunEvent) => {
            try {
              listener(e)
            } finally {
              outer(e)
            }
          }
        : (listener ?? outer)
    )
    const value = yield* Effect.provideService(effect, Trace, recorder.trace)
    return { value, events: yield* recorder.events }
  })
