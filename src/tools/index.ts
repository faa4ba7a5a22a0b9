// Public API of the tools layer: define tools, build libraries, adapt ToolBench APIs, choose environments.

export {
  guardToolCall,
  OBSERVATION_MAX_CHARS,
  SAFE_CALL_DEFAULTS,
  type SafeCallOptions,
  safeCall,
  truncateObservation
} from "./call.ts"
export { defineTool, type ToolContext, type ToolDefinition } from "./define-tool.ts"
export { demoLibrary } from "./demo/index.ts"
export { canonicalArgs } from "./environments/canonical.ts"
export {
  chainEnvironments,
  ENVIRONMENT_NAMES,
  type EnvironmentChainOptions,
  makeEnvironmentChain
} from "./environments/chain.ts"
export type { ToolCall, ToolEnvironment } from "./environments/environment.ts"
export { ToolEnvError } from "./environments/environment.ts"
export { makeOfflineEnvironment, type OfflineMode } from "./environments/offline.ts"
export { makeReplayIndex, parseRecordedResponse, type Recording, type ReplayIndex } from "./environments/recorded.ts"
export {
  loadCacheDir,
  loadReplayIndex,
  loadResponsesJsonl,
  makeReplayEnvironment,
  type ReplayEnvironment
} from "./environments/replay.ts"
export { makeSimulatedEnvironment, SIMULATED_STORE_FILE, type SimulatedEnvironment } from "./environments/simulated.ts"
export {
  DuplicateToolName,
  excludeTools,
  findTool,
  makeToolLibrary,
  parametersJsonSchema,
  resolveTool,
  toolNames,
  toolSpec,
  toolSpecs
} from "./library.ts"
export { type LoadToolsOptions, loadToolLibrary, ToolLoadError } from "./load.ts"
export type { Tool, ToolLibrary, ToolResult } from "./tool.ts"
export {
  apiDescription,
  apiDocToTool,
  apiParameters,
  type ToolbenchToolOptions,
  toolbenchLibrary
} from "./toolbench/adapter.ts"
export { ApiDoc, ApiParameter } from "./toolbench/api-doc.ts"
export {
  changeName,
  functionName,
  standardizeCategory,
  standardizeName,
  standardizeParameterName,
  stdApiName,
  stdToolName
} from "./toolbench/names.ts"
