// What the conversation harness needs of a ported τ² domain: its policy, tasks, a fresh database per conversation, the
// tools over it, the database hash, the gold state and the reward. The domain port (bench/benchmarks/tau2/ domain,
// tools, gold replay, scoring) supplies it; tests supply a small one of their own.
import type * as Effect from "effect/Effect"
import type { Tool } from "../../../src/tools/tool.ts"
import type { DatasetError } from "../../datasets.ts"
import type { Reward, Termination, TranscriptMessage } from "./transcript.ts"
import type { UserScenario } from "./user-simulator.ts"

/** A τ² task as the harness reads it (the rest of τ²'s fields are the scorer's). */
export interface Tau2TaskView {
  readonly id: string
  readonly user_scenario: UserScenario
}

/** A judge's verdict on one natural-language assertion (τ²'s NLAssertionCheck). */
export interface NlVerdict {
  readonly nl_assertion: string
  readonly met: boolean
  readonly justification: string
}

/** A finished conversation, as the scorer reads it. */
export interface ScoredConversation<Db> {
  readonly messages: ReadonlyArray<TranscriptMessage>
  readonly termination: Termination
  /** The conversation's database at its end. */
  readonly db: Db
  /** A judge's verdicts on the task's nl_assertions (`--judge`); without them NL_ASSERTION is not evaluated. */
  readonly nlVerdicts?: ReadonlyArray<NlVerdict> | undefined
  /** Why there are no verdicts though a judge was asked (its failure), for the reward's notes. */
  readonly nlProblem?: string | undefined
}

/** One domain, loaded from a τ² checkout. */
export interface Tau2DomainView<Db = unknown, T extends Tau2TaskView = Tau2TaskView> {
  readonly name: string
  /** The agent's policy (policy.md), as the agent's system prompt holds it. */
  readonly policy: string
  readonly tasks: ReadonlyArray<T>
  /** split_tasks.json (`base`, `train`, `test`: task ids), when the checkout has it. */
  readonly splits?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
  /** The database a task's conversation starts from (a fresh one, its initial state applied): never shared. */
  readonly initialDb: (task: T) => Db
  /** The domain's tools on one conversation's database (its calls read and write it in place). */
  readonly tools: (db: Db) => ReadonlyArray<Tool>
  /** τ²'s hash of a database (sha256 of its canonical JSON). */
  readonly dbHash: (db: Db) => string
  /** The gold database of a task (its evaluation actions replayed on a fresh database); undefined without actions. */
  readonly goldDb: (task: T) => Db | undefined
  /** The task's natural-language assertions, which only a judge evaluates (none: nothing to judge). */
  readonly nlAssertions?: ((task: T) => ReadonlyArray<string>) | undefined
  /** The reward of a conversation, from the task's reward_basis, as τ²'s evaluator computes it. */
  readonly score: (task: T, conversation: ScoredConversation<Db>) => Reward
}

/** Loads a domain from a checkout (`--tau2 <dir> --domain <name>`); a missing or malformed file is a DatasetError. */
export type Tau2DomainLoader = (dir: string, domain: string) => Effect.Effect<Tau2DomainView<unknown>, DatasetError>
