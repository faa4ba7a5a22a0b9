// The prefix every request of one subtask shares (system text, tools, subtask, earlier answers, memory), so that a
// server's prefix cache computes it once: each agent's request differs only in its end.
import type { Tool } from "../tools/tool.ts"
import type { SharedContext } from "./ask.ts"
import { toolList } from "./tool-docs.ts"

/** What every agent of a subtask sees first. */
export interface SubtaskView {
  readonly subtask: string
  /** Answers to the earlier subtasks, so a dependent subtask can use them (rendered within a token room). */
  readonly background: (room: number) => string
  /** The steps so far, rendered within a token room. */
  readonly memory: (room: number) => string
  /** Every tool of the task. */
  readonly tools: ReadonlyArray<Tool>
}

/** The shared prefix of a subtask's requests (`prompts/subtask-context.md`). */
export const subtaskContext = (view: SubtaskView): SharedContext => ({
  template: "subtask-context",
  values: { tools: toolList(view.tools), subtask: view.subtask },
  fit: { background: view.background, memory: view.memory }
})
