// τ²-bench (sierra-research/tau2-bench, MIT) ported: domains, gold replay and scoring. What a harness imports.

export { diffTau2Db, type Tau2DbChange } from "./diff.ts"
export {
  bindTau2Tools,
  callTau2Tool,
  canonicalDbJson,
  dbHash,
  runTau2Tool,
  type Tau2DomainSpec,
  type Tau2ParamSpec,
  type Tau2Tool,
  Tau2ToolError,
  type Tau2ToolMessage,
  type Tau2ToolSpec,
  type Tau2ToolType,
  toJsonStr
} from "./domain.ts"
export { TAU2_DOMAIN_SPECS, tau2DomainNames, tau2DomainSpec } from "./domains.ts"
export { replayGold, type Tau2GoldReplay, type Tau2GoldStep } from "./gold.ts"
export { loadTau2Domain, loadTau2DomainSync, Tau2DataError, type Tau2Domain } from "./load.ts"
export {
  actionMatchesCall,
  checkCommunicateInfo,
  computePassHatKs,
  isSuccessful,
  pairToolCalls,
  passHatK,
  replayConversation,
  scoreConversation,
  type Tau2ActionCheck,
  type Tau2CommunicateCheck,
  type Tau2Conversation,
  type Tau2DbCheck,
  Tau2Message,
  type Tau2MessageInput,
  Tau2NlAssertionCheck,
  type Tau2PassHatK,
  type Tau2ReplayMismatch,
  type Tau2Reward,
  type Tau2ScoreOptions,
  Tau2Termination,
  Tau2ToolCall,
  type Tau2TrialResult
} from "./score.ts"
export {
  Tau2Action,
  Tau2EvaluationCriteria,
  Tau2RewardType,
  Tau2Task,
  Tau2TaskFile,
  Tau2TaskSplits,
  Tau2UserInstructions,
  Tau2UserScenario
} from "./tasks.ts"
