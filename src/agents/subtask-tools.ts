// Per-subtask tools: with a recommender, each subtask of a plan sees the tools retrieved for it.
import * as Effect from "effect/Effect"
import { ASK_USER } from "./ask-user.ts"
import type { PipelineContext } from "./pipeline-context.ts"

/**
 * The pipeline context for one subtask: the task's own library, or, when the task carries a
 * retriever, the tools recommended for the subtask's text (the planner's subtask is the query).
 * Tools the pipeline adds itself (ask_user) stay available to every subtask.
 */
export const withSubtaskTools = (ctx: PipelineContext, subtask: string): Effect.Effect<PipelineContext> => {
  const retrieve = ctx.task.retrieve
  if (retrieve === undefined) return Effect.succeed(ctx)
  return Effect.map(retrieve(subtask), (picked) => {
    const kept = ctx.task.tools.tools.filter((t) => t.name === ASK_USER && !picked.tools.some((p) => p.name === t.name))
    return { ...ctx, task: { ...ctx.task, tools: { name: picked.name, tools: [...picked.tools, ...kept] } } }
  })
}
