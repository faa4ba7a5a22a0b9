// Run events (CloudEvents-shaped) and the Trace service that pipelines emit them to.
import { Context, Effect } from "effect"

/** The kinds of events a run emits; the CloudEvents `type` is `smurfs.<kind>`. */
export type EventKind =
  | "task_started"
  | "plan"
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

export interface RunEvent<D = Record<string, unknown>> {
  readonly specversion: "1.0"
  readonly id: string
  readonly source: string
  readonly type: `smurfs.${EventKind}`
  readonly time: string
  /** The task the event belongs to. */
  readonly subject: string
  readonly data: D
}

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
}

export interface TraceShape {
  /** Receives every event of a run; must not throw. */
  readonly emit: (kind: EventKind, data: Record<string, unknown>) => Effect.Effect<void>
}

/** Where events go. The default drops them; pipelines and CLIs provide a collecting Trace. */
export const Trace = Context.Reference<TraceShape>("smurfs/Trace", {
  defaultValue: () => ({ emit: () => Effect.void })
})

/** Emit an event to the current Trace. */
export const emit = (kind: EventKind, data: Record<string, unknown>): Effect.Effect<void> =>
  Effect.flatMap(Effect.service(Trace), (trace) => trace.emit(kind, data))

let counter = 0

/** Build a CloudEvents-shaped event. */
export const makeEvent = (subject: string, kind: EventKind, data: Record<string, unknown>, source = "smurfs"): RunEvent => ({
  specversion: "1.0",
  id: `${Date.now().toString(36)}-${(counter++).toString(36)}`,
  source,
  type: `smurfs.${kind}`,
  time: new Date().toISOString(),
  subject,
  data
})
