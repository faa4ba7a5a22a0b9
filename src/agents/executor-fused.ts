// Executor agent in one request (`--executor fused`): the thought, the tool and its arguments from one reply, a native
// tool call (or one JSON object with `--tool-calling json`), at the end of the task's and subtask's shared prefix.
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { z } from "zod"
import { type GenerateError, MalformedOutput } from "../llm/errors.ts"
import { type GenerateResponse, LanguageModel, type ToolSpec } from "../llm/language-model.ts"
import { jsonSchemaOf } from "../llm/structured.ts"
import { renderTemplate } from "../text/prompt-template.ts"
import type { Tool } from "../tools/tool.ts"
import { emit, holdBack } from "../trace/events.ts"
import { capText, SIZE_CAPS } from "../trace/size-caps.ts"
import { spanFn } from "../trace/span-fn.ts"
import { type AgentContext, askTurn, clipStrings, renderRequest, type Turn } from "./ask.ts"
import type { BudgetExhausted } from "./errors.ts"
import { type ExecutorView, type FailedCall, none } from "./executor.ts"
import { argsSchema, checkArgs, checkToolName, type Problem, usableArgs } from "./guardrails.ts"
import { subtaskContext } from "./subtask-context.ts"
import { callNative } from "./tool-call-recovery.ts"
import { toolDoc } from "./tool-docs.ts"

/** The fused executor's role: one request in place of `executor.thought`, `executor.choose` and `executor.args`. */
export const FUSED_ROLE = "executor.fused"

/**
 * What the fused executor decided: a call to make; a name that is no tool (with the name guardrail off, as
 * `chooseTool` returns it); or a tool whose arguments stayed invalid after the reflections (as `writeArgs`
 * failing: the caller excludes the tool at this depth without calling it).
 */
export type FusedAction =
  | {
      readonly kind: "call"
      readonly thought: string
      readonly tool: Tool
      readonly args: Record<string, unknown>
      /** The exchange the step's answer continues: this request and its reply (the call goes on it). */
      readonly turn: Turn
    }
  | { readonly kind: "unknown"; readonly thought: string; readonly name: string }
  | {
      readonly kind: "bad_args"
      readonly thought: string
      readonly tool: Tool
      /** Why, as the three-call executor's failed arguments request says it (a MalformedOutput's message). */
      readonly error: string
    }

/** What the fused executor sees: the executor's view (its memory slice), and how the model calls tools. */
export interface FusedExecutorView extends ExecutorView {
  readonly toolCalling: "auto" | "native" | "json"
  /**
   * The call that just failed at this node (`LoopRules.rethink` off): the JSON request continues its exchange with the
   * response and asks for another call under the same thought; a native request starts anew (its tools change).
   */
  readonly retry?: FailedCall | undefined
}

/**
 * One branch of the JSON reply per tool, its name with its own parameters: a server that decodes under the reply's
 * schema (Ollama's `format`, llama.cpp's `response_format`, the embedded engine) then writes the arguments of the
 * chosen tool as its schema says, as the three-call executor's arguments request is shaped by its tool's schema.
 */
const callBranches = (tools: ReadonlyArray<Tool>, thought: boolean) =>
  tools.map((t) => ({
    type: "object",
    properties: {
      ...(thought ? { thought: { type: "string" } } : {}),
      tool: { type: "string", enum: [t.name] },
      arguments: jsonSchemaOf(argsSchema(t))
    },
    required: [...(thought ? ["thought"] : []), "tool", "arguments"],
    additionalProperties: false
  }))

/**
 * The reply of the JSON fallback. Read loosely (any arguments object): the arguments are checked against the chosen
 * tool's schema after the reply, each problem reflected back; with `tools`, the schema sent to the server is one
 * branch per tool (`callBranches`), so that a grammar shapes them as they are written.
 */
export const fusedJson = (allowed: ReadonlyArray<string>, tools?: ReadonlyArray<Tool>) => {
  const reply = z.object({
    thought: z.string(),
    tool: z.string().meta({ enum: [...allowed] }),
    arguments: z.record(z.string(), z.unknown())
  })
  const branches = tools && tools.length > 0 ? callBranches(tools, true) : undefined
  return branches && fits(branches) ? reply.meta({ anyOf: branches }) : reply
}

/**
 * The branches' schema is small enough for a server's grammar (Ollama cuts a grammar at 32 KB, and every schema sent
 * stays far below: src/llm/grammar-safe.test.ts); a library too large for it gets the loose reply, checked after.
 */
const MAX_BRANCHES_CHARS = 6_000
const fits = (branches: ReadonlyArray<unknown>): boolean => JSON.stringify(branches).length <= MAX_BRANCHES_CHARS

/** The JSON reply after a failed call: the thought stands, another tool and its arguments. */
export const fusedJsonAgain = (allowed: ReadonlyArray<string>, tools?: ReadonlyArray<Tool>) => {
  const reply = z.object({
    tool: z.string().meta({ enum: [...allowed] }),
    arguments: z.record(z.string(), z.unknown())
  })
  const branches = tools && tools.length > 0 ? callBranches(tools, false) : undefined
  return branches && fits(branches) ? reply.meta({ anyOf: branches }) : reply
}

/**
 * The two replies' schemas for a task's tools less the excluded ones, made once per task and exclusion set: a schema
 * with every tool's parameters is costly to convert, and `jsonSchemaOf` keeps the conversion of each schema object.
 */
const replySchemas = new WeakMap<
  ReadonlyArray<Tool>,
  Map<string, ReturnType<typeof fusedJson> | ReturnType<typeof fusedJsonAgain>>
>()
const replySchema = <A extends boolean>(
  tools: ReadonlyArray<Tool>,
  allowed: ReadonlyArray<Tool>,
  again: A
): A extends true ? ReturnType<typeof fusedJsonAgain> : ReturnType<typeof fusedJson> => {
  let byKey = replySchemas.get(tools)
  if (!byKey) replySchemas.set(tools, (byKey = new Map()))
  const names = allowed.map((t) => t.name)
  const key = `${again}\u0000${names.join("\u0000")}`
  let schema = byKey.get(key)
  if (!schema) {
    schema = again ? fusedJsonAgain(names, allowed) : fusedJson(names, allowed)
    // a task excludes a handful of tool sets at most; bound it anyway
    if (byKey.size >= 64) byKey.clear()
    byKey.set(key, schema)
  }
  return schema as A extends true ? ReturnType<typeof fusedJsonAgain> : ReturnType<typeof fusedJson>
}

/**
 * A tool as a native function: its own parameters' JSON Schema, closed to undeclared names as `executor.args`
 * sends it; a description the shared prefix's tool list shows whole is not repeated (as `toolDoc` does).
 */
const specOf = (tool: Tool): ToolSpec => ({
  name: tool.name,
  description: toolDoc(tool, true).description,
  parameters: jsonSchemaOf(argsSchema(tool))
})

/** What the JSON request says before its instruction: the tools that failed at this step and the hint, each only when there is one. */
const stateLines = (view: FusedExecutorView): string =>
  (view.excluded.length > 0 ? `Tools that failed at this step: ${view.excluded.join(", ")}\n` : "") +
  (view.hint !== undefined ? `Hint: ${view.hint}\n` : "")

/** The checks of one proposed call (name, then arguments), as the three-call executor's guardrails make them. */
const checkCall = (
  ctx: AgentContext,
  view: ExecutorView,
  allowed: ReadonlyArray<Tool>,
  grounding: string,
  name: string,
  args: Record<string, unknown>,
  argsError?: string
): { problem?: Problem | undefined; tool?: Tool | undefined } => {
  const names = allowed.map((t) => t.name)
  const problem = checkToolName(
    name,
    names,
    view.tools.map((t) => t.name),
    ctx.guardrails
  )
  if (problem) return { problem }
  const tool = allowed.find((t) => t.name === name)
  if (!tool) return {}
  if (argsError !== undefined)
    return { tool, problem: { guardrail: "bad_args", error: `the arguments could not be read: ${argsError}` } }
  return { tool, problem: checkArgs(tool, args, ctx.guardrails, grounding) }
}

/**
 * The JSON request (`--tool-calling json`, a model without native tool calling, or a server that kept failing to
 * parse native calls): one `{thought, tool, arguments}` object, checked by the same guardrails through `askTurn`.
 * Every tool's parameters are in the task's shared prefix (`TaskView.fused`), so the request adds only its end.
 */
const actJson = (ctx: AgentContext, view: FusedExecutorView, allowed: ReadonlyArray<Tool>, grounding: string) =>
  Effect.gen(function* () {
    const names = allowed.map((t) => t.name)
    const specs = allowed.map(specOf)
    const { retry } = view
    // the tool whose arguments were rejected last: when the reflections run out on them, the tool is excluded as a failed call
    let argsOf: Tool | undefined
    const check = (v: { readonly tool: string; readonly arguments: Record<string, unknown> }) => {
      const { problem, tool } = checkCall(ctx, view, allowed, grounding, v.tool, v.arguments)
      argsOf = problem && tool ? tool : undefined
      return problem
    }
    const shared = {
      role: FUSED_ROLE,
      context: subtaskContext(view),
      data: { excluded: view.excluded, allowed: names, functions: specs },
      check,
      clipText: false
    } as const
    const ask = retry
      ? // after a failed call: its exchange with the response, then another call under the same thought
        askTurn(ctx, {
          ...shared,
          template: "executor-fused-json-again",
          follows: retry.turn,
          values: {},
          // never cut for the response's room: the tools that failed at this node (the schema's enum holds the others)
          fixed: { excluded: none(view.excluded) },
          fit: { response: (room: number) => ctx.budget.truncate(retry.response, room) },
          toolResult: {
            tool: retry.tool,
            args: clipStrings(retry.args, (t) => ctx.budget.agentText(t)),
            response: "response"
          },
          schema: replySchema(view.tools, allowed, true)
        }).pipe(Effect.map(({ value, turn }) => ({ value: { ...value, thought: retry.thought }, turn })))
      : askTurn(ctx, {
          ...shared,
          template: "executor-fused-json",
          // the tools' parameters are in the shared prefix's tool list; the functions go along for readers that are not a model
          values: { state: stateLines(view) },
          schema: replySchema(view.tools, allowed, false)
        })
    const reply = yield* Effect.result(ask)
    if (reply._tag === "Failure") {
      if (reply.failure instanceof MalformedOutput && argsOf)
        return { kind: "bad_args", thought: "", tool: argsOf, error: reply.failure.message } satisfies FusedAction
      return yield* Effect.fail(reply.failure)
    }
    const { thought, tool: name, arguments: raw } = reply.success.value
    const tool = allowed.find((t) => t.name === name)
    const clipped = ctx.budget.agentText(thought)
    if (!tool) return { kind: "unknown", thought: clipped, name } satisfies FusedAction
    const args = yield* usableArgs(ctx.guardrails, FUSED_ROLE, tool, raw)
    return { kind: "call", thought: clipped, tool, args, turn: reply.success.turn } satisfies FusedAction
  })

/** One rejected reply, traced when the call's outcome is known (as `generateObject` traces its own). */
interface Rejection extends Problem {
  readonly attempt: number
}

/**
 * The JSON fallback's replies left the tool's arguments invalid too: the step ends with the tool excluded, and the
 * server's parse errors before it were not recovered (as when ReAct's fallback fails).
 */
class ArgsStillInvalid extends Data.TaggedError("ArgsStillInvalid")<{ readonly action: FusedAction }> {}

/**
 * The thought, the tool and its arguments in one request, continued by the step's answer (the returned `turn`):
 * as one JSON object (`actJson`, `toolCalling` auto or json), or as a native tool call (`toolCalling: "native"`): the
 * task's tools not excluded at this depth are the request's native tools, and the reply's text is the thought. An unknown or excluded name, arguments that break
 * the tool's schema, or a reply without a call are reflected back (at most `maxReflections` times), as the
 * three-call executor's guardrails do; a server that cannot parse the model's call falls back to JSON.
 * `grounding` is the text argument values must come from, for the optional grounding guardrail.
 */
export const actFused = spanFn("Executor.actFused")(function* (
  ctx: AgentContext,
  view: FusedExecutorView,
  grounding: string
) {
  const allowed = view.tools.filter((t) => !view.excluded.includes(t.name))
  const { info } = yield* LanguageModel
  // native tool calling, as the issue of this executor asks and ReAct does; its tools field is rendered into the system
  // message, which then differs from every other request of the task, so a prefix-caching server computes more
  // (docs/performance.md): `--tool-calling json` keeps the whole task in one prefix
  // "auto" is JSON here (unlike ReAct's auto): native calls only when asked for
  if (view.toolCalling !== "native") return yield* actJson(ctx, view, allowed, grounding)
  yield* ctx.charge
  const names = allowed.map((t) => t.name)
  const { messages: start, turnWith } = yield* renderRequest(ctx, {
    role: FUSED_ROLE,
    template: "executor-fused",
    context: subtaskContext(view),
    values: { excluded: none(view.excluded), hint: view.hint ?? "none" },
    data: { excluded: view.excluded, allowed: names }
  })
  const specs = allowed.map(specOf)
  // traced when the outcome is known, in the order of the replies: each request's own guardrail events (the server's
  // parse errors, then a JSON fallback's), held back while it runs, then the rejection of its reply
  const traced: Array<{ readonly held: Effect.Effect<void> } | { readonly rejection: Rejection }> = []
  // after the JSON fallback made the step, its own guardrails have judged it: its reply is taken as it is
  let fellBack: FusedAction | undefined
  const fallback = (): Effect.Effect<
    GenerateResponse,
    GenerateError | BudgetExhausted | ArgsStillInvalid,
    LanguageModel
  > =>
    Effect.flatMap(actJson(ctx, view, allowed, grounding), (action) => {
      if (action.kind === "bad_args") return Effect.fail(new ArgsStillInvalid({ action }))
      fellBack = action
      return Effect.succeed({
        text: "",
        usage: { promptTokens: 0, completionTokens: 0 },
        model: info.model,
        durationMs: 0
      })
    })
  const attempts = Effect.gen(function* () {
    const maxReflections = ctx.guardrails.format ? ctx.guardrails.maxReflections : 0
    let messages = start
    let last: { text: string; error: string; tool?: Tool | undefined } = { text: "", error: "" }
    for (let attempt = 1; attempt <= maxReflections + 1; attempt++) {
      const own = holdBack("guardrail")
      traced.push({ held: own.release })
      const result = yield* Effect.result(own.run(callNative({ role: FUSED_ROLE, messages, tools: specs }, fallback)))
      if (result._tag === "Failure") {
        if (result.failure instanceof ArgsStillInvalid) return result.failure.action
        return yield* Effect.fail(result.failure)
      }
      if (fellBack) return fellBack
      const response = result.success
      const thought = ctx.budget.agentText(response.text.trim())
      const call = response.toolCalls?.[0]
      const checked = call
        ? checkCall(ctx, view, allowed, grounding, call.name, call.arguments, call.argumentsError)
        : { problem: { guardrail: "no_tool_call", error: "the reply called no tool; call one of the tools" } }
      if (call && !checked.problem) {
        const tool = checked.tool
        if (!tool) return { kind: "unknown", thought, name: call.name } satisfies FusedAction
        // the arguments as written: undeclared ones are dropped once the rejections before this reply are traced
        return {
          kind: "call",
          thought,
          tool,
          args: call.arguments,
          turn: turnWith(response.text)
        } satisfies FusedAction
      }
      const problem = checked.problem!
      traced.push({ rejection: { ...problem, attempt } })
      // the tool whose arguments were rejected last, as `actJson`'s check keeps it: a reply without a call (its
      // unreadable JSON) leaves it, so that reflections running out on it exclude it in both modes
      last = { text: response.text, error: problem.error, tool: call ? checked.tool : last.tool }
      const reflection = renderTemplate("executor-fused-reflection", { error: problem.error }).user
      // a call is answered by a tool message (chat templates expect one per call); a reply without one by a reflection
      const id = call?.id ?? "call_0"
      const said = capText(response.text, SIZE_CAPS.sentBackChars)
      messages = [
        ...start,
        call
          ? {
              role: "assistant",
              content: said,
              toolCalls: [{ id, name: call.name, arguments: call.arguments }]
            }
          : { role: "assistant", content: said },
        call
          ? { role: "tool", content: reflection, toolCallId: id, toolName: call.name, values: { error: problem.error } }
          : { role: "reflection", content: reflection, values: { error: problem.error } }
      ]
    }
    const malformed = new MalformedOutput({
      role: FUSED_ROLE,
      error: last.error,
      text: last.text.slice(0, 2000),
      attempts: maxReflections + 1
    })
    if (last.tool)
      return {
        kind: "bad_args",
        thought: ctx.budget.agentText(last.text.trim()),
        tool: last.tool,
        error: malformed.message
      } satisfies FusedAction
    return yield* malformed
  })
  const action = yield* attempts.pipe(
    Effect.onExit((exit) =>
      Effect.forEach(
        traced,
        (t) =>
          "held" in t
            ? t.held
            : emit("guardrail", {
                guardrail: t.rejection.guardrail,
                role: FUSED_ROLE,
                error: t.rejection.error,
                attempt: t.rejection.attempt,
                // a tool left with invalid arguments is excluded, not recovered
                recovered: Exit.isSuccess(exit) && exit.value.kind !== "bad_args"
              }),
        { discard: true }
      )
    )
  )
  // as `writeArgs`: the `extra_params` event follows the reply's earlier rejections, in the order the replies came
  // (the JSON fallback's call has been through `usableArgs` already)
  if (action.kind !== "call" || action === fellBack) return action
  return { ...action, args: yield* usableArgs(ctx.guardrails, FUSED_ROLE, action.tool, action.args) }
})
