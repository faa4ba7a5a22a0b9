// A plan as a dependency graph: validation of the planner's `dependsOn` indices and the order they allow.

/** One planned subtask; `dependsOn` holds indices (0 = first) of the subtasks whose answers it needs. */
export interface PlannedSubtask {
  readonly task: string
  readonly dependsOn: ReadonlyArray<number>
}

/**
 * A plan. `sequential`: the planner gave no dependencies, so subtasks run one after another and each
 * sees every earlier answer (the paper's loop). `graph`: subtasks run as soon as their dependencies
 * are answered, and each sees exactly its dependencies' answers.
 */
export interface PlanGraph {
  readonly mode: "sequential" | "graph"
  readonly subtasks: ReadonlyArray<PlannedSubtask>
}

/** What is wrong with a plan's dependencies, in words the planner can act on; undefined when valid. */
export const planProblem = (subtasks: ReadonlyArray<PlannedSubtask>): string | undefined => {
  const problems: Array<string> = []
  const n = subtasks.length
  subtasks.forEach((s, i) => {
    if (s.task.trim().length === 0) problems.push(`subtask ${i} is empty`)
    for (const d of s.dependsOn) {
      if (d === i) problems.push(`subtask ${i} depends on itself`)
      else if (!Number.isInteger(d) || d < 0 || d >= n)
        problems.push(`subtask ${i} depends on ${d}, but the subtasks are numbered 0 to ${n - 1}`)
    }
  })
  if (problems.length > 0) return `${problems.join("; ")}.`
  const cycle = findCycle(subtasks)
  return cycle
    ? `the dependencies form a cycle (${cycle.join(" -> ")}); a subtask can only depend on subtasks that do not depend on it.`
    : undefined
}

/** A dependency cycle as a list of indices (first repeated at the end), if there is one. */
const findCycle = (subtasks: ReadonlyArray<PlannedSubtask>): Array<number> | undefined => {
  const state = new Array<0 | 1 | 2>(subtasks.length).fill(0) // 0 new, 1 on the stack, 2 done
  const stack: Array<number> = []
  const visit = (i: number): Array<number> | undefined => {
    state[i] = 1
    stack.push(i)
    for (const d of subtasks[i]!.dependsOn) {
      if (state[d] === 1) return [...stack.slice(stack.indexOf(d)), d]
      if (state[d] === 0) {
        const found = visit(d)
        if (found) return found
      }
    }
    stack.pop()
    state[i] = 2
    return undefined
  }
  for (let i = 0; i < subtasks.length; i++) {
    if (state[i] !== 0) continue
    const found = visit(i)
    if (found) return found
  }
  return undefined
}

/** The same subtasks run one after another: the fallback when the dependencies stay invalid. */
export const sequentialPlan = (tasks: ReadonlyArray<string>): PlanGraph => ({
  mode: "sequential",
  subtasks: tasks.map((task, i) => ({ task, dependsOn: Array.from({ length: i }, (_, j) => j) }))
})

/** Indices a subtask's executor may read answers from: its dependencies, or every earlier one in a sequential plan. */
export const dependenciesOf = (plan: PlanGraph, index: number): ReadonlyArray<number> =>
  plan.subtasks[index]?.dependsOn ?? []
