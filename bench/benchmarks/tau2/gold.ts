// The gold database of a task as τ²'s EnvironmentEvaluator builds it: a fresh environment with the task's initial
// state, then every `evaluation_criteria.actions` call in order (a failing call is kept as τ² keeps it: logged, and
// whatever it wrote before failing stays).
import { callTau2Tool, type Tau2ToolMessage } from "./domain.ts"
import type { Tau2Domain } from "./load.ts"
import type { Tau2Action, Tau2Task } from "./tasks.ts"

/** One gold action and what the tool answered. */
export interface Tau2GoldStep {
  readonly action: Tau2Action
  readonly message: Tau2ToolMessage
}

/** A task's gold state: the database after its actions, its hash, and each action's answer. */
export interface Tau2GoldReplay {
  readonly taskId: string
  readonly db: unknown
  readonly hash: string
  readonly steps: ReadonlyArray<Tau2GoldStep>
}

/**
 * Replay `task`'s gold actions on a fresh database of `domain`. An action by the user (domains with user tools) has
 * no tools here: it is answered as an unknown tool, as this port has no user toolkit.
 */
export const replayGold = (domain: Tau2Domain, task: Tau2Task): Tau2GoldReplay => {
  const db = domain.initialDb(task)
  const tools = domain.tools(db)
  const steps = (task.evaluation_criteria?.actions ?? []).map(
    (action): Tau2GoldStep => ({
      action,
      message:
        action.requestor === "user"
          ? { content: `Error: no user tools in domain ${domain.name}`, error: true }
          : callTau2Tool(tools, action.name, action.arguments)
    })
  )
  return { taskId: task.id, db, hash: domain.hashDb(db), steps }
}
