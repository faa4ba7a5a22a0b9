// Tools: a name, a description, zod parameters and a call that never fails (failures are results).
import type { Effect } from "effect"
import type { z } from "zod"

/** What a tool call returned; same meaning as StableToolBench's `{error, response}`. */
export interface ToolResult {
  /** False when the tool failed (threw, timed out, returned an error). */
  readonly ok: boolean
  /** The response text the model sees (possibly truncated). */
  readonly content: string
  /** Why the call failed, when it did. */
  readonly error?: string | undefined
  /** True when `content` was cut to the size limit. */
  readonly truncated?: boolean | undefined
  /** True when a cache answered instead of the tool; such calls are not counted as tool calls. */
  readonly cached?: boolean | undefined
}

export interface Tool {
  /** The name shown to models; unique within a library. */
  readonly name: string
  readonly description: string
  /** The arguments object; the single source of truth for the model's JSON Schema and for validation. */
  readonly parameters: z.ZodObject<z.ZodRawShape>
  /** Call with already-validated arguments. Never fails: errors, timeouts and garbage become `ok: false` results. */
  readonly call: (args: Record<string, unknown>) => Effect.Effect<ToolResult>
  /** Where the tool came from (e.g. the ToolBench tool and API), for traces and converters. */
  readonly meta?: Readonly<Record<string, unknown>> | undefined
}

/** A named set of tools. */
export interface ToolLibrary {
  readonly name: string
  readonly tools: ReadonlyArray<Tool>
}
