// The prefix every Smurfs request of a task shares (system text, tools, query), then what every request of one
// subtask shares (the earlier subtasks' answers, the subtask, its steps), so that a server's prefix cache computes
// each once: a request differs from the previous one only in its end.
import type { Tool } from "../tools/tool.ts"
import type { SharedContext } from "./ask.ts"
import { toolList, toolListWithSchemas } from "./tool-docs.ts"

/** What every agent of a task sees first: the tools and the question (`prompts/task-context.md`). */
export interface TaskView {
  readonly query: string
  /** Every tool the agents may use. */
  readonly tools: ReadonlyArray<Tool>
  /**
   * The fused executor's task (`--executor fused`): its system text (the roles of its two requests per step) and
   * each tool's parameters in the tool list, which its one executor request reads there.
   */
  readonly fused?: boolean | undefined
}

/** What every agent of a subtask sees first: the task's view, then the subtask's. */
export interface SubtaskView extends TaskView {
  readonly subtask: string
  /** The subtask's position in the plan (0 is the first): its number in the log of subtasks. */
  readonly index: number
  /** The earlier subtasks with their answers (`subtaskLog`), rendered within a token room. */
  readonly background: (room: number) => string
  /** The steps so far, rendered within a token room. */
  readonly memory: (room: number) => string
}

/**
 * Subtasks with their answers, one numbered entry each, as the log of the task reads them. The same entries
 * open the next subtask's requests and the final answer's, so each is written once and then only appended to.
 */
export const subtaskLog = (
  answers: ReadonlyArray<{ readonly index: number; readonly subtask: string; readonly answer: string }>
): string => answers.map((a) => `${a.index + 1}. ${a.subtask}\n   Answer: ${a.answer || "(no answer)"}\n`).join("")

/** The values of `prompts/task-context.md` (`task-context-fused.md`). */
const taskValues = (view: TaskView) => ({
  tools: (view.fused ? toolListWithSchemas(view.tools) : toolList(view.tools)) || "(none listed)",
  query: view.query
})

/** The task prefix's template: the fused executor's task has its own system text. */
const taskTemplate = (view: TaskView) => (view.fused ? "task-context-fused" : "task-context")

/** The prefix of every request of a task (`prompts/task-context.md`): the planner's and the final answer's too. */
export const taskContext = (view: TaskView): SharedContext => ({
  template: taskTemplate(view),
  values: taskValues(view),
  fit: {}
})

/** The shared prefix of a subtask's requests: the task's, then `prompts/subtask-context.md`. */
export const subtaskContext = (view: SubtaskView): SharedContext => ({
  template: [taskTemplate(view), "subtask-context"],
  values: { ...taskValues(view), subtask: view.subtask, number: view.index + 1 },
  fit: { background: view.background, memory: view.memory }
})
