// Public API of smurfs: models, tools, memory, agents and traces, for use as a library.

export { AgentDepth, type AgentToolDefinition, defineAgentTool } from "./agents/agent-tool.ts"
export { ASK_USER, type AskUser, askUserTool, type UserQuestion } from "./agents/ask-user.ts"
export type { ChainOptions } from "./agents/chain.ts"
export { type DfsdtOptions, dfsdt } from "./agents/dfsdt.ts"
export { BudgetExhausted } from "./agents/errors.ts"
export type { PlanGraph, PlannedSubtask } from "./agents/plan-graph.ts"
export {
  chainProfileOptions,
  PROFILE_SETTINGS,
  PROFILES,
  type Profile,
  type ProfileName,
  smurfsProfileOptions
} from "./agents/profile.ts"
export { type ReactOptions, react } from "./agents/react.ts"
export { smurfs } from "./agents/smurfs.ts"
export type { GuardrailOptions, LoopRules, SmurfsExecutor, SmurfsOptions } from "./agents/smurfs-options.ts"
export { readSmurfsSource, type SmurfsSource, SmurfsSourceError } from "./agents/smurfs-source.ts"
export type { Method, Task } from "./agents/task.ts"
export { type Failure, type FailureKind, isFailure } from "./failure.ts"
export * from "./llm/errors.ts"
export {
  type GenerateOptions,
  type GenerateRequest,
  type GenerateResponse,
  LanguageModel,
  type LanguageModelShape,
  type Message,
  type ModelInfo,
  type ToolSpec
} from "./llm/language-model.ts"
export type { ProviderCheck, ProviderChecks, ProviderWording } from "./llm/providers.ts"
export { makeScriptedModel, type Script, type ScriptedReply, scriptedFileLayer, scriptedLayer } from "./llm/scripted.ts"
export {
  MODEL_DEFAULTS,
  type ModelOptions,
  modelLayer,
  type Provider,
  parseModelSpec,
  registerProvider
} from "./llm/spec.ts"
export { generateObject, MAX_REFLECTIONS, type ObjectRequest, type ObjectResult } from "./llm/structured.ts"
export { ContextBudget } from "./memory/context-budget.ts"
export { GlobalMemory } from "./memory/global-memory.ts"
export { LocalMemory } from "./memory/local-memory.ts"
export { Step } from "./memory/step.ts"
export { type SolveOptions, solve } from "./solve.ts"
export * from "./tools/index.ts"
export {
  dataOf,
  EVENT_TYPE_PREFIX,
  type EventDataOf,
  emit,
  eventType,
  isKind,
  isTopLevel,
  kindOf,
  Trace
} from "./trace/events.ts"
// the run record: zod schemas, and types of the same names
export {
  EventData,
  EventKind,
  EventLink,
  FinishType,
  RunEvent,
  TaskRecord,
  Totals,
  Trajectory
} from "./trace/record.ts"
export { EventListener, recording, totalsOf } from "./trace/trajectory.ts"
