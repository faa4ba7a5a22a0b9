// The chain machinery ReAct and DFSDT share: a task's starting conversation, one decision (a model
// reply), performing its actions, one chain until Finish, and the trajectory around a method's search.
import { Effect } from "effect"
import { z } from "zod"
import type { GenerateError } from "../llm/errors.ts"
import { LanguageModel, type Message, type ModelInfo, type ToolSpec } from "../llm/language-model.ts"
import { generateObject, jsonSchemaOf } from "../llm/structured.ts"
import { ContextBudget } from "../memory/context-budget.ts"
import { type ContextCut, cutValues, warnCuts } from "./ask.ts"
import { guardToolCall, OBSERVATION_MAX_CHARS, truncateObservation } from "../tools/call.ts"
import { pythonJsonDumps } from "../tools/environments/canonical.ts"
import { resolveTool, toolSpecs } from "../tools/library.ts"
import { parseToolArgs } from "../tools/tool.ts"
import { emit } from "../trace/events.ts"
import { capText, SIZE_CAPS } from "../trace/size-caps.ts"
import { recording, type Trajectory, totalsOf } from "../trace/trajectory.ts"
import { type BaselinePrompts, smurfsBaselinePrompts } from "./baseline-prompts.ts"
import { callNative } from "./tool-call-recovery.ts"
import { FINISH, FinishArgs, finishSpec } from "./finish.ts"
import { loadTemplate, renderTemplate } from "./prompt-template.ts"
import type { Task } from "./task.ts"
import { fencedData } from "./fenced-data.ts"

export interface ChainOptions {
  /** How the model acts: "native" tool calls, a "json" object `{thought, action, action_input}`, or "auto" (native when the model supports tools). */
  readonly toolCalling?: "auto" | "native" | "json" | undefined
  /** Observations are cut to this many characters (plus "...") before the model sees them. */
  readonly observationLimit?: number | undefined
  /**
   * StableToolBench's `single_chain_max_step`: a chain is cut when it holds this many tree nodes. A
   * reply's text is one node (a thought), each function call two (the action and its input), so at
   * the default 12 a model that thinks aloud before every call makes 4 calls, a silent one 6.
   */
  readonly singleChainMaxStep?: number | undefined
  /** The texts sent: StableToolBench's (read from a checkout) or ours (the default). */
  readonly prompts?: BaselinePrompts | undefined
  /** Milliseconds before a tool call is abandoned as failed (bounds a hand-written Tool that never answers). */
  readonly toolTimeoutMs?: number | undefined
}

export const CHAIN_DEFAULTS = { toolCalling: "auto", observationLimit: OBSERVATION_MAX_CHARS, singleChainMaxStep: 12, toolTimeoutMs: 60_000 } as const

/**
 * One reply on a chain, in the shape the StableToolBench converter writes: its text and the function
 * it called (`tool` is "" when the reply called none; `response` is "" for Finish).
 */
export interface ChainStep {
  readonly thought: string
  readonly tool: string
  /** The arguments as JSON text. */
  readonly arguments: string
  readonly response: string
}

/** What a chain needs to decide and perform actions for one task. */
export interface Chain {
  readonly task: Task
  readonly mode: "native" | "json"
  readonly role: string
  readonly specs: ReadonlyArray<ToolSpec>
  readonly observationLimit: number
  readonly singleChainMaxStep: number
  readonly toolTimeoutMs: number
  readonly prompts: BaselinePrompts
  /** The conversation a chain starts from (system + task) with the whole query; each request sends it fitted (`fitted`). */
  readonly start: ReadonlyArray<Message>
  /**
   * The task's context budget: every request of the chain fits `model.info.contextTokens` by its
   * estimate, which the replies' reported usage calibrates (the chain's model is `calibrating`).
   */
  readonly budget: ContextBudget
  /** The start as the budget's current estimate fits it (recomputed when a reply calibrated the budget). */
  readonly fitted: () => FittedStart
}

/** A chain's start fitted to the context by the budget's current characters a token. */
export interface FittedStart {
  /** `Chain.start` with the query cut so that half the prompt is left for the growing conversation. */
  readonly start: ReadonlyArray<Message>
  /** The query's cut, if it had to be (warned once per cut). */
  readonly cuts: ReadonlyArray<ContextCut>
  /** Tokens sent beside the messages: the tools (or the JSON fallback's functions and schema) or the JSON mode schema. */
  readonly sentTokens: number
}

/** An action the model chose; `argsError` when its arguments were not a JSON object. */
export interface Action {
  readonly name: string
  readonly args: Record<string, unknown>
  readonly argsError?: string | undefined
  readonly callId: string
}

export interface Decision {
  /** The reply's text; a non-blank one is a thought node of the tree. */
  readonly thought: string
  readonly action?: Action | undefined
  /** The assistant message to append to the conversation. */
  readonly message: Message
}

export type Outcome =
  | { readonly kind: "observation"; readonly step: ChainStep; readonly messages: ReadonlyArray<Message> }
  | { readonly kind: "answer"; readonly step: ChainStep; readonly answer: string }
  | { readonly kind: "give_up"; readonly step: ChainStep }

/** The JSON-mode action (exported for the grammar check of every schema sent to a model). */
export const JsonAction = z.object({
  thought: z.string(),
  action: z.string().min(1),
  action_input: z.union([z.record(z.string(), z.unknown()), z.string()]).optional()
})

/** The functions as JSON mode lists them: one JSON object per line. */
const functionsList = (specs: ReadonlyArray<ToolSpec>): string =>
  specs.map((s) => JSON.stringify({ name: s.name, description: s.description, parameters: s.parameters })).join("\n")

const resolveMode = (option: ChainOptions["toolCalling"], info: ModelInfo): "native" | "json" =>
  option === "native" || option === "json" ? option : info.supportsTools ? "native" : "json"

/**
 * The numbered tools of the task description, one `<n>.<tool>: <description>` line per ToolBench
 * tool as StableToolBench writes them (descriptions cut to 512 characters, "None" when empty); a
 * tool outside ToolBench is listed under its own name.
 */
export const toolLines = (tools: Task["tools"]): string => {
  const described = new Map<string, string>()
  for (const tool of tools.tools) {
    const std = tool.meta?.["stdTool"]
    const name = typeof std === "string" ? std : tool.name
    const description = typeof std === "string" ? String(tool.meta?.["toolDescription"] ?? "") : tool.description
    if (!described.has(name)) described.set(name, description)
  }
  return [...described].map(([name, d], k) => `${k + 1}.${name}: ${d.slice(0, 512).replace(/\n/g, "").trim() || "None"}\n`).join("")
}

/** Build the chain context and its starting conversation for a task. */
export const makeChain = (task: Task, options: ChainOptions, info: ModelInfo, role: string): Chain => {
  const mode = resolveMode(options.toolCalling ?? CHAIN_DEFAULTS.toolCalling, info)
  const prompts = options.prompts ?? smurfsBaselinePrompts()
  const specs = [...toolSpecs(task.tools), finishSpec(prompts)]
  const system = prompts.system(prompts.taskDescription(toolLines(task.tools)))
  // Without native tool calling the same texts go out, with the functions and the JSON reply format added.
  const jsonPrompt = renderTemplate("react-json", { functions: functionsList(specs) })
  const json = mode === "json" ? jsonPrompt : undefined
  const startOf = (query: string): Array<Message> => {
    const user = prompts.user(query)
    return [
      { role: "system", content: json ? `${system}\n\n${json.system}` : system },
      { role: "user", content: json ? `${json.user}\n\n${user}` : user }
    ]
  }
  const budget = new ContextBudget({ contextTokens: info.contextTokens })
  const schemaText = JSON.stringify(jsonSchemaOf(JsonAction))
  const fit = (): FittedStart => {
    const schema = budget.count(schemaText)
    const sentTokens =
      mode === "json" ? schema : Math.max(budget.count(JSON.stringify(specs)), budget.count(`${jsonPrompt.system}\n\n${jsonPrompt.user}`) + schema)
    // The query is cut (as Smurfs' prompts cut it) so that half the prompt is left for the growing conversation.
    const { kept, cuts } = cutValues(
      budget,
      { query: task.query },
      (k) => budget.room(...startOf(String(k["query"])).map((m) => m.content)) - sentTokens,
      Math.floor(budget.promptTokens / 2)
    )
    return { start: startOf(String(kept["query"])), cuts, sentTokens }
  }
  // Refitted only when a reply's usage changed the estimate (calibration only ever lowers it).
  let fitted = { charsPerToken: budget.charsPerToken, value: fit() }
  return {
    task,
    mode,
    role,
    specs,
    observationLimit: options.observationLimit ?? CHAIN_DEFAULTS.observationLimit,
    singleChainMaxStep: options.singleChainMaxStep ?? CHAIN_DEFAULTS.singleChainMaxStep,
    toolTimeoutMs: options.toolTimeoutMs ?? CHAIN_DEFAULTS.toolTimeoutMs,
    prompts,
    start: startOf(task.query),
    budget,
    fitted: () => {
      if (fitted.charsPerToken !== budget.charsPerToken) fitted = { charsPerToken: budget.charsPerToken, value: fit() }
      return fitted.value
    }
  }
}

/**
 * Tree nodes a reply adds, as StableToolBench builds them: a thought node for its text, an action
 * and an action-input node for its call. A reply with neither still counts one, so a model that
 * never calls a function cannot grow a chain without bound.
 */
export const nodesOf = (decision: Decision): number =>
  decision.action ? (decision.thought.trim() ? 1 : 0) + 2 : 1

/** The step recorded for a reply that called no function. */
export const proseStep = (decision: Decision): ChainStep => ({ thought: decision.thought, tool: "", arguments: "", response: "" })

const parseArgs = (input: unknown): { args: Record<string, unknown>; argsError?: string } => {
  if (input === undefined || input === null || input === "") return { args: {} }
  if (typeof input === "object" && !Array.isArray(input)) return { args: input as Record<string, unknown> }
  if (typeof input === "string") {
    try {
      const parsed: unknown = JSON.parse(input)
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return { args: parsed as Record<string, unknown> }
    } catch {
      // reported below
    }
  }
  return { args: {}, argsError: "the arguments must be a JSON object" }
}

/** A step in JSON mode after the server kept failing to parse native tool calls: the reply as a tool call. */
const jsonFallback = (chain: Chain, messages: ReadonlyArray<Message>) =>
  Effect.gen(function* () {
    const prompt = renderTemplate("react-json", { functions: functionsList(chain.specs) })
    const { value, response } = yield* generateObject({ role: chain.role, messages: [...messages, { role: "user", content: `${prompt.system}\n\n${prompt.user}` }], schema: JsonAction })
    const args = parseArgs(value.action_input)
    return { ...response, text: value.thought, toolCalls: [{ name: value.action, arguments: args.argsError ? { _raw: value.action_input } : args.args }] }
  })

/** Ask the model for the next action from the conversation so far. */
export const decide = (chain: Chain, conversation: ReadonlyArray<Message>, step: number): Effect.Effect<Decision, GenerateError, LanguageModel> =>
  Effect.gen(function* () {
    const fit = chain.fitted()
    yield* warnCuts(chain.budget, chain.role, fit.cuts)
    // The conversation (from `chain.start`, the query whole) is kept whole; each request gets it fitted to the context.
    const messages = chain.budget.conversation([...fit.start, ...conversation.slice(fit.start.length)], fit.start.length, fit.sentTokens)
    const callId = `call_${step}`
    if (chain.mode === "native") {
      const model = yield* LanguageModel
      const response = yield* callNative({ role: chain.role, messages, tools: chain.specs }, (tried) => jsonFallback(chain, tried))
      const call = response.toolCalls?.[0]
      const thought = response.text.trim()
      if (thought) yield* emit("thought", { thought, step })
      if (!call) return { thought, message: { role: "assistant", content: capText(response.text, SIZE_CAPS.sentBackChars) } }
      const id = call.id ?? callId
      const parsed = parseArgs(call.arguments)
      return {
        thought,
        action: { name: call.name, ...parsed, callId: id },
        message: { role: "assistant", content: capText(response.text, SIZE_CAPS.sentBackChars), toolCalls: [{ id, name: call.name, arguments: parsed.args }] }
      }
    }
    const { value } = yield* generateObject({ role: chain.role, messages, schema: JsonAction })
    if (value.thought) yield* emit("thought", { thought: value.thought, step })
    return {
      thought: value.thought,
      action: { name: value.action, ...parseArgs(value.action_input), callId },
      message: { role: "assistant", content: JSON.stringify(value) }
    }
  })

/** A StableToolBench tool response text, spaced as Python's json.dumps writes it (what their models saw). */
const toolResponse = (error: string, response: string) => pythonJsonDumps({ error, response })
const toolError = (error: string) => toolResponse(error, "")

/** The observation message for a step, in the conversation style of the chain's mode. */
const observationMessage = (chain: Chain, action: Action, observation: string): Message =>
  chain.mode === "native"
    ? { role: "tool", content: observation, toolCallId: action.callId, toolName: action.name }
    : { role: "user", content: renderTemplate("react-observation", { tool: action.name, observation: fencedData("observation", observation) }).user }

/**
 * Perform an action. Finish ends the chain; every other misstep (unknown function, bad arguments,
 * a failing tool) becomes an error observation the model sees on its next step.
 */
export const act = (chain: Chain, decision: Decision & { action: Action }, messages: ReadonlyArray<Message>): Effect.Effect<Outcome> =>
  Effect.gen(function* () {
    const { action, thought } = decision
    const argsText = JSON.stringify(action.args, null, 2)
    const observe = (raw: string) => {
      const observation = truncateObservation(raw, chain.observationLimit)
      const step: ChainStep = { thought, tool: action.name, arguments: argsText, response: observation }
      return { kind: "observation", step, messages: [...messages, decision.message, observationMessage(chain, action, observation)] } as const
    }
    const misstep = (guardrail: string, error: string) =>
      emit("guardrail", { guardrail, role: chain.role, error, attempt: 1, recovered: false }).pipe(Effect.as(observe(toolError(error))))

    if (action.argsError) return yield* misstep("bad_args", `${action.name}: ${action.argsError}`)
    if (action.name === FINISH) {
      const finish = FinishArgs.safeParse(action.args)
      if (!finish.success) return yield* misstep("bad_args", `Finish: ${z.prettifyError(finish.error)}`)
      const step: ChainStep = { thought, tool: FINISH, arguments: argsText, response: "" }
      if (finish.data.return_type === "give_up_and_restart") return { kind: "give_up", step } as const
      const answer = finish.data.final_answer?.trim() ?? ""
      if (!answer) return yield* misstep("bad_args", 'Finish: "final_answer" is required when return_type is "give_answer"')
      return { kind: "answer", step, answer } as const
    }
    const tool = resolveTool(chain.task.tools, action.name)
    if (!tool) return yield* misstep("unknown_tool", `No such function name: ${action.name}. Use one of: ${chain.specs.map((s) => s.name).join(", ")}`)
    const args = parseToolArgs(tool, action.args)
    if (!args.success) return yield* misstep("bad_args", `${action.name}: invalid arguments: ${z.prettifyError(args.error)}`)
    const started = Date.now()
    // Tools promise never to fail, but a hand-written one may still die or hang: that is a failed call too.
    const result = yield* guardToolCall(tool.name, tool.call(args.data), { timeoutMs: chain.toolTimeoutMs })
    const raw = toolResponse(result.ok ? "" : (result.error ?? "the tool failed"), result.content)
    const outcome = observe(raw)
    yield* emit("tool_call", {
      tool: tool.name,
      args: args.data,
      ok: result.ok,
      content: outcome.step.response,
      ...(result.ok ? {} : { error: result.error ?? "the tool failed" }),
      durationMs: Date.now() - started,
      truncated: raw.length > chain.observationLimit || result.truncated === true,
      ...(result.cached ? { cached: true } : {})
    })
    return outcome
  })

/** The reminder sent when the model replied without calling a function. */
export const noActionMessage = (): Message => ({ role: "user", content: loadTemplate("react-no-action").user })

/** How a chain ended. */
export type ChainEnd =
  | { readonly kind: "answer"; readonly answer: string; readonly steps: ReadonlyArray<ChainStep> }
  | { readonly kind: "give_up" | "step_limit"; readonly steps: ReadonlyArray<ChainStep> }

/** Run one chain from its start until Finish, or until it holds `singleChainMaxStep` tree nodes. */
export const runChain = (chain: Chain): Effect.Effect<ChainEnd, GenerateError, LanguageModel> =>
  Effect.gen(function* () {
    let messages = chain.start
    const steps: Array<ChainStep> = []
    let depth = 0
    for (let reply = 1; depth < chain.singleChainMaxStep; reply++) {
      const decision = yield* decide(chain, messages, reply)
      depth += nodesOf(decision)
      if (!decision.action) {
        steps.push(proseStep(decision))
        messages = [...messages, decision.message, noActionMessage()]
        continue
      }
      const outcome = yield* act(chain, { ...decision, action: decision.action }, messages)
      steps.push(outcome.step)
      if (outcome.kind === "answer") return { kind: "answer", answer: outcome.answer, steps }
      if (outcome.kind === "give_up") return { kind: "give_up", steps }
      messages = outcome.messages
    }
    return { kind: "step_limit", steps }
  })

/** Wrap a method body into a Trajectory: records its events, never fails. */
export const asTrajectory = (
  task: Task,
  method: string,
  body: Effect.Effect<{ answer?: string | undefined; chain: ReadonlyArray<ChainStep>; error?: string | undefined }, never, LanguageModel>
): Effect.Effect<Trajectory, never, LanguageModel> =>
  Effect.gen(function* () {
    const model = yield* LanguageModel
    const started = Date.now()
    const { value, events } = yield* recording(
      task.id,
      Effect.tap(body, (r) =>
        r.answer !== undefined
          ? emit("final_answer", { answer: r.answer, method, chain: r.chain })
          : emit("give_up", { reason: r.error ?? "no chain reached an answer", method, chain: r.chain })
      )
    )
    return {
      taskId: task.id,
      query: task.query,
      method,
      model: model.info.model,
      finalAnswer: value.answer ?? "",
      finishType: value.answer !== undefined ? "give_answer" : "give_up",
      error: value.error,
      events,
      totals: totalsOf(events, Date.now() - started)
    } satisfies Trajectory
  })

/** Record a model failure as data: an `error` event whose `tag` lets the runner tell a dead server from a bad reply. */
export const modelFailure = (e: GenerateError) => emit("error", { tag: e._tag, message: e.message }).pipe(Effect.as(e.message))

