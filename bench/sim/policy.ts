// What the simulated model decides for a request: by the calling agent's role, from the task it knows and the values the
// prompts were rendered from (`Message.values`), never their wording.

import { METHODS } from "../../src/agents/methods.ts"
import type { GenerateRequest, Message, ToolSpec } from "../../src/llm/language-model.ts"
import { standardizeParameterName } from "../../src/tools/toolbench/names.ts"
import type { KnownApi, SimTask } from "./knowledge.ts"
import type { FaultKind } from "./options.ts"
import { schemaValueOf } from "./schema-value.ts"

/** What the model means to reply, before it is written as text or a native tool call. */
export type Intent =
  | { readonly kind: "object"; readonly value: unknown }
  | { readonly kind: "action"; readonly thought: string; readonly name: string; readonly args: Record<string, unknown> }

/** How a role's reply can go wrong: only calls that pick a tool can name an unknown one, only calls that write arguments can get them wrong. */
export interface FaultSurface {
  readonly tool: boolean
  readonly args: boolean
}

/** The answerer's words when a tool gave nothing usable; the verifier (and the final answer) read them. */
export const NO_INFORMATION = "The tool gave no usable information."

const FINISH = "Finish"
// the chain methods' model roles start with their names (react.step, dfsdt.expand)
const ACTION_ROLES = new RegExp(
  `^(${METHODS.filter((m) => m.kind === "chain")
    .map((m) => m.name)
    .join("|")})(\\.|$)`
)

type Schema = Record<string, unknown>
const asSchema = (v: unknown): Schema => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Schema) : {})
const propertiesOf = (schema: Schema | undefined): Schema => asSchema(schema?.["properties"])

const oneLine = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat
}

const lastUser = (messages: ReadonlyArray<Message>): Message | undefined => messages.findLast((m) => m.role === "user")

/** A named string value of a message. */
const text = (message: Message | undefined, key: string): string | undefined => {
  const value = message?.values?.[key]
  return typeof value === "string" ? value : undefined
}

/** A named list of strings of a message. */
const list = (message: Message | undefined, key: string): ReadonlyArray<string> | undefined => {
  const value = message?.values?.[key]
  return Array.isArray(value) ? value.map(String) : undefined
}

/** Whether a request is a ReAct/DFSDT step: it offers tools, asks for an `action`, or says so by its role. */
export const isActionRequest = (request: GenerateRequest): boolean =>
  (request.tools !== undefined && request.tools.length > 0) ||
  "action" in propertiesOf(request.format) ||
  ACTION_ROLES.test(request.role)

/** The fused Smurfs executor's role: thought, tool and arguments in one reply (a native call, or JSON without tools). */
const FUSED_EXECUTOR = "executor.fused"

export const faultSurface = (request: GenerateRequest): FaultSurface =>
  isActionRequest(request) || request.role === FUSED_EXECUTOR
    ? { tool: true, args: true }
    : { tool: request.role === "executor.choose", args: request.role === "executor.args" }

/** The text of a tool's response, or undefined when it carries no content (an error, an empty response). */
export const contentOf = (observation: string): string | undefined => {
  const text = observation.trim()
  if (text.length === 0 || /^(error\b|the call failed|no environment answered)/i.test(text)) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return text
  }
  if (
    typeof parsed === "object" &&
    parsed !== null &&
    !Array.isArray(parsed) &&
    ("error" in parsed || "response" in parsed)
  ) {
    const { error, response } = parsed as { error?: unknown; response?: unknown }
    if (typeof error === "string" && error.trim().length > 0) return undefined
    const body = typeof response === "string" ? response.trim() : JSON.stringify(response ?? "")
    return body.length === 0 || body === "{}" || body === "[]" || body === "null" || body === '""' ? undefined : body
  }
  return text
}

/** How the simulated step answerer opens an answer from a response. */
const DIGEST_OPENING = "The tool returned: "

/** An answer from a tool's response: its start, or the no-information sentence. */
export const digest = (observation: string): string => {
  const content = contentOf(observation)
  return content === undefined ? NO_INFORMATION : `${DIGEST_OPENING}${oneLine(content, 300)}`
}

/** Whether an answer carries information: not empty, not the no-information sentence, not a failed call's note from memory. */
const hasInformation = (answer: string): boolean =>
  answer.trim().length > 0 && !answer.includes(NO_INFORMATION) && !/^\s*The call failed\b/.test(answer)

/** The known API a text names (the longest, since one function name can end another). */
const apiNamedIn = (task: SimTask | undefined, text: string): KnownApi | undefined =>
  task
    ? [...text.matchAll(/[A-Za-z0-9_]*_for_[A-Za-z0-9_]+/g)]
        .flatMap((m) => {
          // a name cut to its last 64 characters may start inside a longer word
          const word = m[0]
          const hits: Array<KnownApi> = []
          for (let i = 0; i < word.length; i++) {
            const api = task.byName.get(word.slice(i))
            if (api) hits.push(api)
          }
          return hits
        })
        .sort((a, b) => b.name.length - a.name.length)[0]
    : undefined

/** The planner's subtask for an API: names the function and its arguments, so the executor (and grounding checks) can find them. */
export const subtaskFor = (api: KnownApi): string =>
  `Call ${api.name} with ${JSON.stringify(api.args)} to get: ${oneLine(api.description || api.apiName, 160)}`

/** A name that is not among the tools: a near miss (a plausible typo) or an invented generic one. */
const unknownName = (intended: string, rng: () => number): string =>
  rng() < 0.5 ? `${intended}s` : ["web_search", "search_api", "get_information", "lookup_data"][Math.floor(rng() * 4)]!

/** Rename arguments to the names a schema declares (recordings sometimes use `id` where the tool declares `is_id`). */
const conformArgs = (args: Readonly<Record<string, unknown>>, schema: Schema | undefined): Record<string, unknown> => {
  const declared = Object.keys(propertiesOf(schema))
  if (declared.length === 0) return { ...args }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(args)) {
    const name = declared.includes(key)
      ? key
      : declared.find((d) => d === standardizeParameterName(key) || d === `is_${key}` || `is_${d}` === key)
    if (name !== undefined) out[name] = value
  }
  for (const name of Array.isArray(schema?.["required"]) ? (schema["required"] as ReadonlyArray<string>) : []) {
    if (name in out) continue
    const property = asSchema(propertiesOf(schema)[name])
    out[name] = property["example_value"] ?? schemaValueOf(property)
  }
  return out
}

/** Arguments made wrong in one of three ways a model gets them wrong: a missing required one, an undeclared one, a wrong type. */
const breakArgs = (
  args: Record<string, unknown>,
  schema: Schema | undefined,
  rng: () => number
): Record<string, unknown> => {
  const required = Array.isArray(schema?.["required"]) ? (schema["required"] as ReadonlyArray<string>) : []
  const numeric = Object.entries(propertiesOf(schema)).find(([, p]) =>
    ["integer", "number"].includes(String(asSchema(p)["type"]))
  )
  const way = Math.floor(rng() * 3)
  if (way === 0 && required.length > 0) {
    const { [required[0]!]: _dropped, ...rest } = args
    return rest
  }
  if (way === 1 && numeric) return { ...args, [numeric[0]]: "not a number" }
  return { ...args, unexpected_parameter: "value" }
}

/** Which function names the assistant already called in this conversation (native calls or JSON actions). */
const calledNames = (messages: ReadonlyArray<Message>): Set<string> => {
  const names = new Set<string>()
  for (const m of messages) {
    if (m.role !== "assistant") continue
    for (const call of m.toolCalls ?? []) names.add(call.name)
    const action = /"action"\s*:\s*"([^"]+)"/.exec(m.content)?.[1]
    if (action) names.add(action)
  }
  return names
}

/** The observations a chain has seen: tool messages, or the user messages the JSON format renders them into. */
const observationsOf = (messages: ReadonlyArray<Message>): ReadonlyArray<string> =>
  messages.flatMap((m) => {
    if (m.role === "tool") return [m.content]
    const observation = m.role === "user" ? text(m, "observation") : undefined
    return observation === undefined ? [] : [observation]
  })

/** The functions the request offers: native specs, else the ones the JSON format's prompt lists. */
const offeredSpecs = (request: GenerateRequest): ReadonlyArray<ToolSpec> => {
  if (request.tools && request.tools.length > 0) return request.tools
  const listed = request.messages.find((m) => Array.isArray(m.values?.["functions"]))?.values?.["functions"]
  return (listed as ReadonlyArray<ToolSpec> | undefined) ?? []
}

/** The parameters JSON Schema of an offered function. */
const parametersOf = (request: GenerateRequest, name: string): Schema | undefined =>
  offeredSpecs(request).find((t) => t.name === name)?.parameters

/**
 * A ReAct/DFSDT step: the next relevant API not called yet (and not among the candidates the
 * diversity prompt lists), then Finish with what the observations said.
 */
const nextAction = (
  request: GenerateRequest,
  task: SimTask | undefined,
  fault: FaultKind | undefined,
  rng: () => number
): Intent => {
  const offered = offeredSpecs(request).map((s) => s.name)
  const called = calledNames(request.messages)
  // the diversity prompt's candidates: the actions already tried from this state
  const tried = new Set(list(lastUser(request.messages), "candidates") ?? [])
  const candidates =
    task && task.apis.length > 0 ? task.apis.map((a) => a.name) : offered.filter((n) => n !== FINISH).slice(0, 1)
  const next = candidates.find((name) => offered.includes(name) && !called.has(name) && !tried.has(name))
  let action: { thought: string; name: string; args: Record<string, unknown> }
  if (next !== undefined) {
    const api = task?.byName.get(next)
    const schema = parametersOf(request, next)
    const args = conformArgs(api?.args ?? {}, schema)
    action = {
      thought: `I should call ${next} to get: ${oneLine(api?.description || api?.apiName || next, 120)}.`,
      name: next,
      args: fault === "wrong_args" ? breakArgs(args, schema, rng) : args
    }
  } else {
    const found = observationsOf(request.messages).map(digest).filter(hasInformation)
    action =
      found.length > 0 || !task || task.apis.length === 0
        ? {
            thought: "I have the information the task needs, so I give the final answer.",
            name: FINISH,
            args: {
              return_type: "give_answer",
              final_answer:
                found.length > 0 ? `Here is what I found: ${found.join(" ")}` : "I found no information for this task."
            }
          }
        : {
            thought: "None of the calls returned usable information, so I restart.",
            name: FINISH,
            args: { return_type: "give_up_and_restart" }
          }
    if (fault === "wrong_args")
      action = { ...action, args: { final_answer: String(action.args["final_answer"] ?? "") } }
  }
  return fault === "unknown_tool"
    ? { kind: "action", ...action, name: unknownName(action.name, rng) }
    : { kind: "action", ...action }
}

/**
 * The Smurfs executor's tool among `allowed`: the subtask's planned API; when it is excluded, a sibling API of the
 * same tool, else the first allowed. It reads only the prompt, so that equal prompts get equal replies, as from a
 * real model at temperature 0 (caches rely on it).
 */
const toolFor = (target: KnownApi | undefined, allowed: ReadonlyArray<string>): string => {
  const sibling = target
    ? allowed.find((n) => n !== target.name && n.endsWith(target.name.slice(target.name.lastIndexOf("_for_"))))
    : undefined
  return target && allowed.includes(target.name) ? target.name : (sibling ?? allowed[0] ?? target?.name ?? "none")
}

/**
 * The fused Smurfs executor's step (thought, tool, arguments in one reply): the executor's choice among the tools
 * offered (native specs, or the JSON fallback's listed ones), with the recorded arguments conformed to the tool's
 * schema; a native call when the request offers tools, else the JSON object its format asks for.
 */
const fusedAction = (
  request: GenerateRequest,
  task: SimTask | undefined,
  fault: FaultKind | undefined,
  rng: () => number
): Intent => {
  const prompt = lastUser(request.messages)
  const target = apiNamedIn(task, text(prompt, "subtask") ?? "")
  const offered = offeredSpecs(request).map((s) => s.name)
  const chosen = toolFor(target, offered.length > 0 ? offered : (list(prompt, "allowed") ?? []))
  const schema = parametersOf(request, chosen)
  const api = task?.byName.get(chosen)
  const args = conformArgs(api?.args ?? {}, schema)
  const thought = `Call ${chosen} to get: ${oneLine(api?.description || api?.apiName || chosen, 120)}.`
  // faults go out as they are: an unknown name, broken arguments
  const name = fault === "unknown_tool" ? unknownName(chosen, rng) : chosen
  // as `executor.args` writes them: shaped by the tool's schema (types, required values), unless broken on purpose
  const written =
    fault === "wrong_args"
      ? breakArgs(args, schema, rng)
      : (schemaValueOf(schema ?? {}, (path) => (path.length === 0 ? args : undefined)) as Record<string, unknown>)
  if (request.tools && request.tools.length > 0) return { kind: "action", thought, name, args: written }
  // a reply whose schema asks for no thought (another call after a failed one) has none
  const withThought = "thought" in propertiesOf(request.format)
  return {
    kind: "object",
    value: withThought ? { thought, tool: name, arguments: written } : { tool: name, arguments: written }
  }
}

/** The verifier's fields (status, reason, hint) in the reply's schema, for an answer that does or does not carry information. */
const verdictOf = (format: Schema, solved: boolean, fields: Record<string, unknown> = {}) =>
  schemaValueOf(format, (path, schema) => {
    const key = path[path.length - 1]
    if (path.length !== 1) return undefined
    if (key !== undefined && key in fields) return fields[key]
    if (key === "reason")
      return solved ? "The answer gives the information the subtask asks for." : "The tool gave no usable information."
    if (key === "hint") return solved ? undefined : "Try another tool or other arguments."
    const options = asSchema(schema)["enum"]
    if (Array.isArray(options))
      return options.find((o) =>
        (solved ? /^(solved|yes|true|pass|accept)/i : /^(pending|unsolved|no|false|fail|reject)/i).test(String(o))
      )
    if (asSchema(schema)["type"] === "boolean") return solved
    return undefined
  })

/** The response a step's answer reads: a tool message, or inside the user message for a model without a tool role. */
const responseOf = (request: GenerateRequest, prompt: Message | undefined): string =>
  request.messages.findLast((m) => m.role === "tool")?.content ?? text(prompt, "observation") ?? ""

/** The string fields of the Smurfs agents' replies, by role; the schema shapes the rest. */
const smurfsValue = (
  request: GenerateRequest,
  task: SimTask | undefined,
  fault: FaultKind | undefined,
  rng: () => number
): unknown => {
  const format = request.format ?? {}
  const prompt = lastUser(request.messages)
  const user = prompt?.content ?? ""
  const subtask = text(prompt, "subtask") ?? ""
  const target = apiNamedIn(task, subtask)
  const fill = (fields: Record<string, unknown>) =>
    schemaValueOf(format, (path) => (path.length === 1 ? fields[path[0]!] : undefined))
  switch (request.role) {
    case "planner": {
      const question = text(prompt, "query") ?? task?.query ?? user
      const subtasks = task && task.apis.length > 0 ? task.apis.map(subtaskFor) : [question]
      return fill({ subtasks, steps: subtasks, plan: subtasks })
    }
    case "executor.thought": {
      const excluded = list(prompt, "excluded") ?? []
      const thought =
        target && !excluded.includes(target.name)
          ? `Call ${target.name} with ${JSON.stringify(target.args)} to get: ${oneLine(target.description || target.apiName, 120)}.`
          : `The first choice failed; try another tool for: ${oneLine(subtask, 160)}.`
      return fill({ thought })
    }
    case "executor.choose": {
      const listed = propertiesOf(format)["tool"]
      const enumerated = asSchema(listed)["enum"]
      const allowed = Array.isArray(enumerated) ? enumerated.map(String) : [...(list(prompt, "allowed") ?? [])]
      const choice = toolFor(target, allowed)
      // An unknown name goes out as it is: the schema's enum would otherwise replace it with a valid one.
      return fault === "unknown_tool" ? { tool: unknownName(choice, rng) } : fill({ tool: choice })
    }
    case "executor.args": {
      const tool = text(prompt, "tool") ?? ""
      const api = task?.byName.get(tool)
      const args = conformArgs(api?.args ?? {}, format)
      // Broken arguments go out as they are: filling them in from the schema would repair them.
      return fault === "wrong_args"
        ? breakArgs(args, format, rng)
        : schemaValueOf(format, (path) => (path.length === 0 ? args : undefined))
    }
    case "answerer.step":
      return fill({ answer: digest(responseOf(request, prompt)) })
    case "answerer.verify": {
      // the fused step answer and its verdict: the verdict judges the answer just written
      const answer = digest(responseOf(request, prompt))
      return verdictOf(format, hasInformation(answer), { answer })
    }
    case "answerer.subtask": {
      const answers = (list(prompt, "answers") ?? []).filter(hasInformation)
      return fill({ answer: answers.length > 0 ? answers.join(" ") : NO_INFORMATION })
    }
    case "answerer.final": {
      // a final answerer condenses what it reads: a raw response (a short one is a step's answer as it is) is written
      // as the step answerer writes it, as ReAct's Finish writes its observations; a written answer stays as it is
      const answers = (list(prompt, "answers") ?? [])
        .filter(hasInformation)
        .map((a) => (a.startsWith(DIGEST_OPENING) ? a : digest(a)))
      return fill({
        answer:
          answers.length > 0
            ? `Here is what I found: ${answers.join(" ")}`
            : "I could not find the information for this question."
      })
    }
    case "verifier":
      return verdictOf(format, hasInformation(text(prompt, "answer") ?? ""))
    default:
      return schemaValueOf(format, (_path, schema) =>
        asSchema(schema)["type"] === "string" ? digest(user) : undefined
      )
  }
}

/** The intent for a request; `fault` (unknown tool, wrong arguments) is applied here because only the policy knows where names and arguments sit. */
export const decide = (
  request: GenerateRequest,
  task: SimTask | undefined,
  fault: FaultKind | undefined,
  rng: () => number
): Intent => {
  if (request.role === FUSED_EXECUTOR) return fusedAction(request, task, fault, rng)
  if (isActionRequest(request)) return nextAction(request, task, fault, rng)
  return { kind: "object", value: smurfsValue(request, task, fault, rng) }
}
