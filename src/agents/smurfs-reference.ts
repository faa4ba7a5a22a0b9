// The Smurfs authors' agents (--profile reference): their prompts, read from a checkout, each sent as
// one user message; their free-text replies parsed as their code parses them, with their retry counts.
import * as Effect from "effect/Effect"
import { MalformedOutput } from "../llm/errors.ts"
import { type GenerateOptions, LanguageModel, type Message } from "../llm/language-model.ts"
import { callModel } from "../llm/structured.ts"
import { splitThinking } from "../llm/thinking.ts"
import type { Step } from "../memory/step.ts"
import { plainJson } from "../tools/environments/python-json.ts"
import { parsePythonLiteral, pythonRepr } from "../tools/environments/python-repr.ts"
import { rememberWritten } from "../tools/environments/written-args.ts"
import { parametersJsonSchema } from "../tools/library.ts"
import type { Tool } from "../tools/tool.ts"
import { changeName } from "../tools/toolbench/names.ts"
import { emit } from "../trace/events.ts"
import type { AgentContext } from "./ask.ts"
import type { SmurfsPromptName, SmurfsSource } from "./smurfs-source.ts"
import type { Verdict } from "./verifier.ts"

/**
 * Replies their code reads before giving up on one request: `BaseAgent.max_retry` is 10 and an agent
 * stops once its counter passes it, after 12 attempts. Their planner then starts over without end;
 * here its 12 attempts are the stated bound, and the query becomes the one subtask.
 */
export const THEIR_ATTEMPTS = 12

/** Argument sets written for one tool before it is excluded at this step (their `retry_parameter == 4`). */
export const THEIR_ARGUMENT_SETS = 4

/** What the reference agents need beside the usual agent context: the texts and the sampling. */
export interface ReferenceAgents {
  readonly source: SmurfsSource
  /** Request options of every agent call (their vLLM client samples at temperature 0.95). */
  readonly sampling: GenerateOptions
}

/** The JSON between the first `{` and the first (or last) `}`, read as Python's `eval` reads a literal. */
const braced = (
  text: string,
  end: "first" | "last",
  prepare: (s: string) => string = (s) => s,
  keepNumbers = false
): Record<string, unknown> | undefined => {
  const start = text.indexOf("{")
  const stop = end === "first" ? text.indexOf("}") : text.lastIndexOf("}")
  if (start < 0 || stop < start) return undefined
  const value = parsePythonLiteral(prepare(text.slice(start, stop + 1)), keepNumbers)
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

/**
 * One agent call as theirs: the filled prompt as the user message, after the system message their vLLM client
 * sends (their OpenAI client, used for their GPT runs, builds it and drops it: local models run as their vLLM
 * runs), asked again until `parse` reads the reply.
 */
const askText = <A>(
  ctx: AgentContext,
  agents: ReferenceAgents,
  role: string,
  prompt: SmurfsPromptName,
  values: Readonly<Record<string, string>>,
  parse: (text: string) => A | undefined,
  attempts = 1
) =>
  Effect.gen(function* () {
    const model = yield* LanguageModel
    const content = agents.source.render(prompt, values)
    const system = agents.source.system
    const messages: Array<Message> = [
      ...(system === undefined ? [] : [{ role: "system" as const, content: system }]),
      { role: "user", content }
    ]
    let last = ""
    for (let attempt = 1; attempt <= attempts; attempt++) {
      yield* ctx.charge
      // their vLLM client sets no max_tokens, which vLLM takes as the rest of the window: sent as such, so that a
      // model that rambles on another server (Ollama's num_predict is unbounded) stops where vLLM would stop it
      const response = yield* callModel(
        model.generate,
        {
          role,
          messages,
          options: {
            ...agents.sampling,
            maxTokens:
              agents.sampling.maxTokens ??
              ctx.budget.replyRoom(system === undefined ? content : `${system}\n${content}`)
          }
        },
        attempt
      )
      if (response.truncated)
        yield* emit("guardrail", {
          guardrail: "length",
          role,
          error: "the reply was cut at the end of the context window",
          attempt,
          recovered: false
        })
      last = splitThinking(response.text).text
      const value = parse(last)
      if (value !== undefined) return value
      yield* emit("guardrail", {
        guardrail: "format",
        role,
        error: `the reply does not read as the authors' code reads it (${prompt})`,
        attempt,
        recovered: false
      })
    }
    return yield* new MalformedOutput({
      role,
      error: `no reply of ${attempts} read as the authors' code reads it`,
      text: last.slice(0, 2000),
      attempts
    })
  })

/** Python's `int()` of a reply's value: an int, a float (truncated) or a string of digits; undefined where int() raises. */
export const pythonInt = (value: unknown): number | undefined => {
  if (typeof value === "boolean") return value ? 1 : 0
  if (typeof value === "number") return Number.isFinite(value) ? Math.trunc(value) : undefined
  if (typeof value === "string" && /^\s*[+-]?\d+\s*$/.test(value)) return Number.parseInt(value, 10)
  return undefined
}

/** Their `get_answer_log`: the steps' thoughts and answers, or the empty-log text. */
const answerLog = (agents: ReferenceAgents, steps: ReadonlyArray<Step>): string =>
  steps.length === 0 ? agents.source.emptyLog : pythonRepr(steps.map((s) => ({ thought: s.thought, answer: s.answer })))

/** An API as their executor describes it (`relevant_API_list`): the ID, `category:tool:api`, description and parameters. */
export const apiDic = (tool: Tool, id: number): Record<string, unknown> => {
  const doc = tool.meta?.["doc"] as Record<string, unknown> | undefined
  if (doc)
    return {
      ID: id,
      tool_name: `${String(doc["category_name"] ?? "")}:${String(doc["tool_name"] ?? "")}:${String(doc["api_name"] ?? "")}`,
      description: doc["api_description"] ?? "",
      required_parameters: doc["required_parameters"] ?? [],
      optional_parameters: doc["optional_parameters"] ?? []
    }
  // a tool outside ToolBench: its JSON Schema's parameters in ToolBench's shape
  const schema = parametersJsonSchema(tool) as {
    properties?: Record<string, { type?: unknown; description?: unknown }>
    required?: ReadonlyArray<string>
  }
  const entries = Object.entries(schema.properties ?? {}).map(([name, p]) => ({
    name,
    type: String(p.type ?? "string").toUpperCase(),
    description: String(p.description ?? "")
  }))
  const required = new Set(schema.required ?? [])
  return {
    ID: id,
    tool_name: tool.name,
    description: tool.description,
    required_parameters: entries.filter((e) => required.has(e.name)),
    optional_parameters: entries.filter((e) => !required.has(e.name))
  }
}

/** The tool list their executor shows: `[{'ID': '0', 'tool_name': ..., 'description': ...}, ...]` of the tools not excluded here. */
const toolListOf = (tools: ReadonlyArray<Tool>, excluded: ReadonlyArray<string>, forced: Tool | undefined): string => {
  const entry = (t: Tool) => {
    const dic = apiDic(t, tools.indexOf(t))
    return { ID: String(dic["ID"]), tool_name: dic["tool_name"], description: dic["description"] }
  }
  // after four bad choices they show the first remaining tool alone, as a dict rather than a list
  if (forced) return pythonRepr(entry(forced))
  return pythonRepr(tools.filter((t) => !excluded.includes(t.name)).map(entry))
}

/** Their subtask "question": every earlier subtask with its answer, then this one (`task_log`). */
export const taskLog = (earlier: ReadonlyArray<{ subtask: string; answer: string }>, subtask?: string): string =>
  earlier.map((a) => `question: ${a.subtask}\nanswer: ${a.answer}\n`).join("") +
  (subtask === undefined ? "" : `question: ${subtask}\n`)

/** Their planner: the `Tasks` list between the first `{` and the first `}`; undefined after their 12 attempts. */
export const planReference = (ctx: AgentContext, agents: ReferenceAgents, query: string) =>
  askText(
    ctx,
    agents,
    "planner",
    "task_decompose_prompt",
    { question: query },
    (text) => {
      const tasks = braced(text, "first")?.["Tasks"]
      return Array.isArray(tasks) ? tasks.map((t) => (typeof t === "string" ? t : pythonRepr(t))) : undefined
    },
    THEIR_ATTEMPTS
  )

export interface ReferenceView {
  readonly tools: ReadonlyArray<Tool>
  readonly excluded: ReadonlyArray<string>
  /** The first remaining tool, taken without a choice after four bad ones. */
  readonly forced?: Tool | undefined
  readonly subtask: string
  /** `task_log` up to and including this subtask's question. */
  readonly question: string
  /** The current path. */
  readonly path: ReadonlyArray<Step>
  readonly hint: string | undefined
}

/** Their thought: the whole reply. */
export const thinkReference = (ctx: AgentContext, agents: ReferenceAgents, view: ReferenceView) =>
  askText(
    ctx,
    agents,
    "executor.thought",
    "generate_thought_prompt",
    {
      question: view.question,
      tool_list: toolListOf(view.tools, view.excluded, view.forced),
      previous_log: answerLog(agents, view.path),
      hint: view.hint ?? agents.source.firstHint
    },
    (text) => text
  )

/** Their tool choice: `ID` between the first `{` and the last `}`, then `int()`; undefined when no tool has that ID (a bad choice). */
export const chooseReference = (ctx: AgentContext, agents: ReferenceAgents, view: ReferenceView, thought: string) =>
  askText(
    ctx,
    agents,
    "executor.choose",
    "choose_tool_prompt",
    { question: `${view.subtask}thought: ${thought}\n`, tool_list: toolListOf(view.tools, view.excluded, undefined) },
    (text) => {
      const parsed = braced(text, "last")
      return parsed && "ID" in parsed ? { id: parsed["ID"] } : undefined
    },
    THEIR_ATTEMPTS
  ).pipe(
    Effect.map(({ id }) => {
      const n = pythonInt(id)
      // as theirs, any tool of the task may be chosen (an excluded one too); only an unknown ID is a bad choice
      return n !== undefined && n >= 0 && n < view.tools.length ? view.tools[n] : undefined
    })
  )

/** True when the API declares no parameter: their executor then calls it with `{}` without asking the model. */
export const takesNoArguments = (tool: Tool): boolean => {
  const dic = apiDic(tool, 0)
  return (
    (dic["required_parameters"] as ReadonlyArray<unknown>).length === 0 &&
    (dic["optional_parameters"] as ReadonlyArray<unknown>).length === 0
  )
}

/** Their arguments: a dict between the first `{` and the last `}` (`true`/`false` made Python's), names through `change_name`. */
export const writeArgsReference = (
  ctx: AgentContext,
  agents: ReferenceAgents,
  view: ReferenceView,
  thought: string,
  tool: Tool
) =>
  Effect.gen(function* () {
    if (takesNoArguments(tool)) return {}
    const values = {
      api_dic: pythonRepr(apiDic(tool, view.tools.indexOf(tool))),
      question: `${view.question}thought: ${thought}\n`,
      previous_log: answerLog(agents, view.path)
    }
    const parse = (text: string) =>
      braced(
        text,
        "last",
        (s) => s.replaceAll(": true", ": True").replaceAll(": false", ": False").replaceAll("```", "").trim(),
        true
      )
    // each set is one request read up to 12 times; after four sets without arguments the tool is excluded
    for (let set = 1; set <= THEIR_ARGUMENT_SETS; set++) {
      const result = yield* Effect.result(
        askText(ctx, agents, "executor.args", "choose_parameter_prompt", values, parse, THEIR_ATTEMPTS)
      )
      if (result._tag === "Success") {
        // their server keys the call by str() of this dict: its order and numbers as eval read them
        const written = Object.fromEntries(Object.entries(result.success).map(([k, v]) => [changeName(k), v]))
        return rememberWritten(plainJson(written) as Record<string, unknown>, written)
      }
      if (result.failure._tag !== "MalformedOutput") return yield* Effect.fail(result.failure)
    }
    return yield* new MalformedOutput({
      role: "executor.args",
      error: `no arguments for ${tool.name} after ${THEIR_ARGUMENT_SETS} sets`,
      text: "",
      attempts: THEIR_ARGUMENT_SETS
    })
  })

/** Their step answer: the whole reply, from the path's answers and this step's observation (`get_observation_log`). */
export const answerStepReference = (
  ctx: AgentContext,
  agents: ReferenceAgents,
  subtask: string,
  path: ReadonlyArray<Step>,
  thought: string,
  observation: string
) =>
  askText(
    ctx,
    agents,
    "answerer.step",
    "answer_generation_prompt",
    {
      question: subtask,
      call_result: pythonRepr([
        ...path.map((s) => ({ thought: s.thought, answer: s.answer })),
        { thought, observation }
      ])
    },
    (text) => text
  )

/** Their verifier: `Speak` and `Status` between the first `{` and the first `}`; `int(Status)` 0 is a hint, any other int solves. */
export const verifyReference = (ctx: AgentContext, agents: ReferenceAgents, subtask: string, answer: string) =>
  askText(
    ctx,
    agents,
    "verifier",
    "final_answer_check_prompt",
    { question: subtask, answer },
    (text) => {
      const parsed = braced(text, "first")
      return parsed && "Speak" in parsed && "Status" in parsed
        ? { speak: parsed["Speak"], status: parsed["Status"] }
        : undefined
    },
    THEIR_ATTEMPTS
  ).pipe(
    Effect.map(({ speak, status }): Verdict => {
      const n = pythonInt(status)
      const said = typeof speak === "string" ? speak : pythonRepr(speak)
      // a Status int() cannot read costs the step and keeps the previous hint, as theirs
      if (n === undefined)
        return { status: "pending", reason: `unreadable Status ${pythonRepr(status)}`, hint: undefined }
      return n === 0 ? { status: "pending", reason: said, hint: said } : { status: "solved", reason: said, hint: null }
    })
  )

/** Their final-answer prompt over a log: a subtask's answer from its steps (step limit, root exhaustion) or the query's from `task_log`. */
export const finalReference = (
  ctx: AgentContext,
  agents: ReferenceAgents,
  role: string,
  question: string,
  log: string
) => askText(ctx, agents, role, "final_answer_generation_prompt", { question, previous_log: log }, (text) => text)

/** A subtask's answer from every answered step it took, with their final-answer prompt. */
export const answerSubtaskReference = (
  ctx: AgentContext,
  agents: ReferenceAgents,
  question: string,
  steps: ReadonlyArray<Step>
) => finalReference(ctx, agents, "answerer.subtask", question, answerLog(agents, steps))
