// What one task's Smurfs run shares across its steps: the task, the resolved options and the memories.
import type { ContextBudget } from "../memory/context-budget.ts"
import type { GlobalMemory } from "../memory/global-memory.ts"
import type { AgentContext } from "./ask.ts"
import type { ResolvedOptions } from "./smurfs-options.ts"
import type { Task } from "./task.ts"

/** Everything one task's run shares. */
export interface PipelineContext extends AgentContext {
  readonly task: Task
  readonly options: ResolvedOptions
  readonly global: GlobalMemory
  readonly budget: ContextBudget
}
