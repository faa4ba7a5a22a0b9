// The run record, defined once: events and their data by kind, totals, trajectories and task records (zod; types by z.infer).
// Producers (`emit`), the live view, `show`, the converters, the runner and the judges all read these.
import { z } from "zod"

/** Version of the run directory's format (run.json, task records). */
export const RUN_FORMAT_VERSION = 1

/** The kinds of events a run emits; the CloudEvents `type` is `dev.smurfs.<kind>` (reverse-DNS, as the spec asks). */
export const EventKind = z.enum([
  "task_started",
  "plan",
  "retrieval",
  "subtask_started",
  "thought",
  "model_call",
  "tool_call",
  "answer",
  "verdict",
  "backtrack",
  "guardrail",
  "subtask_answered",
  "final_answer",
  "give_up",
  "error",
  "task_finished",
  "plan_invalid",
  "ask_user",
  "intent"
])
export type EventKind = z.infer<typeof EventKind>

/** One reply on a ReAct/DFSDT chain, as the StableToolBench converter writes it (`tool` is "" for a reply that called none). */
export const ChainStep = z.object({
  thought: z.string(),
  tool: z.string(),
  /** The arguments as JSON text. */
  arguments: z.string(),
  response: z.string()
})

/** Data of a `model_call` event; totals are summed from these. */
export const ModelCallData = z.object({
  role: z.string(),
  /** The model that answered, as the server names it ("" when the call failed). */
  model: z.string(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  durationMs: z.number(),
  attempt: z.number(),
  ok: z.boolean(),
  /** Served by a cache, not by the server. */
  cached: z.boolean().optional(),
  error: z.string().optional(),
  /** A failed answer of the server (429, 503) that the call was sent again after: counted in `totals.serverRetries`. */
  retried: z.boolean().optional(),
  /** Prompt and reply, kept only when the trace is asked for full detail. */
  messages: z.array(z.object({ role: z.string(), content: z.string() })).optional(),
  reply: z.string().optional(),
  /** A reasoning model's thinking, traced, never passed on. */
  thinking: z.string().optional(),
  /** The reply's native tool calls, so that `bench --replay-from` can answer the request again as the model did. */
  toolCalls: z
    .array(
      z.object({
        id: z.string().optional(),
        name: z.string(),
        arguments: z.record(z.string(), z.unknown()),
        /** The arguments' text as the model wrote it (OpenAI-compatible servers), which the reference profile reads. */
        rawArguments: z.string().optional(),
        argumentsError: z.string().optional()
      })
    )
    .optional(),
  /** sha256 of the request (its messages, format, tools and sampling; `requestHash`), which a replay answers by. */
  request: z.string().optional()
})
export type ModelCallData = z.infer<typeof ModelCallData>

/** Data of a `tool_call` event. */
export const ToolCallData = z.object({
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  ok: z.boolean(),
  content: z.string(),
  error: z.string().optional(),
  durationMs: z.number(),
  truncated: z.boolean().optional(),
  /** Served by a cache, not by the tool. */
  cached: z.boolean().optional(),
  /** No recording or simulator answered it (ToolResult.missed). */
  missed: z.boolean().optional(),
  /**
   * The environment ledger: how a tool environment served the call (`replayed`, `simulated`, `missed`, `failed`);
   * absent for a tool no environment serves (a module, MCP) and in older records.
   */
  served: z.enum(["replayed", "simulated", "missed", "failed"]).optional(),
  /** A replayed (or stored simulated) response: whether the arguments matched the recording exactly or leniently. */
  match: z.enum(["exact", "lenient"]).optional(),
  /** A response simulated in this run: the simulator model and its texts (`<spec> · <texts>`). */
  simulator: z.string().optional()
})
export type ToolCallData = z.infer<typeof ToolCallData>

/**
 * The data of each kind of event. Fields a kind has only for some methods are optional (ReAct and
 * DFSDT record their chain on the last event, Smurfs its subtask and depth).
 */
export const EventData = {
  task_started: z.object({ query: z.string(), method: z.string(), model: z.string(), tools: z.array(z.string()) }),
  plan: z.object({
    subtasks: z.array(z.string()),
    planner: z.boolean(),
    dependsOn: z.array(z.array(z.number()).readonly()).readonly().optional()
  }),
  retrieval: z.object({
    scope: z.string(),
    query: z.string(),
    k: z.number(),
    mode: z.string(),
    tools: z.array(z.object({ name: z.string(), score: z.number().optional() }))
  }),
  subtask_started: z.object({ index: z.number(), subtask: z.string() }),
  thought: z.object({
    thought: z.string(),
    step: z.number().optional(),
    subtask: z.number().optional(),
    depth: z.number().optional()
  }),
  model_call: ModelCallData,
  tool_call: ToolCallData,
  answer: z.object({ subtask: z.number(), depth: z.number(), answer: z.string() }),
  verdict: z.object({ subtask: z.number(), status: z.string(), reason: z.string(), hint: z.string().nullable() }),
  /** Smurfs: the subtask, the depths and the excluded tool; ReAct: the try; DFSDT: the depth. */
  backtrack: z.object({
    reason: z.string().optional(),
    attempt: z.number().optional(),
    depth: z.number().optional(),
    subtask: z.number().optional(),
    fromDepth: z.number().optional(),
    toDepth: z.number().optional(),
    tool: z.string().optional(),
    excluded: z.array(z.string()).optional()
  }),
  guardrail: z.object({
    guardrail: z.string(),
    role: z.string(),
    error: z.string(),
    attempt: z.number(),
    recovered: z.boolean()
  }),
  subtask_answered: z.object({
    index: z.number(),
    subtask: z.string(),
    answer: z.string(),
    source: z.string(),
    available: z.boolean().optional(),
    reason: z.string().optional()
  }),
  final_answer: z.object({
    answer: z.string(),
    /** ReAct/DFSDT: StableToolBench's method name (CoT@1, DFS_woFilter_w2) and the chosen chain. */
    method: z.string().optional(),
    chain: z.array(ChainStep).readonly().optional(),
    /** Smurfs: where the answer came from when not from the final answerer ("budget"), the unavailable subtasks. */
    source: z.string().optional(),
    unavailable: z.array(z.number()).optional(),
    /** Smurfs under the reference profile: the converted answer's Finish carries the final answer as plain text ("plain"). */
    finalAnswerText: z.literal("plain").optional()
  }),
  give_up: z.object({
    reason: z.string(),
    method: z.string().optional(),
    chain: z.array(ChainStep).readonly().optional(),
    tag: z.string().optional()
  }),
  /** A failure recorded as data: `tag` names the error class; Smurfs says which role failed (`error`), ReAct/DFSDT give the `message`. */
  error: z.object({
    tag: z.string(),
    role: z.string().optional(),
    error: z.string().optional(),
    message: z.string().optional()
  }),
  task_finished: z.object({ finishType: z.enum(["give_answer", "give_up"]), error: z.string().optional() }),
  plan_invalid: z.object({ error: z.string(), fallback: z.string() }),
  ask_user: z.object({ question: z.string(), reply: z.string().optional(), error: z.string().optional() }),
  intent: z.record(z.string(), z.unknown())
} as const satisfies Record<EventKind, z.ZodType>

/** What a producer passes for an event of `kind`. */
export type EventDataOf<K extends EventKind> = z.input<(typeof EventData)[K]>

/**
 * CloudEvents extension attributes that place an event in its run. Every event carries
 * `correlationid` (the top-level task); an event of a subtask carries its index, an event of a
 * sub-agent (an agent used as a tool) its name and nesting depth.
 */
export const EventLink = z.object({
  /** Id of the top-level task the event belongs to (the same for a sub-agent's events). */
  correlationid: z.string().optional(),
  /** Index of the subtask (in its own pipeline's plan) the event happened in. */
  subtask: z.number().int().optional(),
  /** Name of the agent tool whose pipeline emitted the event; absent for the top-level pipeline. */
  agent: z.string().optional(),
  /** Nesting depth of that agent (1 = called by the top-level pipeline). */
  agentdepth: z.number().int().optional(),
  /** Index of the parent's subtask that called the agent. */
  parentsubtask: z.number().int().optional()
})
export type EventLink = z.infer<typeof EventLink>

/**
 * A run event (CloudEvents 1.0). `type` is `dev.smurfs.<kind>` (or `smurfs.<kind>` in older run
 * directories: read the kind with `kindOf`); `data` is the kind's data (`dataOf` reads it typed).
 */
export const RunEvent = z.object({
  specversion: z.literal("1.0"),
  id: z.string(),
  source: z.string(),
  type: z.string(),
  time: z.string(),
  /** The task the event belongs to (a sub-agent's own task id for its events). */
  subject: z.string(),
  datacontenttype: z.string().optional(),
  ...EventLink.shape,
  data: z.record(z.string(), z.unknown())
})
export type RunEvent = z.infer<typeof RunEvent>

export const Totals = z.object({
  modelCalls: z.number(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  toolCalls: z.number(),
  backtracks: z.number(),
  wallMs: z.number(),
  /** Guardrail interventions by guardrail name (format, unknown_tool, extra_params, ...). */
  guardrails: z.record(z.string(), z.number()),
  /**
   * Of those interventions, the ones the model recovered from (a later attempt of the same call was
   * valid, or the guardrail repaired the reply itself); recovery rate = guardrailsRecovered / guardrails.
   */
  guardrailsRecovered: z.record(z.string(), z.number()).optional(),
  /** Model replies and tool results served by a cache: not counted in `modelCalls` / `toolCalls` (calls made). */
  cachedModelCalls: z.number().optional(),
  cachedToolCalls: z.number().optional(),
  /** Tool calls no recording or simulator answered (the offline environment answered them, as a failure or a template). */
  missedToolCalls: z.number().optional(),
  /** Model calls sent again after the server pushed back (429, 503): each one a `model_call` event with `retried`. */
  serverRetries: z.number().optional(),
  /** Tool calls a simulator answered (in this run, or stored by an earlier one); absent in older records. */
  simulatedToolCalls: z.number().optional()
})
export type Totals = z.infer<typeof Totals>

export const FinishType = z.enum(["give_answer", "give_up"])
export type FinishType = z.infer<typeof FinishType>

/**
 * Bounds of ours that the references do not have (docs/fidelity.md): Smurfs' model-call budget per task and the
 * reference planner's 12 attempts (theirs starts over without end). One that fired, not the method, ended the task
 * (the budget) or its planning (the planner), so reports count such tasks apart.
 */
export const Guard = z.enum(["model-call-budget", "planner-attempts"])
export type Guard = z.infer<typeof Guard>

/** What a method returns for one task: its events, final answer and totals, as one serializable value. */
export const Trajectory = z.object({
  taskId: z.string(),
  query: z.string(),
  /** The method as it names itself (`smurfs`, StableToolBench's `CoT@1`, `DFS_woFilter_w2`). */
  method: z.string(),
  /** The model spec the run used (`ollama:qwen2.5:7b`, `openai:<model>`, `sim`): the same for every method; each `model_call` says what the server named. */
  model: z.string(),
  finalAnswer: z.string(),
  finishType: FinishType,
  /** Why the run gave up or what went wrong, when it did. */
  error: z.string().optional(),
  /** The guards that ended the task or its planning, when one did. */
  guards: z.array(Guard).optional(),
  events: z.array(RunEvent),
  totals: Totals
})
export type Trajectory = z.infer<typeof Trajectory>

/**
 * An earlier attempt of a task that the model server failed, kept in the record of the attempt that replaced it, so
 * that no fault it met disappears: run again within the run (`retry`) or by a later `--resume` (`resume`).
 */
export const EarlierAttempt = z.object({
  redoneBy: z.enum(["retry", "resume"]),
  startedAt: z.string(),
  finishedAt: z.string(),
  error: z.string().optional(),
  errorTag: z.string().optional(),
  modelCalls: z.number(),
  /** Its model calls that failed and were not sent again (the one that ended it among them). */
  failedCalls: z.number(),
  /** Its model calls sent again after a server fault (`totals.serverRetries`). */
  serverRetries: z.number(),
  /** Its guardrail interventions, all guardrails together. */
  guardrails: z.number()
})
export type EarlierAttempt = z.infer<typeof EarlierAttempt>

/** One task's record in a run directory (`tasks/<method>/<group>/<taskId>.json`): the trajectory with the runner's context. */
export const TaskRecord = z.object({
  formatVersion: z.literal(RUN_FORMAT_VERSION),
  taskId: z.string(),
  group: z.string(),
  method: z.string(),
  /** The model spec, e.g. `ollama:qwen2.5:7b`. */
  model: z.string(),
  query: z.string(),
  /** Names of the tools the method could use. */
  availableTools: z.array(z.string()),
  finalAnswer: z.string(),
  /** `error`: the model server failed during the task (refused, 404, 429/503 after retries, timeout...); not a result, a resume redoes it. */
  finishType: z.enum([...FinishType.options, "error"]),
  error: z.string().optional(),
  /** The model layer's tag of the server failure, for `error` records. */
  errorTag: z.string().optional(),
  /** A guard of ours, not the method, ended the task or its planning (the model-call budget, the planner's attempts). */
  guards: z.array(Guard).optional(),
  totals: Totals,
  events: z.array(RunEvent),
  startedAt: z.string(),
  finishedAt: z.string(),
  /** Which agent run of the task this is (`bench --runs N`: 0..N-1); absent in a run of one, read as 0 (`runOf`). */
  run: z.number().int().min(0).optional(),
  /** The sampling seed this agent run's requests carried, when the run has several (`--runs` / `--seeds`). */
  seed: z.number().int().min(0).optional(),
  /**
   * What a benchmark other than StableToolBench keeps of the task, read by its own module (bench/benchmarks/<name>):
   * τ²'s conversation (every message and tool call), its database writes, the termination and the reward.
   */
  benchmark: z.looseObject({ name: z.string() }).optional(),
  /** The attempts of this task the model server failed before this one, oldest first (their count: the task's retries). */
  earlierAttempts: z.array(EarlierAttempt).optional()
})
export type TaskRecord = z.infer<typeof TaskRecord>

/**
 * The agent run of a record, judge input or label file: its `run` (a label file's `agentRun`), 0 when absent (runs of
 * one, older directories) or not a run's index.
 */
export const runOf = (item: { readonly run?: unknown; readonly agentRun?: unknown }): number => {
  const value = item.run ?? item.agentRun
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : 0
}
