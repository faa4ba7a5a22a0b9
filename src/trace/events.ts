// Run events (CloudEvents 1.0) and the Trace service that pipelines emit them to.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { z } from "zod"
import type { EventData, EventDataOf, EventKind, EventLink, RunEvent } from "./record.ts"

export type { EventDataOf, EventKind, EventLink, ModelCallData, RunEvent, ToolCallData } from "./record.ts"

/** Prefix of every event type; run directories written before it carry the bare `smurfs.` prefix. */
export const EVENT_TYPE_PREFIX = "dev.smurfs."
const LEGACY_PREFIX = "smurfs."

export type EventType = `dev.smurfs.${EventKind}`

/** The CloudEvents `type` of a kind. */
export const eventType = (kind: EventKind): EventType => `dev.smurfs.${kind}`

/** The kind of an event, also for the legacy `smurfs.<kind>` types of older run directories. */
export const kindOf = (event: { readonly type: string }): string =>
  event.type.startsWith(EVENT_TYPE_PREFIX)
    ? event.type.slice(EVENT_TYPE_PREFIX.length)
    : event.type.startsWith(LEGACY_PREFIX)
      ? event.type.slice(LEGACY_PREFIX.length)
      : event.type

/** True when `event` is of `kind` (either type prefix). */
export const isKind = (event: { readonly type: string }, kind: EventKind): boolean => kindOf(event) === kind

/** True for events of the top-level pipeline (not of a sub-agent nested in its trace). */
export const isTopLevel = (event: EventLink): boolean => event.agent === undefined

export interface TraceShape {
  /** Receives every event of a run; must not throw. */
  readonly emit: <K extends EventKind>(kind: K, data: EventDataOf<K>, link?: EventLink) => Effect.Effect<void>
  /**
   * Takes an event another pipeline already built (a sub-agent's), so that its trajectory is nested
   * in this one's; must not throw.
   */
  readonly forward?: ((event: RunEvent) => void) | undefined
}

/** Where events go. The default drops them; pipelines and CLIs provide a collecting Trace. */
export const Trace = Context.Reference<TraceShape>("smurfs/Trace", {
  defaultValue: () => ({ emit: () => Effect.void })
})

/** Emit an event to the current Trace; its data is the kind's (`EventData` in record.ts), so producers and readers cannot drift. */
export const emit = <K extends EventKind>(kind: K, data: EventDataOf<K>): Effect.Effect<void> =>
  Effect.flatMap(Effect.service(Trace), (trace) => trace.emit(kind, data))

/** Run `effect` with every event it emits linked to `link` (a subtask, a sub-agent); inner links win. */
export const linked =
  (link: EventLink) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(Effect.service(Trace), (parent) =>
      Effect.provideService(effect, Trace, {
        emit: (kind, data, inner) => parent.emit(kind, data, { ...link, ...inner }),
        // a nested agent's event keeps its own subtask; the subtask here is the one that called the agent
        forward: (event) =>
          parent.forward?.(
            event.parentsubtask === undefined && link.subtask !== undefined
              ? { ...event, parentsubtask: link.subtask }
              : event
          )
      })
    )

/**
 * Hold back the events of `kind` an effect emits (`run`), every other event going on at once, until `release`
 * sends them on in order. A guardrail's events are traced when its call ends (their `recovered` depends on the
 * outcome): a caller whose own rejections came before a nested call's holds the nested ones back, so that a
 * trace lists them in the order the replies came. `release` is an effect to run once, in the caller's Trace.
 */
export const holdBack = (kind: EventKind) => {
  const held: Array<{ readonly data: EventDataOf<EventKind>; readonly link: EventLink | undefined }> = []
  return {
    run: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.flatMap(Effect.service(Trace), (parent) =>
        Effect.provideService(effect, Trace, {
          emit: (k, data, link) =>
            k === kind ? Effect.sync(() => void held.push({ data, link })) : parent.emit(k, data, link),
          forward: parent.forward
        })
      ),
    release: Effect.flatMap(Effect.service(Trace), (trace) =>
      Effect.forEach(held.splice(0), (e) => trace.emit(kind, e.data, e.link), { discard: true })
    )
  }
}

let counter = 0

/**
 * `new Date(ms).toISOString()`, from the last such text when the second is the same: events come in
 * bursts (a model call, its tool call, the observation), and writing a date out was most of an event's cost.
 */
export const isoTime = (ms: number): string => {
  if (ms === lastTime.ms) return lastTime.iso
  const second = Math.floor(ms / 1000)
  const iso =
    second === lastTime.second
      ? `${lastTime.prefix}${String(ms - second * 1000).padStart(3, "0")}Z`
      : new Date(ms).toISOString()
  if (second !== lastTime.second) lastTime = { ms, iso, second, prefix: iso.slice(0, iso.lastIndexOf(".") + 1) }
  else lastTime = { ...lastTime, ms, iso }
  return iso
}
let lastTime = { ms: Number.NaN, iso: "", second: Number.NaN, prefix: "" }

/** Build a CloudEvents 1.0 event; extension attributes that are undefined are left out (the spec has no null). */
export const makeEvent = (
  subject: string,
  kind: EventKind,
  data: Record<string, unknown>,
  link: EventLink = {},
  source = "/smurfs"
): RunEvent => {
  const now = Date.now()
  const id = `${now.toString(36)}-${(counter++).toString(36)}`
  const time = isoTime(now)
  let linked = false
  for (const key in link) if (link[key as keyof EventLink] !== undefined || key === "correlationid") linked = true
  // an event of the top-level pipeline (no link) is one literal: every event of a run is built here
  if (!linked)
    return {
      specversion: "1.0",
      id,
      source,
      type: eventType(kind),
      time,
      datacontenttype: "application/json",
      subject,
      correlationid: subject,
      data
    }
  const event: Record<string, unknown> = {
    specversion: "1.0",
    id,
    source,
    type: eventType(kind),
    time,
    datacontenttype: "application/json",
    subject,
    correlationid: subject
  }
  for (const key in link) {
    const value = link[key as keyof EventLink]
    if (value !== undefined) event[key] = value
    else if (key === "correlationid") delete event[key] // as a spread of an undefined one, then dropped, would
  }
  event["data"] = data
  return event as unknown as RunEvent
}

/**
 * The data of an event of `kind`, typed as its producers wrote it (a reader's field is checked against
 * the kind's schema at compile time). Not validated: records of older versions may lack a field.
 */
export const dataOf = <K extends EventKind>(
  event: Pick<RunEvent, "data">,
  _kind: K
): Partial<z.output<(typeof EventData)[K]>> => event.data as Partial<z.output<(typeof EventData)[K]>>
