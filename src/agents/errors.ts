// Failures of the agent pipeline itself (as opposed to the model's or a tool's).
import * as Data from "effect/Data"
import type { FailureKind } from "../failure.ts"

/** The task used up its model-call budget; the pipeline stops instead of looping on. */
export class BudgetExhausted extends Data.TaggedError("BudgetExhausted")<{
  readonly maxModelCalls: number
}> {
  get kind(): FailureKind {
    return "failed"
  }
  /** The pipeline answers from what it gathered and stops: no further call is made. */
  get fatalToTask(): boolean {
    return true
  }
  override get message() {
    return `The task used its budget of ${this.maxModelCalls} model calls. Raise maxModelCalls, or lower maxSteps / maxSubtasks.`
  }
}
