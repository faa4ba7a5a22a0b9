// What every method (smurfs, react, dfsdt) runs on and returns.
import type * as Effect from "effect/Effect"
import type { LanguageModel } from "../llm/language-model.ts"
import type { ToolLibrary } from "../tools/tool.ts"
import type { Trajectory } from "../trace/trajectory.ts"

export interface Task {
  /** Stable id (the ToolBench query_id, or a hash of the query for ad-hoc runs). */
  readonly id: string
  readonly query: string
  readonly tools: ToolLibrary
  /**
   * When the tools come from a recommender (`--toolset retrieve`): the tools for one query, from the
   * whole library. The Smurfs executor asks it per subtask; `tools` holds the set for the task's query.
   */
  readonly retrieve?: ((query: string) => Effect.Effect<ToolLibrary>) | undefined
  /** How `tools` was retrieved for the query, so that the trajectory records the task's set (a `retrieval` event of scope "task"). */
  readonly retrieved?: TaskRetrieval | undefined
}

export interface TaskRetrieval {
  readonly query: string
  readonly k: number
  readonly mode: string
  /** Best first; a set read back from a run directory has no scores. */
  readonly tools: ReadonlyArray<{ readonly name: string; readonly score?: number | undefined }>
  /** Said when the retrieval found no tool and fell back (recorded before the set, as an `error` event of role `retrieval`). */
  readonly warning?: string | undefined
}

/**
 * A method solves a task with the LanguageModel in context and returns its trajectory.
 * It never fails on model or tool misbehaviour: those end in an answer or a recorded give-up.
 * Only interruption escapes.
 */
export type Method = (task: Task) => Effect.Effect<Trajectory, never, LanguageModel>
