// A trajectory that answers at once, without a model: for tests of the runner and the run directory.
import { Effect } from "effect"
import type { Method, Task } from "../src/agents/task.ts"
import type { Trajectory } from "../src/trace/record.ts"

/** The trajectory of a task answered with `finalAnswer`, no calls made. */
export const answeredTrajectory = (task: Task, finalAnswer: string): Trajectory => ({
  taskId: task.id,
  query: task.query,
  method: "count",
  model: "m",
  finalAnswer,
  finishType: "give_answer",
  events: [],
  totals: {
    modelCalls: 0,
    promptTokens: 0,
    completionTokens: 0,
    toolCalls: 0,
    backtracks: 0,
    wallMs: 0,
    guardrails: {}
  }
})

/** A method that answers "ok" at once, without a model. */
export const answering: Method = (task) => Effect.succeed(answeredTrajectory(task, "ok"))
