// Run events (CloudEvents 1.0) and the Trace service that pipelines emit them to.
import { Context, Effect } from "effect"

/** The kinds of events a run emits; the CloudEvents `type` is `dev.smurfs.<kind>` (reverse-DNS, as the spec asks). */
export type EventKind =
  | "task_started"
  | "plan"
  | "retrieval"
  | "subtask_started"
  | "thought"
  | "model_call"
  | "tool_call"
  | "answer"
  | "verdict"
  | "backtrack"
  | "guardrail"
  | "subtask_answered"
  | "final_answer"
  | "give_up"
  | "error"
  | "task_finished"
  | "plan_invalid"
  | "ask_user"
  | "intent"

/** Prefix of every event type; run directories written before it carry the bare `smurfs.` prefix. */
export const EVENT_TYPE_PREFIX = "dev.smurfs."
const LEGACY_PREFIX = "smurfs."

export type EventType = `dev.smurfs.${EventKind}`

/** The CloudEvents `type` of a kind. */
export const eventType = (kind: EventKind): EventType => `dev.smurfs.${kind}`

/** The kind of an event, also for the legacy `smurfs.<kind>` types of older run directories. */
export const kindOf = (event: { readonly type: string }): string =>
  event.type.startsWith(EVENT_TYPE_PREFIX) ? event.type.slice(EVENT_TYPE_PREFIX.length) : event.type.startsWith(LEGACY_PREFIX) ? event.type.slice(LEGACY_PREFIX.length) : event.type

/** True when `event` is of `kind` (either type prefix). */
export const isKind = (event: { readonly type: string }, kind: EventKind): boolean => kindOf(event) === kind

/**
 * CloudEvents extension attributes that place an event in its run. Every event carries
 * `correlationid` (the top-level task); an event of a subtask carries its index, an event of a
 * sub-agent (an agent used as a tool) its name and nesting depth.
 */
export interface EventLink {
  /** Id of the top-level task the event belongs to (the same for a sub-agent's events). */
  readonly correlationid?: string | undefined
  /** Index of the subtask (in its own pipeline's plan) the event happened in. */
  readonly subtask?: number | undefined
  /** Name of the agent tool whose pipeline emitted the event; absent for the top-level pipeline. */
  readonly agent?: string | undefined
  /** Nesting depth of that agent (1 = called by the top-level pipeline). */
  readonly agentdepth?: number | undefined
  /** Index of the parent's subtask that called the agent. */
  readonly parentsubtask?: number | undefined
}

export interface RunEvent<D = Record<string, unknown>> extends EventLink {
  readonly specversion: "1.0"
  readonly id: string
  readonly source: string
  readonly type: EventType
  readonly time: string
  readonly datacontenttype: "application/json"
  /** The task the event belongs to (a sub-agent's own task id for its events). */
  readonly subject: string
  readonly data: D
}

/** True for events of the top-level pipeline (not of a sub-agent nested in its trace). */
export const isTopLevel = (event: EventLink): boolean => event.agent === undefined

/** Data of a `model_call` event; totals are summed from these. */
export interface ModelCallData {
  readonly role: string
  readonly model: string
  readonly promptTokens: number
  readonly completionTokens: number
  readonly durationMs: number
  readonly attempt: number
  readonly ok: boolean
  readonly cached?: boolean
  readonly error?: string
  /** Prompt and reply, kept only when the trace is asked for full detail. */
  readonly messages?: ReadonlyArray<{ role: string; content: string }>
  readonly reply?: string
}

/** Data of a `tool_call` event. */
export interface ToolCallData {
  readonly tool: string
  readonly args: Record<string, unknown>
  readonly ok: boolean
  readonly content: string
  readonly error?: string
  readonly durationMs: number
  readonly truncated?: boolean
  /** Served by a cache, not by the tool. */
  readonly cached?: boolean
  /** No recording or simulator answered it (ToolResult.missed). */
  readonly missed?: boolean
}

export interface TraceShape {
  /** Receives every event of a run; must not throw. */
  readonly emit: (kind: EventKind, data: Record<string, unknown>, link?: EventLink) => Effect.Effect<void>
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

/** Emit an event to the current Trace. */
export const emit = (kind: EventKind, data: Record<string, unknown>): Effect.Effect<void> =>
  Effect.flatMap(Effect.service(Trace), (trace) => trace.emit(kind, data))

/** Run `effect` with every event it emits linked to `link` (a subtask, a sub-agent); inner links win. */
export const linked =
  (link: EventLink) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(Effect.service(Trace), (parent) =>
      Effect.provideService(effect, Trace, {
        emit: (kind, data, inner) => parent.emit(kind, data, { ...link, ...inner }),
        // a nested agent's event keeps its own subtask; the subtask here is the one that called the agent
        forward: (event) => parent.forward?.(event.parentsubtask === undefined && link.subtask !== undefined ? { ...event, parentsubtask: link.subtask } : event)
      })
    )

let counter = 0

/** Build a CloudEvents 1.0 event; extension attributes that are undefined are left out (the spec has no null). */
export const makeEvent = (subject: string, kind: EventKind, data: Record<string, unknown>, link: EventLink = {}, source = "/smurfs"): RunEvent => {
  const extensions = Object.fromEntries(Object.entries({ correlationid: subject, ...link }).filter(([, v]) => v !== undefined))
  return {
    specversion: "1.0",
    id: `${Date.now().toString(36)}-${(counter++).toString(36)}`,
    source,
    type: eventType(kind),
    time: new Date().toISOString(),
    datacontenttype: "application/json",
    subject,
    ...extensions,
    data
  }
}
