// Planning agent: splits the query into self-contained subtasks (sees only the query).
import { Effect } from "effect"
import { z } from "zod"
import { type AgentContext, ask } from "./ask.ts"

export const Plan = z.object({ subtasks: z.array(z.string()) })

/** The subtasks for `query`, at most `maxSubtasks`; an empty plan is the query itself. */
export const plan = Effect.fn("Planner.plan")(function* (ctx: AgentContext, query: string, maxSubtasks: number) {
  const { subtasks } = yield* ask(ctx, { role: "planner", template: "planner", values: { query, maxSubtasks }, schema: Plan })
  const cleaned = subtasks.map((s) => s.trim()).filter((s) => s.length > 0).slice(0, maxSubtasks)
  return cleaned.length > 0 ? cleaned : [query]
})
