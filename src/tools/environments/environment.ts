// A ToolEnvironment decides how a ToolBench call is served (replay, simulated, offline); environments chain.
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type { FailureKind } from "../../failure.ts"
import type { ToolResult } from "../tool.ts"
import type { ApiDoc } from "../toolbench/api-doc.ts"

/** One ToolBench API call as environments see it. */
export interface ToolCall {
  readonly doc: ApiDoc
  /** Standardized tool name (`keyword_analysis`). */
  readonly stdTool: string
  /** Standardized API name, reserved names prefixed (`popularsitesforquery`, `is_id`). */
  readonly stdApi: string
  /** The validated arguments, keyed by standardized parameter names. */
  readonly args: Record<string, unknown>
}

export interface ToolEnvironment {
  readonly name: string
  /** The response, or `undefined` for a miss (the next environment of a chain answers). Never fails. */
  readonly serve: (call: ToolCall) => Effect.Effect<ToolResult | undefined>
}

/** An environment could not be built (a recordings file or folder is missing or unreadable). */
export class ToolEnvError extends Data.TaggedError("ToolEnvError")<{
  readonly environment: string
  readonly reason: string
}> {
  get kind(): FailureKind {
    return "bad-input"
  }
  override get message() {
    return `Cannot set up the "${this.environment}" tool environment: ${this.reason}`
  }
}
