// Planning agent: splits the query into self-contained subtasks (sees the query and the tools), optionally with dependencies.
import * as Effect from "effect/Effect"
import { z } from "zod"
import { emit } from "../trace/events.ts"
import { spanFn } from "../trace/span-fn.ts"
import { type AgentContext, ask } from "./ask.ts"
import { type PlanGraph, type PlannedSubtask, planProblem, sequentialPlan } from "./plan-graph.ts"
import { type TaskView, taskContext } from "./subtask-context.ts"

/** A subtask is its text, or an object with the indices of the subtasks it depends on. */
export const PlanEntry = z.union([
  z.string(),
  z.object({ task: z.string(), dependsOn: z.array(z.number().int()).optional() })
])
export const Plan = z.object({ subtasks: z.array(PlanEntry) })
type Plan = z.infer<typeof Plan>

const entryTask = (e: z.infer<typeof PlanEntry>) => (typeof e === "string" ? e : e.task).trim()

/** True when some subtask names dependencies: then the plan is run as a graph. */
const hasDependencies = (p: Plan) => p.subtasks.some((e) => typeof e !== "string" && e.dependsOn !== undefined)

/** The plan's subtasks (at most `max`) with their dependencies, as the planner wrote them. */
const graphEntries = (p: Plan, max: number): Array<PlannedSubtask> =>
  p.subtasks
    .slice(0, max)
    .map((e) => ({ task: entryTask(e), dependsOn: typeof e === "string" ? [] : [...new Set(e.dependsOn ?? [])] }))

/**
 * The subtasks for `query`, at most `maxSubtasks`. A plan without dependencies is sequential, as in
 * the paper (empty subtasks dropped; an empty plan is the query itself). Invalid dependencies (an
 * unknown index, a self-reference, a cycle) are reflected back to the planner; if they stay invalid,
 * the same subtasks run one after another.
 */
export const plan = spanFn("Planner.plan")(function* (ctx: AgentContext, view: TaskView, maxSubtasks: number) {
  const query = view.query
  let last: Plan | undefined // the last reply that parsed, kept for the sequential fallback
  const check = (p: Plan) => {
    last = p
    if (!hasDependencies(p)) return undefined
    const problem = planProblem(graphEntries(p, maxSubtasks))
    return problem ? { guardrail: "plan_dependencies", error: `invalid dependsOn: ${problem}` } : undefined
  }
  const reply = yield* ask(ctx, {
    role: "planner",
    template: "planner",
    // the task's prefix, which every later request of the task starts with
    context: taskContext(view),
    values: { maxSubtasks },
    schema: Plan,
    check
  }).pipe(
    Effect.catchTag("MalformedOutput", (e) =>
      last !== undefined && e.error.startsWith("invalid dependsOn")
        ? Effect.succeed({ fallback: last, error: e.error })
        : Effect.fail(e)
    )
  )
  if ("fallback" in reply) {
    const tasks = reply.fallback.subtasks
      .map(entryTask)
      .filter((s) => s.length > 0)
      .slice(0, maxSubtasks)
    yield* emit("plan_invalid", { error: reply.error, fallback: "sequential" })
    return sequentialPlan(tasks.length > 0 ? tasks : [query])
  }
  if (hasDependencies(reply)) return { mode: "graph", subtasks: graphEntries(reply, maxSubtasks) } satisfies PlanGraph
  const tasks = reply.subtasks
    .map(entryTask)
    .filter((s) => s.length > 0)
    .slice(0, maxSubtasks)
  return sequentialPlan(tasks.length > 0 ? tasks : [query])
})
