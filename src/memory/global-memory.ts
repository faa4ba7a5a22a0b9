// Global memory: every step of every subtask (backtracked ones included) and each subtask's answer.
import type { Step } from "./step.ts"

export interface GlobalStep extends Step {
  /** Index of the subtask the step belongs to. */
  readonly subtask: number
  /** Depth of the step on its DFS path (0 = first step). */
  readonly depth: number
  /** True once a backtrack removed the step from the path; it stays here as experience. */
  backtracked: boolean
  /** True when the tool call failed (the step never joined the path). */
  readonly failed: boolean
}

export interface SubtaskAnswer {
  readonly subtask: string
  readonly answer: string
  /** Position of the subtask in the plan. */
  readonly index: number
  /** Why the subtask could not be solved, when it could not; its answer is then not a fact to use. */
  readonly unavailable?: string | undefined
}

export class GlobalMemory {
  readonly #steps: Array<GlobalStep> = []
  readonly #answers: Array<SubtaskAnswer> = []
  /** Per subtask, the subtasks whose answers it may read (a plan with dependencies); unset = every earlier one. */
  #dependencies: ReadonlyArray<ReadonlyArray<number>> | undefined

  get steps(): ReadonlyArray<GlobalStep> {
    return this.#steps
  }

  /** Every subtask's answer, in plan order (subtasks of a graph plan may finish in any order). */
  get answers(): ReadonlyArray<SubtaskAnswer> {
    return [...this.#answers].sort((a, b) => a.index - b.index)
  }

  /** Restrict what each subtask sees to its dependencies' answers. */
  useDependencies(dependencies: ReadonlyArray<ReadonlyArray<number>>): void {
    this.#dependencies = dependencies
  }

  /** The answers subtask `index` may use: its dependencies', else every earlier subtask's. */
  answersFor(index: number): ReadonlyArray<SubtaskAnswer> {
    const allowed = this.#dependencies?.[index]
    return this.answers.filter((a) => (allowed ? allowed.includes(a.index) : a.index < index))
  }

  /** Record a step (`failed` for a failed tool call); returns the stored entry. */
  record(subtask: number, depth: number, step: Step, failed = false): GlobalStep {
    const entry: GlobalStep = { ...step, subtask, depth, backtracked: false, failed }
    this.#steps.push(entry)
    return entry
  }

  /** Mark the latest live step of a subtask at `depth` as backtracked. */
  markBacktracked(subtask: number, depth: number): void {
    for (let i = this.#steps.length - 1; i >= 0; i--) {
      const s = this.#steps[i]!
      if (s.subtask === subtask && s.depth === depth && !s.backtracked && !s.failed) {
        s.backtracked = true
        return
      }
    }
  }

  /** Every step of one subtask, backtracked ones included. */
  stepsOf(subtask: number): ReadonlyArray<GlobalStep> {
    return this.#steps.filter((s) => s.subtask === subtask)
  }

  answer(subtask: string, answer: string, index: number = this.#answers.length, unavailable?: string): void {
    this.#answers.push({ subtask, answer, index, ...(unavailable !== undefined ? { unavailable } : {}) })
  }
}
