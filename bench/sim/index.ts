// The simulated model for benchmarks and tests: `simModelLayer("sim:latency=100ms,fault=0.1,seed=7")`, and the task it answers for.
export { CurrentTask, withCurrentTask } from "./current-task.ts"
export { type KnownApi, readRecordings, type SimQuery, type SimTask, simTaskOf } from "./knowledge.ts"
export { makeSimModel, SIM_NOTE, type SimModel, type SimStats, simModelLayer } from "./model.ts"
export { FAULT_KINDS, type FaultKind, parseSimSpec, type SimOptions, simDefaults } from "./options.ts"
export { TOKENIZER } from "./tokens.ts"
