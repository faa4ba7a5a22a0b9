// defineTool: a custom TypeScript tool from a name, a description, zod parameters and a function.
import type { z } from "zod"
import { safeCall } from "./call.ts"
import type { Tool } from "./tool.ts"

/** Context a tool implementation receives besides its arguments. */
export interface ToolContext {
  /** Fires when the call is abandoned (timeout or interruption); pass it to fetch and the like. */
  readonly signal: AbortSignal
}

export interface ToolDefinition<Shape extends z.ZodRawShape> {
  /** The name shown to models; letters, digits, `_` and `-` keep every provider happy. */
  readonly name: string
  /** What the tool does, for the model; the first line is its summary. */
  readonly description: string
  /** The arguments object; validated before `execute` runs. */
  readonly parameters: z.ZodObject<Shape>
  /** The implementation; may be sync or async, may throw: every outcome becomes a ToolResult. */
  readonly execute: (args: z.infer<z.ZodObject<Shape>>, context: ToolContext) => unknown
  /** Milliseconds before a call is abandoned; 30 s by default. */
  readonly timeoutMs?: number | undefined
  /** Where the tool came from, for traces. */
  readonly meta?: Readonly<Record<string, unknown>> | undefined
}

/** Build a Tool whose calls never fail: throws, rejections, timeouts and odd outputs become results. */
export const defineTool = <Shape extends z.ZodRawShape>(definition: ToolDefinition<Shape>): Tool => ({
  name: definition.name,
  description: definition.description,
  parameters: definition.parameters as unknown as z.ZodObject<z.ZodRawShape>,
  meta: definition.meta,
  call: (args) =>
    safeCall(definition.name, (signal) => definition.execute(args as z.infer<z.ZodObject<Shape>>, { signal }), {
      timeoutMs: definition.timeoutMs
    })
})
