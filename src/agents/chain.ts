// The chain machinery ReAct and DFSDT share: a task's starting conversation, one decision (a model
// reply), performing its actions, one chain until Finish, and the trajectory around a method's search.
import * as Effect from "effect/Effect"
import { z } from "zod"
import { ContextOverflow, type GenerateError } from "../llm/errors.ts"
import {
  type GenerateOptions,
  LanguageModel,
  type Message,
  type ModelInfo,
  type ToolSpec
} from "../llm/language-model.ts"
import { NestingTooDeep, parseJsonBounded } from "../llm/nesting.ts"
import { generateObject, jsonSchemaOf } from "../llm/structured.ts"
import { ContextBudget } from "../memory/context-budget.ts"
import { fencedData } from "../text/fenced-data.ts"
import { loadTemplate, renderTemplate } from "../text/prompt-template.ts"
import { guardToolCall, OBSERVATION_MAX_CHARS, truncateObservation } from "../tools/call.ts"
import { PythonNumber, pythonJsonDumps } from "../tools/environments/canonical.ts"
import {
  plainJson,
  pythonJsonDumpsAscii,
  pythonJsonLoads,
  serverResponseText
} from "../tools/environments/python-json.ts"
import { rememberWritten } from "../tools/environments/written-args.ts"
import { resolveTool, stableToolBenchFunctionSpec, toolSpecs } from "../tools/library.ts"
import { ledgerFields, parseToolArgs, type ToolResult } from "../tools/tool.ts"
import { emit } from "../trace/events.ts"
import { capText, SIZE_CAPS } from "../trace/size-caps.ts"
import { recording, type Trajectory, totalsOf } from "../trace/trajectory.ts"
import { type ContextCut, warnCuts } from "./ask.ts"
import { type BaselinePrompts, smurfsBaselinePrompts } from "./baseline-prompts.ts"
import { FINISH, FinishArgs, finishSpec, readFinishArguments } from "./finish.ts"
import type { Task } from "./task.ts"
import { callNative } from "./tool-call-recovery.ts"

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
  /** Sampling temperature of the chain's requests; unset = the model's own (0). StableToolBench's client samples at 1.0. */
  readonly temperature?: number | undefined
  /** After a reply without a function call, remind the model to call one (ours); StableToolBench sends nothing. */
  readonly nudge?: boolean | undefined
  /**
   * Validate (and coerce) arguments with the tool's schema before calling it, reporting violations as
   * an error observation (ours); off sends them as the model wrote them and the environment answers.
   */
  readonly validateArgs?: boolean | undefined
  /** Execute every function call of a reply, in order (StableToolBench); off executes the first one only. */
  readonly parallelCalls?: boolean | undefined
  /**
   * Speak to the model and the tools as StableToolBench's code does (the reference profile): each function's
   * parameters as rapidapi.py writes them; a call's arguments read from the model's text as theirs reads them (a
   * Finish with `json.loads(strict=False)`, then their substring fallback; any other call as their server's
   * `json.loads`), kept as written in the conversation and in the replay key; tool messages with the function's
   * name; a structured response nested in the `{"error", "response"}` JSON as `json.dumps` writes it.
   */
  readonly asStableToolBench?: boolean | undefined
}

/**
 * The name StableToolBench's searches give a call whose function does not exist, in the conversation they send on.
 * Under `asStableToolBench` such a call is answered with rapidapi.py's observation (no list of valid names) and renamed
 * so; DFSDT's diversity prompt then lists the tried calls and repeats the state's observation in DFS.py's words.
 */
export const HALLUCINATED_NAME = "invalid_hallucination_function_name"

export const CHAIN_DEFAULTS = {
  toolCalling: "auto",
  observationLimit: OBSERVATION_MAX_CHARS,
  singleChainMaxStep: 12,
  toolTimeoutMs: 60_000,
  nudge: true,
  validateArgs: true,
  parallelCalls: false,
  asStableToolBench: false
} as const

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
  /** Request options of every reply (the sampling temperature when the chain sets one). */
  readonly sampling: GenerateOptions | undefined
  readonly nudge: boolean
  readonly validateArgs: boolean
  readonly parallelCalls: boolean
  readonly asStableToolBench: boolean
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
  /** `Chain.start`, its tool lines shortened when the whole query would not fit otherwise. */
  readonly start: ReadonlyArray<Message>
  /** The functions sent, their descriptions shortened when the whole query would not fit otherwise. */
  readonly specs: ReadonlyArray<ToolSpec>
  /** Descriptions cut to fit (warned once per cut); the query itself is never cut. */
  readonly cuts: ReadonlyArray<ContextCut>
  /** Set when even without descriptions the query and Finish do not fit: the task cannot run at this context size. */
  readonly overflow?: ContextOverflow | undefined
  /** Tokens sent beside the messages: the tools (or the JSON fallback's functions and schema) or the JSON mode schema. */
  readonly sentTokens: number
}

/** An action the model chose; `argsError` when its arguments were not a JSON object. */
export interface Action {
  readonly name: string
  readonly args: Record<string, unknown>
  readonly argsError?: string | undefined
  readonly callId: string
  /** The arguments as the model wrote them, kept when the chain speaks as StableToolBench. */
  readonly raw?: string | undefined
}

export interface Decision {
  /** The reply's text; a non-blank one is a thought node of the tree. */
  readonly thought: string
  /** The reply's first function call. */
  readonly action?: Action | undefined
  /** The reply's later function calls, performed after `action` when the chain runs parallel calls. */
  readonly more?: ReadonlyArray<Action> | undefined
  /** The assistant message to append to the conversation. */
  readonly message: Message
}

/** What performing a reply's call(s) ended with; `before` holds the steps of its earlier parallel calls. */
export type Outcome = (
  | { readonly kind: "observation"; readonly step: ChainStep; readonly messages: ReadonlyArray<Message> }
  | { readonly kind: "answer"; readonly step: ChainStep; readonly answer: string }
  | { readonly kind: "give_up"; readonly step: ChainStep }
) & { readonly before?: ReadonlyArray<ChainStep> | undefined }

/** Every step an outcome recorded, earlier parallel calls first. */
export const stepsOf = (outcome: Outcome): ReadonlyArray<ChainStep> => [...(outcome.before ?? []), outcome.step]

/** The JSON-mode action (exported for the grammar check of every schema sent to a model). */
export const JsonAction = z.object({
  thought: z.string(),
  action: z.string().min(1),
  action_input: z.union([z.record(z.string(), z.unknown()), z.string()]).optional()
})

/** A function's JSON texts: its line in the JSON mode list, and the spec as sent. Specs are shared and never mutated. */
const specTexts = new WeakMap<ToolSpec, { readonly line: string; readonly json: string }>()
const textsOf = (spec: ToolSpec) => {
  let texts = specTexts.get(spec)
  if (texts === undefined) {
    texts = {
      line: JSON.stringify({ name: spec.name, description: spec.description, parameters: spec.parameters }),
      json: JSON.stringify(spec)
    }
    specTexts.set(spec, texts)
  }
  return texts
}

/** The functions as JSON mode lists them: one JSON object per line. */
const functionsList = (specs: ReadonlyArray<ToolSpec>): string => specs.map((s) => textsOf(s).line).join("\n")

/** `JSON.stringify(specs)`, from each spec's text (the same tools are measured on every task). */
const specsJson = (specs: ReadonlyArray<ToolSpec>): string => `[${specs.map((s) => textsOf(s).json).join(",")}]`

export const resolveMode = (option: ChainOptions["toolCalling"], info: ModelInfo): "native" | "json" =>
  option === "native" || option === "json" ? option : info.supportsTools ? "native" : "json"

/**
 * The numbered tools of the task description, one `<n>.<tool>: <description>` line per ToolBench
 * tool as StableToolBench writes them (descriptions cut to `max` characters, 512 as theirs, "None"
 * when empty); the description is the tool's own (`meta.toolDescription`: the doc's `tool_description`, or the
 * tool's file in StableToolBench's tools folder, `--stb-tools`, whose empty description is shown as "None" as theirs).
 * A tool outside ToolBench is listed under its own name and description.
 */
export const toolLines = (tools: Task["tools"], max = 512): string => {
  const described = new Map<string, string>()
  for (const tool of tools.tools) {
    const std = tool.meta?.["stdTool"]
    const name = typeof std === "string" ? std : tool.name
    const own = tool.meta?.["toolDescription"]
    // StableToolBench reads a tool's description from its tools folder; a query's api_list does not carry
    // it, so without one the tool's first described API stands in for it (never "None" for a described tool)
    const api = (tool.meta?.["doc"] as { api_description?: unknown } | undefined)?.api_description
    const fromFolder = tool.meta?.["toolDescriptionFromFolder"] === true
    const description =
      typeof own === "string" && (own.trim() !== "" || fromFolder)
        ? own
        : typeof std !== "string"
          ? tool.description
          : typeof api === "string"
            ? api
            : ""
    if (!described.has(name) || described.get(name)!.trim() === "") described.set(name, description)
  }
  return [...described]
    .map(([name, d], k) => `${k + 1}.${name}: ${d.slice(0, max).replace(/\n/g, "").trim() || "None"}\n`)
    .join("")
}

/** A function with its description and its parameters' descriptions cut to `max` characters (Finish is left whole). */
const shortenSpec = (spec: ToolSpec, max: number): ToolSpec => {
  if (spec.name === FINISH) return spec
  const properties = spec.parameters["properties"]
  const shortened =
    properties !== null && typeof properties === "object"
      ? Object.fromEntries(
          Object.entries(properties as Record<string, Record<string, unknown>>).map(([k, p]) => [
            k,
            typeof p?.["description"] === "string"
              ? { ...p, description: (p["description"] as string).slice(0, max) }
              : p
          ])
        )
      : properties
  return {
    ...spec,
    description: spec.description.slice(0, max),
    parameters: { ...spec.parameters, ...(shortened !== undefined ? { properties: shortened } : {}) }
  }
}

/** Description lengths tried, longest first, when a task's tools leave the query too little room: StableToolBench's own cut, then shorter. */
const DESCRIPTION_CUTS = [256, 128, 64, 0] as const

/** The JSON action's schema as sent, written once (it is the same for every task). */
let actionSchema: string | undefined
const actionSchemaText = (): string => (actionSchema ??= JSON.stringify(jsonSchemaOf(JsonAction)))

/** Build the chain context and its starting conversation for a task. */
export const makeChain = (task: Task, options: ChainOptions, info: ModelInfo, role: string): Chain => {
  const mode = resolveMode(options.toolCalling ?? CHAIN_DEFAULTS.toolCalling, info)
  const prompts = options.prompts ?? smurfsBaselinePrompts()
  const finish = finishSpec(prompts)
  const asStableToolBench = options.asStableToolBench ?? CHAIN_DEFAULTS.asStableToolBench
  const allSpecs = [
    ...(asStableToolBench ? task.tools.tools.map(stableToolBenchFunctionSpec) : toolSpecs(task.tools)),
    finish
  ]
  // The start and the functions sent with tool descriptions cut to `max` characters (undefined: as the tools give them).
  const shaped = (max: number | undefined) => {
    const specs = max === undefined ? allSpecs : allSpecs.map((s) => shortenSpec(s, max))
    const system = prompts.system(prompts.taskDescription(toolLines(task.tools, max === undefined ? 512 : max)))
    // Without native tool calling the same texts go out, with the functions and the JSON reply format added.
    const jsonPrompt = renderTemplate("react-json", { functions: functionsList(specs) })
    const json = mode === "json" ? jsonPrompt : undefined
    const user = prompts.user(task.query)
    const start: Array<Message> = [
      { role: "system", content: json ? `${system}\n\n${json.system}` : system },
      {
        role: "user",
        content: json ? `${json.user}\n\n${user}` : user,
        values: { query: task.query, ...(json ? { functions: specs } : {}) }
      }
    ]
    return { specs, start, jsonPrompt }
  }
  const whole = shaped(undefined)
  const budget = new ContextBudget({ contextTokens: info.contextTokens })
  const schemaText = actionSchemaText()
  const fit = (): FittedStart => {
    const schema = budget.count(schemaText)
    const measure = (max: number | undefined) => {
      const s = max === undefined ? whole : shaped(max)
      const sentTokens =
        mode === "json"
          ? schema
          : Math.max(
              budget.count(specsJson(s.specs)),
              budget.count(`${s.jsonPrompt.system}\n\n${s.jsonPrompt.user}`) + schema
            )
      return { ...s, sentTokens, room: budget.room(...s.start.map((m) => m.content)) - sentTokens }
    }
    // The query is never cut: when the tools leave less than half the prompt for the conversation, their descriptions are (as StableToolBench cuts them to 256 characters, then shorter).
    const wanted = Math.floor(budget.promptTokens / 2)
    let chosen = measure(undefined)
    let cutTo: number | undefined
    for (const max of DESCRIPTION_CUTS) {
      if (chosen.room >= wanted) break
      chosen = measure(max)
      cutTo = max
    }
    const descriptionChars = (specs: ReadonlyArray<ToolSpec>) => specs.reduce((n, s) => n + s.description.length, 0)
    const cuts: Array<ContextCut> =
      cutTo === undefined
        ? []
        : [
            {
              key: `tool descriptions (cut to ${cutTo} characters each)`,
              fromChars: descriptionChars(allSpecs),
              fromTokens: budget.count(specsJson(allSpecs)),
              toTokens: budget.count(specsJson(chosen.specs))
            }
          ]
    // not even the query and Finish fit beside the functions' names and parameters: the task cannot run at this context size
    const overflow =
      chosen.room <= 0
        ? new ContextOverflow({
            role,
            promptTokens: budget.promptTokens - chosen.room,
            contextTokens: info.contextTokens,
            // the room kept for the reply counts against the window too: say it, or "1609 of 2048" reads as fitting
            ...(info.contextTokens > budget.promptTokens
              ? { completionTokens: info.contextTokens - budget.promptTokens }
              : {}),
            provider: info.provider
          })
        : undefined
    return {
      start: chosen.start,
      specs: chosen.specs,
      cuts,
      sentTokens: chosen.sentTokens,
      ...(overflow ? { overflow } : {})
    }
  }
  // Refitted only when a reply's usage changed the estimate (calibration only ever lowers it).
  let fitted = { charsPerToken: budget.charsPerToken, value: fit() }
  return {
    task,
    mode,
    role,
    specs: allSpecs,
    observationLimit: options.observationLimit ?? CHAIN_DEFAULTS.observationLimit,
    singleChainMaxStep: options.singleChainMaxStep ?? CHAIN_DEFAULTS.singleChainMaxStep,
    toolTimeoutMs: options.toolTimeoutMs ?? CHAIN_DEFAULTS.toolTimeoutMs,
    prompts,
    sampling: options.temperature === undefined ? undefined : { temperature: options.temperature },
    nudge: options.nudge ?? CHAIN_DEFAULTS.nudge,
    validateArgs: options.validateArgs ?? CHAIN_DEFAULTS.validateArgs,
    parallelCalls: options.parallelCalls ?? CHAIN_DEFAULTS.parallelCalls,
    asStableToolBench,
    start: whole.start,
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
  decision.action ? (decision.thought.trim() ? 1 : 0) + 2 * (1 + (decision.more?.length ?? 0)) : 1

/** The step recorded for a reply that called no function. */
export const proseStep = (decision: Decision): ChainStep => ({
  thought: decision.thought,
  tool: "",
  arguments: "",
  response: ""
})

const parseArgs = (input: unknown): { args: Record<string, unknown>; argsError?: string } => {
  if (input === undefined || input === null || input === "") return { args: {} }
  if (typeof input === "object" && !Array.isArray(input)) return { args: input as Record<string, unknown> }
  if (typeof input === "string") {
    try {
      const parsed: unknown = parseJsonBounded(input)
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
        return { args: parsed as Record<string, unknown> }
    } catch (e) {
      if (e instanceof NestingTooDeep) return { args: {}, argsError: `the arguments could not be read: ${e.message}` }
      // else reported below
    }
  }
  return { args: {}, argsError: "the arguments must be a JSON object" }
}

/** A step in JSON mode after the server kept failing to parse native tool calls: the reply as a tool call. */
const jsonFallback = (chain: Chain, messages: ReadonlyArray<Message>) =>
  Effect.gen(function* () {
    const prompt = renderTemplate("react-json", { functions: functionsList(chain.specs) })
    const { value, response } = yield* generateObject({
      role: chain.role,
      messages: [
        ...messages,
        { role: "user", content: `${prompt.system}\n\n${prompt.user}`, values: { functions: chain.specs } }
      ],
      schema: JsonAction,
      options: chain.sampling
    })
    const args = parseArgs(value.action_input)
    return {
      ...response,
      text: value.thought,
      toolCalls: [{ name: value.action, arguments: args.argsError ? { _raw: value.action_input } : args.args }]
    }
  })

/** Ask the model for the next action from the conversation so far. */
export const decide = (
  chain: Chain,
  conversation: ReadonlyArray<Message>,
  step: number
): Effect.Effect<Decision, GenerateError, LanguageModel> =>
  Effect.gen(function* () {
    const fit = chain.fitted()
    if (fit.overflow) return yield* Effect.fail(fit.overflow)
    yield* warnCuts(chain.budget, chain.role, fit.cuts)
    // The conversation (from `chain.start`, the query whole) is kept whole; each request gets it fitted to the context.
    const messages = chain.budget.conversation(
      [...fit.start, ...conversation.slice(fit.start.length)],
      fit.start.length,
      fit.sentTokens
    )
    const callId = `call_${step}`
    if (chain.mode === "native") {
      const response = yield* callNative(
        { role: chain.role, messages, tools: fit.specs, options: chain.sampling },
        (tried) => jsonFallback(chain, tried)
      )
      // without parallel calls the first call is the reply's action, and the only one kept in the conversation
      const calls = (response.toolCalls ?? []).slice(0, chain.parallelCalls ? undefined : 1)
      const thought = response.text.trim()
      if (thought) yield* emit("thought", { thought, step })
      if (calls.length === 0)
        return { thought, message: { role: "assistant", content: capText(response.text, SIZE_CAPS.sentBackChars) } }
      // arguments the provider could not use (nested too deep) are a bad call the model is told about
      const argsOf = (call: (typeof calls)[number]) =>
        call.argumentsError !== undefined
          ? { args: {}, argsError: `the arguments could not be read: ${call.argumentsError}` }
          : chain.asStableToolBench
            ? readAsStableToolBench(call.name, call.rawArguments ?? JSON.stringify(call.arguments))
            : parseArgs(call.arguments)
      const actions = calls.map(
        (call, k): Action => ({
          name: call.name,
          ...argsOf(call),
          callId: call.id ?? (k === 0 ? callId : `${callId}_${k}`)
        })
      )
      return {
        thought,
        action: actions[0]!,
        ...(actions.length > 1 ? { more: actions.slice(1) } : {}),
        message: {
          role: "assistant",
          content: capText(response.text, SIZE_CAPS.sentBackChars),
          // StableToolBench keeps the model's message as it came: the arguments as written
          toolCalls: actions.map((a) => ({
            id: a.callId,
            name: a.name,
            arguments: a.args,
            ...(a.raw === undefined ? {} : { rawArguments: a.raw })
          }))
        }
      }
    }
    const { value } = yield* generateObject({ role: chain.role, messages, schema: JsonAction, options: chain.sampling })
    if (value.thought) yield* emit("thought", { thought: value.thought, step })
    return {
      thought: value.thought,
      action: { name: value.action, ...parseArgs(value.action_input), callId },
      message: { role: "assistant", content: JSON.stringify(value) }
    }
  })

/**
 * A StableToolBench tool response text, spaced as Python's json.dumps writes it (what their models saw); as
 * StableToolBench, `json.dumps(response)` of the server's response itself (a structured one nested, non-ASCII
 * escaped, keys in their order) when the chain speaks as it.
 */
const toolResponse = (chain: Chain, error: string, result?: Pick<ToolResult, "content" | "structured">) =>
  chain.asStableToolBench
    ? serverResponseText(error, result)
    : pythonJsonDumps({ error, response: result?.content ?? "" })
const toolResponseError = (chain: Chain, error: string) => toolResponse(chain, error)

/**
 * A call's arguments read as StableToolBench reads them from the model's text: a Finish's with `json.loads(...,
 * strict=False)`, then the substring fallback of rapidapi.py; any other's as its tool server's `json.loads` (strict:
 * a control character inside a string is an error; an empty text is no arguments), the decoded text remembered for
 * the replay key (`str(tool_input)`).
 */
const readAsStableToolBench = (
  name: string,
  raw: string
): { args: Record<string, unknown>; argsError?: string; raw: string } => {
  if (name === FINISH) return { args: readFinishArguments(raw), raw }
  if (raw === "") return { args: {}, raw }
  let decoded: unknown
  try {
    decoded = pythonJsonLoads(raw)
  } catch (e) {
    return { args: {}, argsError: `the tool server cannot read the arguments as JSON (${(e as Error).message})`, raw }
  }
  if (typeof decoded !== "object" || decoded === null || Array.isArray(decoded) || decoded instanceof PythonNumber)
    return { args: {}, argsError: "the arguments must be a JSON object", raw }
  return { args: rememberWritten(plainJson(decoded) as Record<string, unknown>, decoded), raw }
}

/** The observation message for a step, in the conversation style of the chain's mode. */
const observationMessage = (chain: Chain, action: Action, observation: string): Message =>
  chain.mode === "native"
    ? {
        role: "tool",
        content: observation,
        toolCallId: action.callId,
        toolName: action.name,
        ...(chain.asStableToolBench ? { sendName: true } : {})
      }
    : {
        role: "user",
        content: renderTemplate("react-observation", {
          tool: action.name,
          observation: fencedData("observation", observation)
        }).user,
        values: { tool: action.name, observation }
      }

/**
 * Perform a reply's action (and, with parallel calls, every later call of the reply in order, each
 * with its observation in the conversation). Finish ends the chain; every other misstep (unknown
 * function, bad arguments, a failing tool) becomes an error observation the model sees on its next step.
 */
export const act = (
  chain: Chain,
  decision: Decision & { action: Action },
  messages: ReadonlyArray<Message>
): Effect.Effect<Outcome> =>
  Effect.gen(function* () {
    const actions = [decision.action, ...(decision.more ?? [])]
    // StableToolBench renames a call to a function that does not exist in the conversation it sends on
    const shown = actions.map((a) => (chain.asStableToolBench && isHallucinated(chain, a) ? HALLUCINATED_NAME : a.name))
    const message: Message =
      decision.message.toolCalls === undefined || shown.every((name, k) => name === actions[k]!.name)
        ? decision.message
        : {
            ...decision.message,
            toolCalls: decision.message.toolCalls.map((c, k) => ({ ...c, name: shown[k] ?? c.name }))
          }
    let conversation: ReadonlyArray<Message> = [...messages, message]
    const before: Array<ChainStep> = []
    for (const [k, action] of actions.entries()) {
      // a reply's text is the thought of its first call only
      const outcome = yield* actOne(chain, action, k === 0 ? decision.thought : "", conversation, shown[k]!)
      if (outcome.kind !== "observation" || k === actions.length - 1)
        return before.length > 0 ? { ...outcome, before } : outcome
      before.push(outcome.step)
      conversation = outcome.messages
    }
    return yield* Effect.die(new Error("a reply's actions cannot be empty"))
  })

/** A call to a function the task does not have (Finish aside): StableToolBench's status 1. */
const isHallucinated = (chain: Chain, action: Action): boolean =>
  action.name !== FINISH && resolveTool(chain.task.tools, action.name) === undefined

/** Perform one action; `conversation` already ends with the reply that made it, the action named `shownName` there. */
const actOne = (
  chain: Chain,
  action: Action,
  thought: string,
  conversation: ReadonlyArray<Message>,
  shownName: string
): Effect.Effect<Outcome> =>
  Effect.gen(function* () {
    const argsText = JSON.stringify(action.args, null, 2)
    const observe = (raw: string) => {
      const observation = truncateObservation(raw, chain.observationLimit)
      const step: ChainStep = { thought, tool: action.name, arguments: argsText, response: observation }
      return {
        kind: "observation",
        step,
        messages: [...conversation, observationMessage(chain, { ...action, name: shownName }, observation)]
      } as const
    }
    const misstep = (guardrail: string, error: string) =>
      emit("guardrail", { guardrail, role: chain.role, error, attempt: 1, recovered: false }).pipe(
        Effect.as(observe(toolResponseError(chain, error)))
      )

    // StableToolBench looks the name up before anything else, and its answer names no valid function
    if (chain.asStableToolBench && isHallucinated(chain, action))
      return yield* misstep(
        "unknown_tool",
        chain.prompts.history?.noSuchFunction(action.name) ?? `No such function name: ${action.name}`
      )
    if (action.argsError) return yield* misstep("bad_args", `${action.name}: ${action.argsError}`)
    if (action.name === FINISH && chain.asStableToolBench) {
      // StableToolBench's rules (rapidapi.py): a return type, and for an answer a final_answer field, even empty
      const finish = action.args
      const step: ChainStep = { thought, tool: FINISH, arguments: argsText, response: "" }
      if (!("return_type" in finish)) return yield* misstep("bad_args", 'Finish: "return_type" is required')
      if (finish["return_type"] === "give_up_and_restart") return { kind: "give_up", step } as const
      if (finish["return_type"] !== "give_answer")
        return yield* misstep("bad_args", 'Finish: "return_type" must be "give_answer" or "give_up_and_restart"')
      if (!("final_answer" in finish))
        return yield* misstep("bad_args", 'Finish: "final_answer" is required when return_type is "give_answer"')
      const answer = finish["final_answer"]
      return {
        kind: "answer",
        step,
        answer: typeof answer === "string" ? answer : pythonJsonDumpsAscii(answer)
      } as const
    }
    if (action.name === FINISH) {
      const finish = FinishArgs.safeParse(action.args)
      if (!finish.success) return yield* misstep("bad_args", `Finish: ${z.prettifyError(finish.error)}`)
      const step: ChainStep = { thought, tool: FINISH, arguments: argsText, response: "" }
      if (finish.data.return_type === "give_up_and_restart") return { kind: "give_up", step } as const
      const answer = finish.data.final_answer?.trim() ?? ""
      if (!answer)
        return yield* misstep("bad_args", 'Finish: "final_answer" is required when return_type is "give_answer"')
      return { kind: "answer", step, answer } as const
    }
    const tool = resolveTool(chain.task.tools, action.name)
    if (!tool)
      return yield* misstep(
        "unknown_tool",
        `No such function name: ${action.name}. Use one of: ${chain.specs.map((s) => s.name).join(", ")}`
      )
    // without validation the arguments go as the model wrote them and the environment answers (StableToolBench)
    const args = chain.validateArgs ? parseToolArgs(tool, action.args) : ({ success: true, data: action.args } as const)
    if (!args.success)
      return yield* misstep("bad_args", `${action.name}: invalid arguments: ${z.prettifyError(args.error)}`)
    const started = Date.now()
    // Tools promise never to fail, but a hand-written one may still die or hang: that is a failed call too.
    const result = yield* guardToolCall(tool.name, tool.call(args.data as Record<string, unknown>), {
      timeoutMs: chain.toolTimeoutMs
    })
    const raw = toolResponse(chain, result.ok ? "" : (result.error ?? "the tool failed"), result)
    const outcome = observe(raw)
    yield* emit("tool_call", {
      tool: tool.name,
      args: args.data,
      ok: result.ok,
      content: outcome.step.response,
      ...(result.ok ? {} : { error: result.error ?? "the tool failed" }),
      durationMs: Date.now() - started,
      truncated: raw.length > chain.observationLimit || result.truncated === true,
      ...(result.cached ? { cached: true } : {}),
      ...(result.missed ? { missed: true } : {}),
      ...ledgerFields(result)
    })
    return outcome
  })

/** The reminder sent when the model replied without calling a function. */
export const noActionMessage = (): Message => ({ role: "user", content: loadTemplate("react-no-action").user })

/** The conversation after a reply without a function call: the reply, then our reminder when the chain sends one. */
export const afterProse = (
  chain: Chain,
  messages: ReadonlyArray<Message>,
  decision: Decision
): ReadonlyArray<Message> =>
  chain.nudge ? [...messages, decision.message, noActionMessage()] : [...messages, decision.message]

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
        messages = afterProse(chain, messages, decision)
        continue
      }
      const outcome = yield* act(chain, { ...decision, action: decision.action }, messages)
      steps.push(...stepsOf(outcome))
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
  body: Effect.Effect<
    { answer?: string | undefined; chain: ReadonlyArray<ChainStep>; error?: string | undefined },
    never,
    LanguageModel
  >
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
      model: model.info.spec,
      finalAnswer: value.answer ?? "",
      finishType: value.answer !== undefined ? "give_answer" : "give_up",
      error: value.error,
      events,
      totals: totalsOf(events, Date.now() - started)
    } satisfies Trajectory
  })

/** Record a model failure as data: an `error` event whose `tag` lets the runner tell a dead server from a bad reply. */
export const modelFailure = (e: GenerateError) =>
  emit("error", { tag: e._tag, message: e.message }).pipe(Effect.as(e.message))
