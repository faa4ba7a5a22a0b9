// The one error of loading a tool library, whatever the source (file, module, api_list, MCP server).
import * as Data from "effect/Data"
import type { FailureKind } from "../failure.ts"

/** A tool library could not be loaded; the message says what is wrong with the source. */
export class ToolLoadError extends Data.TaggedError("ToolLoadError")<{
  readonly source: string
  readonly reason: string
}> {
  get kind(): FailureKind {
    return "bad-input"
  }
  override get message() {
    return `Cannot load tools from "${this.source}": ${this.reason}`
  }
}
