// Options of the Smurfs pipeline and its guardrails, with every default in one place.
import type { ContextBudgetOptions } from "../memory/context-budget.ts"
import type { RunEvent } from "../trace/events.ts"
import type { AskUser } from "./ask-user.ts"
import type { ReferenceAgents } from "./smurfs-reference.ts"

/**
 * The rules of the subtask loop where the Smurfs authors' code and ours differ (docs/fidelity.md).
 * Ours by default; the authors' with `reference`.
 */
export interface LoopRules {
  /** `maxAgentErrors` attempts in a row that reach no tool end the subtask (ours); theirs has no such end. */
  readonly stall: boolean
  /** Bad tool choices in a row after which the first remaining tool is taken without a choice (theirs: 4). */
  readonly forceToolAfter: number | undefined
  /** Keep the previous hint when the verifier fails or its status cannot be read (theirs); ours drops it. */
  readonly keepHint: boolean
  /** Tool errors that are observations, a step like any response (theirs: the tool server's known error strings). */
  readonly errorObservations: ReadonlyArray<string>
  /** Observations reach the agents whole, as the full `{"error", "response"}` JSON (theirs); ours are cut to the budget. */
  readonly wholeObservations: boolean
  /**
   * A tool response of at most this many characters is the step's answer as it is, with no Answer agent call (the
   * verifier reads the response itself, continuing the call's exchange; the final answer condenses it); undefined
   * (theirs) asks the Answer agent on every step. Ours: `SHORT_RESPONSE_CHARS` (1,024), the Answer agent condenses
   * only longer responses: on the modelled server its step answers were a quarter of a task's GPU time
   * (docs/performance.md, issue 33).
   */
  readonly answerShortResponses?: number | undefined
  /**
   * After a call that reached its tool and failed, the executor thinks anew at the same node (the paper's step, and
   * theirs). Off (ours): the thought stands and the next attempt continues the failed call's exchange with its
   * response, so the tool choice and the arguments read what went wrong; on the modelled server a re-thought was
   * ~45 reply tokens of every failed call (docs/performance.md).
   */
  readonly rethink: boolean
}

/**
 * A tool response this short (characters) is the step's answer as it is in the `improved` loop: what StableToolBench
 * shows ReAct of any response (its 1,024-character cut), which the verifier and the final answer read whole too.
 */
export const SHORT_RESPONSE_CHARS = 1024

/** StableToolBench's tool server's known error strings, which the authors' code keeps as observations. */
export const SERVER_ERROR_STRINGS = [
  "API not working error...",
  "Unauthorized error...",
  "Unsubscribed error...",
  "Too many requests error...",
  "Rate limit per minute error...",
  "Message error..."
] as const

/**
 * How the Executor agent works in the `improved` profile: `fused` (the default): one request for the thought, the tool
 * and its arguments (one JSON object, or a native tool call with `toolCalling: "native"`), and one for the step answer
 * with its verdict; or the paper's three requests per step (thought, tool choice, arguments, then the step answer and
 * the verdict), `three-call`, which `reference` always runs.
 */
export const EXECUTORS = ["three-call", "fused"] as const
export type SmurfsExecutor = (typeof EXECUTORS)[number]

/** The executor a profile runs when none is asked for: the authors' three requests under `reference`, else ours. */
export const defaultExecutor = (profile: string | undefined): SmurfsExecutor =>
  profile === "reference" ? "three-call" : smurfsDefaults.executor

/** Why settings that ask for the fused executor under `reference` are refused (the library ignores it there). */
export const executorUnderReference =
  "--executor fused is an option of the improved profile: --profile reference runs the Smurfs authors' three requests per step as they ran. Drop --executor fused, or use --profile improved."

export const ourLoopRules: LoopRules = {
  stall: true,
  forceToolAfter: undefined,
  keepHint: false,
  errorObservations: [],
  wholeObservations: false,
  answerShortResponses: SHORT_RESPONSE_CHARS,
  rethink: false
}
export const referenceLoopRules: LoopRules = {
  stall: false,
  forceToolAfter: 4,
  keepHint: true,
  errorObservations: SERVER_ERROR_STRINGS,
  wholeObservations: true,
  rethink: true
}

/** Guardrails (MARCO) on the agents' outputs; each can be switched off. */
export interface GuardrailOptions {
  /** Reflect invalid JSON / schema errors back to the model; off = no reflection retries. */
  readonly format: boolean
  /** Reject a tool name that is not among the allowed tools, naming the valid ones. */
  readonly unknownTool: boolean
  /** Add the closest valid tool name (edit distance) to the unknown-tool reflection. */
  readonly suggestTool: boolean
  /** Drop arguments the tool does not declare (a traced event, no retry). */
  readonly extraParams: boolean
  /** Reflect missing required arguments. */
  readonly missingParams: boolean
  /** Reflect violations of the tool schema's static rules (types, enum, min/max, length, pattern). */
  readonly paramRules: boolean
  /** Reflect argument values that appear nowhere in the query, subtask or memory. */
  readonly grounding: boolean
  /** Reflection retries after the first attempt of one call. */
  readonly maxReflections: number
}

export interface SmurfsOptions {
  /**
   * Accepted steps on a subtask's current path (its DFS depth) before the subtask is answered from
   * global memory; a failed call or an agent error costs no step and a backtrack gives one back.
   */
  readonly maxSteps?: number | undefined
  /**
   * Attempts in a row that reach no tool (an agent's reply unusable after its reflections, an unknown
   * tool name, no valid arguments) before the subtask is answered from memory; the reference retries 4 times.
   */
  readonly maxAgentErrors?: number | undefined
  /** Upper bound on the planner's subtasks; extra ones are dropped. */
  readonly maxSubtasks?: number | undefined
  /** Upper bound on model calls for the whole task (reflection retries included). */
  readonly maxModelCalls?: number | undefined
  /**
   * Milliseconds before a tool call is abandoned as failed. Tools made with defineTool or the ToolBench
   * adapter have their own timeout; this one also bounds a hand-written Tool whose call never ends.
   */
  readonly toolTimeoutMs?: number | undefined
  /**
   * Subtasks of a plan with dependencies that may run at the same time (their model calls overlap);
   * a sequential plan always runs one subtask at a time.
   */
  readonly maxParallelSubtasks?: number | undefined
  /**
   * Append "Unavailable: <subtask> (<reason>)" to the final answer when some subtasks failed and others
   * answered (AMCP's fallback). On for people; `smurfs bench` turns it off, because ToolEval labels an
   * answer that says what is missing Unsolved. The trace's final_answer event names them either way.
   */
  readonly reportUnavailable?: boolean | undefined
  /** Planning agent on; off = the query is the only subtask (ablation). */
  readonly planner?: boolean | undefined
  /** Answer agent on; off = the raw observation is the answer (ablation). */
  readonly answerer?: boolean | undefined
  /** Verifier agent on; off = the first answer is accepted (ablation). */
  readonly verifier?: boolean | undefined
  readonly guardrails?: Partial<GuardrailOptions> | undefined
  /** Context budget settings; the context size itself comes from the model. */
  readonly budget?: Omit<ContextBudgetOptions, "contextTokens"> | undefined
  /** Receives every event as it happens (the CLI's live view). */
  readonly onEvent?: ((event: RunEvent) => void) | undefined
  /**
   * Human in the loop: when set, the executor may choose the `ask_user` pseudo-tool when a value it
   * needs cannot come from the query or memory; this callback answers it (the interrupt a chat or a
   * web app answers). Unset (as in bench) = no `ask_user` tool.
   */
  readonly askUser?: AskUser | undefined
  /**
   * The authors' agents (`--profile reference`): their prompts from a checkout, free-text replies read
   * as their code reads them, their retry counts; the loop then follows their rules unless `rules` says otherwise.
   */
  readonly reference?: ReferenceAgents | undefined
  /** Loop rules, each overridable; default ours, or the authors' with `reference`. */
  readonly rules?: Partial<LoopRules> | undefined
  /**
   * `fused` (the default): one request returns the thought, the tool and its arguments (a JSON object, or a native
   * tool call with `toolCalling: "native"`), and one the step answer with the verifier's verdict, in the task's
   * prefix; `three-call`: the paper's separate requests. Each agent keeps its memory slice and guardrails. Ignored
   * with `reference`, which runs the authors' requests.
   */
  readonly executor?: SmurfsExecutor | undefined
  /**
   * How the fused executor calls a tool: a JSON object `{thought, tool, arguments}` ("auto", the default, and "json"),
   * which keeps every request of the task in its shared prefix, or "native" tool calls (their tools field is rendered
   * into the system message, so a prefix-caching server computes each such request anew: docs/performance.md).
   */
  readonly toolCalling?: "auto" | "native" | "json" | undefined
}

export const guardrailDefaults: GuardrailOptions = {
  format: true,
  unknownTool: true,
  suggestTool: true,
  extraParams: true,
  missingParams: true,
  paramRules: true,
  grounding: false,
  maxReflections: 2
}

export const smurfsDefaults = {
  maxSteps: 3,
  maxAgentErrors: 4,
  maxSubtasks: 6,
  maxModelCalls: 150,
  toolTimeoutMs: 60_000,
  maxParallelSubtasks: 4,
  reportUnavailable: true,
  planner: true,
  answerer: true,
  verifier: true,
  executor: "fused",
  toolCalling: "auto"
} as const

export interface ResolvedOptions {
  readonly maxSteps: number
  readonly maxAgentErrors: number
  readonly maxSubtasks: number
  readonly maxModelCalls: number
  readonly toolTimeoutMs: number
  readonly maxParallelSubtasks: number
  readonly reportUnavailable: boolean
  readonly planner: boolean
  readonly answerer: boolean
  readonly verifier: boolean
  readonly guardrails: GuardrailOptions
  readonly budget: Omit<ContextBudgetOptions, "contextTokens">
  readonly onEvent?: ((event: RunEvent) => void) | undefined
  readonly askUser?: AskUser | undefined
  readonly reference?: ReferenceAgents | undefined
  readonly rules: LoopRules
  /** Always `three-call` with `reference`. */
  readonly executor: SmurfsExecutor
  readonly toolCalling: "auto" | "native" | "json"
}

export const resolveOptions = (options: SmurfsOptions = {}): ResolvedOptions => ({
  maxSteps: Math.max(1, options.maxSteps ?? smurfsDefaults.maxSteps),
  maxAgentErrors: Math.max(1, options.maxAgentErrors ?? smurfsDefaults.maxAgentErrors),
  maxSubtasks: Math.max(1, options.maxSubtasks ?? smurfsDefaults.maxSubtasks),
  maxModelCalls: Math.max(1, options.maxModelCalls ?? smurfsDefaults.maxModelCalls),
  toolTimeoutMs: Math.max(1, options.toolTimeoutMs ?? smurfsDefaults.toolTimeoutMs),
  maxParallelSubtasks: Math.max(1, options.maxParallelSubtasks ?? smurfsDefaults.maxParallelSubtasks),
  reportUnavailable: options.reportUnavailable ?? smurfsDefaults.reportUnavailable,
  planner: options.planner ?? smurfsDefaults.planner,
  answerer: options.answerer ?? smurfsDefaults.answerer,
  verifier: options.verifier ?? smurfsDefaults.verifier,
  guardrails: { ...guardrailDefaults, ...options.guardrails },
  budget: options.budget ?? {},
  onEvent: options.onEvent,
  askUser: options.askUser,
  reference: options.reference,
  rules: { ...(options.reference ? referenceLoopRules : ourLoopRules), ...options.rules },
  executor: options.reference ? "three-call" : (options.executor ?? smurfsDefaults.executor),
  toolCalling: options.toolCalling ?? smurfsDefaults.toolCalling
})
