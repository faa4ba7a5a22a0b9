// Local memory: the steps on the current DFS path of one subtask; backtracking pops them.
import type { Step } from "./step.ts"

export class LocalMemory {
  readonly #steps: Array<Step> = []

  /** Steps from the root of the search to the current node. */
  get steps(): ReadonlyArray<Step> {
    return this.#steps
  }

  /** The current depth of the search: the number of steps on the path. */
  get depth(): number {
    return this.#steps.length
  }

  push(step: Step): void {
    this.#steps.push(step)
  }

  /** Remove and return the last step (a backtrack), or undefined at the root. */
  pop(): Step | undefined {
    return this.#steps.pop()
  }
}
