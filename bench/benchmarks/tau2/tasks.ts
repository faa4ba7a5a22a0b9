// τ²-bench's task file in zod (their `tau2.data_model.tasks.Task`): the user's scenario, the initial state and the
// evaluation criteria that score a conversation.
import { z } from "zod"

/** Who makes a tool call: the agent (`assistant`) or the simulated user (domains with user tools). */
export const Tau2Requestor = z.enum(["assistant", "user"])
export type Tau2Requestor = z.infer<typeof Tau2Requestor>

/** The components a task's reward is the product of (`RewardType`). */
export const Tau2RewardType = z.enum(["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"])
export type Tau2RewardType = z.infer<typeof Tau2RewardType>

/** A tool call of the reference trajectory (`Action`): replayed for the gold database, matched by ACTION. */
export const Tau2Action = z.object({
  action_id: z.string(),
  requestor: Tau2Requestor.default("assistant"),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  info: z.string().nullish(),
  /** The arguments ACTION compares; all of the call's when absent. */
  compare_args: z.array(z.string()).nullish()
})
export type Tau2Action = z.infer<typeof Tau2Action>

/** A function run on the environment (`EnvFunctionCall`). */
export const Tau2EnvFunctionCall = z.object({
  env_type: Tau2Requestor,
  func_name: z.string(),
  arguments: z.record(z.string(), z.unknown())
})
export type Tau2EnvFunctionCall = z.infer<typeof Tau2EnvFunctionCall>

/** An assertion on the environment (`EnvAssertion`): the function's boolean must equal `assert_value`. */
export const Tau2EnvAssertion = Tau2EnvFunctionCall.extend({
  assert_value: z.boolean().default(true),
  message: z.string().nullish()
})
export type Tau2EnvAssertion = z.infer<typeof Tau2EnvAssertion>

/** `StructuredUserInstructions`, or the plain text older tasks use. */
export const Tau2UserInstructions = z.union([
  z.object({
    domain: z.string(),
    reason_for_call: z.string(),
    known_info: z.string().nullish(),
    unknown_info: z.string().nullish(),
    task_instructions: z.string()
  }),
  z.string()
])
export type Tau2UserInstructions = z.infer<typeof Tau2UserInstructions>

/** What the user simulator is told (`UserScenario`). */
export const Tau2UserScenario = z.object({
  persona: z.string().nullish(),
  instructions: Tau2UserInstructions
})
export type Tau2UserScenario = z.infer<typeof Tau2UserScenario>

/** `EvaluationCriteria`; `reward_basis` defaults to `[DB, COMMUNICATE]` as theirs (the original τ-bench). */
export const Tau2EvaluationCriteria = z.object({
  actions: z.array(Tau2Action).nullish(),
  env_assertions: z.array(Tau2EnvAssertion).nullish(),
  communicate_info: z.array(z.string()).nullish(),
  nl_assertions: z.array(z.string()).nullish(),
  reward_basis: z.array(Tau2RewardType).default(["DB", "COMMUNICATE"])
})
export type Tau2EvaluationCriteria = z.infer<typeof Tau2EvaluationCriteria>

/** `InitialState`: database updates, actions and messages before the conversation starts. */
export const Tau2InitialState = z.object({
  initialization_data: z
    .object({
      agent_data: z.record(z.string(), z.unknown()).nullish(),
      user_data: z.record(z.string(), z.unknown()).nullish()
    })
    .nullish(),
  initialization_actions: z.array(Tau2EnvFunctionCall).nullish(),
  message_history: z.array(z.looseObject({ role: z.string() })).nullish()
})
export type Tau2InitialState = z.infer<typeof Tau2InitialState>

/** One τ² task (`Task`); fields this port does not read (issues, ticket...) are kept as they are. */
export const Tau2Task = z.looseObject({
  id: z.string(),
  description: z
    .object({
      purpose: z.string().nullish(),
      relevant_policies: z.string().nullish(),
      notes: z.string().nullish()
    })
    .nullish(),
  user_scenario: Tau2UserScenario,
  ticket: z.string().nullish(),
  initial_state: Tau2InitialState.nullish(),
  evaluation_criteria: Tau2EvaluationCriteria.nullish()
})
export type Tau2Task = z.infer<typeof Tau2Task>

/** A task file: a list of tasks. */
export const Tau2TaskFile = z.array(Tau2Task)

/** `split_tasks.json`: split name to task ids (`train`, `test`, `base`). */
export const Tau2TaskSplits = z.record(z.string(), z.array(z.string()))
export type Tau2TaskSplits = z.infer<typeof Tau2TaskSplits>
