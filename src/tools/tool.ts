// Tools: a name, a description, zod parameters and a call that never fails (failures are results).
import type * as Effect from "effect/Effect"
import type { z } from "zod"

/** What a tool call returned; same meaning as StableToolBench's `{error, response}`. */
export interface ToolResult {
  /** False when the tool failed (threw, timed out, returned an error). */
  readonly ok: boolean
  /** The response text the model sees (possibly truncated). */
  readonly content: string
  /** Why the call failed, when it did. */
  readonly error?: string | undefined
  /**
   * The response as a tool server gave it when it is JSON other than a string (an object, a list, a number; numbers
   * keep the text they were recorded with): `content` is its JSON text. The reference profile nests it in the
   * `{"error", "response"}` JSON as StableToolBench's `json.dumps(response)` does, rather than a string of JSON.
   */
  readonly structured?: unknown
  /** True when `content` was cut to the size limit. */
  readonly truncated?: boolean | undefined
  /** True when a cache answered instead of the tool; such calls are not counted as tool calls. */
  readonly cached?: boolean | undefined
  /**
   * True when nothing recorded the call and nothing simulated it (the offline environment's answer):
   * StableToolBench's server would have asked its simulator. Runs count these next to their pass rates.
   */
  readonly missed?: boolean | undefined
  /** How a tool environment served the call (the environment ledger); absent for a tool that is not served by one. */
  readonly served?: ToolServed | undefined
}

/**
 * The environment ledger's entry of a call: `replayed` from a recording (an `exact` or a `lenient` match of the
 * arguments), `simulated` by a simulator model (`simulator` names it; absent when the response was simulated by an
 * earlier run and stored), `missed` (nothing recorded it and nothing simulated it) or `failed` (the simulator could
 * not produce a response).
 */
export interface ToolServed {
  readonly by: "replayed" | "simulated" | "missed" | "failed"
  readonly match?: "exact" | "lenient" | undefined
  readonly simulator?: string | undefined
}

/** A tool_call event's ledger fields for a result (ToolCallData `served`, `match`, `simulator`); none for a direct tool. */
export const ledgerFields = (
  result: Pick<ToolResult, "served" | "missed">
): { served?: ToolServed["by"]; match?: "exact" | "lenient"; simulator?: string } => {
  const served = result.served ?? (result.missed ? { by: "missed" as const } : undefined)
  if (served === undefined) return {}
  return {
    served: served.by,
    ...(served.match === undefined ? {} : { match: served.match }),
    ...(served.simulator === undefined ? {} : { simulator: served.simulator })
  }
}

export interface Tool {
  /** The name shown to models; unique within a library. */
  readonly name: string
  readonly description: string
  /** The arguments object; the single source of truth for the model's JSON Schema and for validation. */
  readonly parameters: z.ZodObject<z.ZodRawShape>
  /**
   * `parameters` as JSON Schema, when the tool's source has it without converting zod (a ToolBench doc):
   * it must equal `jsonSchemaOf(parameters)`. Showing a task's tools to a model then builds no zod schema;
   * such a source may build `parameters` on first use. Read it through `parametersJsonSchema`.
   */
  readonly parametersJsonSchema?: Readonly<Record<string, unknown>> | undefined
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

/**
 * Key of `Tool.meta` holding the arguments schema StableToolBench shows for the tool when it differs
 * from `parameters` (it hides the optional parameters of an API without required ones). Only the
 * baselines' function list and the converted files use it; the Smurfs executor sees every parameter.
 */
export const STB_PARAMETERS = "stableToolBenchParameters"

/**
 * Key of `Tool.meta` holding the function's parameters exactly as StableToolBench's rapidapi.py writes them
 * (`integer` for NUMBER, `required`/`optional` lists starting with `""`): what the reference profile sends.
 */
export const STB_FUNCTION_PARAMETERS = "stableToolBenchFunctionParameters"

/** Key of `Tool.meta` holding `STB_PARAMETERS` as JSON Schema, when the source has it (see `Tool.parametersJsonSchema`). */
export const STB_JSON_SCHEMA = "stableToolBenchJsonSchema"

/**
 * Validate (and coerce) a call's arguments with the tool's schema. Without zod's JIT: a ToolBench
 * library is built for each task, so each schema parses only a few calls, and compiling a fast path
 * for each (zod does so on an object schema's first parse) costs more than it saves. Same result.
 */
export const parseToolArgs = (tool: Tool, args: unknown) => tool.parameters.safeParse(args, { jitless: true })

/** The arguments schema StableToolBench would show for `tool`: its own unless the meta holds another. */
export const stableToolBenchParameters = (tool: Tool): z.ZodObject<z.ZodRawShape> => {
  const shown = tool.meta?.[STB_PARAMETERS] as z.ZodObject<z.ZodRawShape> | undefined
  return typeof shown?.safeParse === "function" && typeof shown.shape === "object" ? shown : tool.parameters
}
