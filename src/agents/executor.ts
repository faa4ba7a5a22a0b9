// Executor agent, in the paper's three calls: a thought, a tool choice, then the tool's arguments.
import { z } from "zod"
import type { Tool } from "../tools/tool.ts"
import { spanFn } from "../trace/span-fn.ts"
import { type AgentContext, askTurn, clipStrings, type Turn } from "./ask.ts"
import { argsSchema, checkArgs, checkToolName, choiceSchema, usableArgs } from "./guardrails.ts"
import { type SubtaskView, subtaskContext } from "./subtask-context.ts"
import { toolDoc } from "./tool-docs.ts"

export const Thought = z.object({ thought: z.string() })

/**
 * What the executor sees (the paper's memory table): the subtask, its local memory, the verifier's hint.
 * Its three requests are one exchange: the thought's request starts with the subtask's prefix
 * (`subtaskContext`), the choice's and the arguments' continue the one before with its reply, so a
 * server computes only each one's end.
 */
export interface ExecutorView extends SubtaskView {
  readonly hint?: string | undefined
  /** Tools that failed at the current depth. */
  readonly excluded: ReadonlyArray<string>
}

/** A list for a prompt: its items, or "none". */
export const none = (items: ReadonlyArray<string>) => (items.length > 0 ? items.join(", ") : "none")

/** The thought, and the exchange the tool choice continues. */
export const think = spanFn("Executor.think")(function* (ctx: AgentContext, view: ExecutorView) {
  const { value, turn } = yield* askTurn(ctx, {
    role: "executor.thought",
    template: "executor-thought",
    context: subtaskContext(view),
    values: { excluded: none(view.excluded), hint: view.hint ?? "none" },
    data: { excluded: view.excluded },
    schema: Thought
  })
  return { thought: value.thought, turn }
})

/**
 * A call that reached its tool and failed, for the next attempt at the same node (`LoopRules.rethink` off): its
 * thought stands, and the next request continues the exchange the thought was written in (the thought's, or the fused
 * executor's first request at this node), with the failed call and its response after it. Every retry at a node
 * continues that same exchange, so a run of failures never piles up in the prompt.
 */
export interface FailedCall {
  readonly thought: string
  readonly tool: string
  readonly args: Record<string, unknown>
  /** The tool's response (its error), as the next request reads it. */
  readonly response: string
  /** The exchange the thought was written in (the thought's request and reply, or the fused executor's). */
  readonly turn: Turn
}

/**
 * After `failed`: another tool for the same thought, continuing the thought's exchange with the failed call and its
 * response, so that the executor reads what went wrong and a server computes only the call, the response and the end.
 */
export const chooseAgain = spanFn("Executor.chooseAgain")(function* (
  ctx: AgentContext,
  view: ExecutorView,
  failed: FailedCall
) {
  const all = view.tools.map((t) => t.name)
  const allowed = all.filter((n) => !view.excluded.includes(n))
  const { value, turn } = yield* askTurn(ctx, {
    role: "executor.choose",
    template: "executor-choose-again",
    context: subtaskContext(view),
    follows: failed.turn,
    values: {},
    // never cut for the response's room: the tools that failed at this node (the schema's enum holds the others)
    fixed: { excluded: none(view.excluded) },
    data: { allowed, excluded: view.excluded },
    fit: { response: (room) => ctx.budget.truncate(failed.response, room) },
    // the failed response is data: the tool message after the call, as a step's answer reads a response
    // the call as the model wrote it, each string cut as an agent's text is (a huge argument failed once already)
    toolResult: {
      tool: failed.tool,
      args: clipStrings(failed.args, (t) => ctx.budget.agentText(t)),
      response: "response"
    },
    schema: choiceSchema(allowed),
    check: (v) => checkToolName(v.tool, allowed, all, ctx.guardrails)
  })
  return { tool: view.tools.find((t) => t.name === value.tool) ?? value.tool, turn }
})

/** The tool for the thought of `after` (the thought's exchange), and the exchange the arguments continue. */
export const chooseTool = spanFn("Executor.chooseTool")(function* (ctx: AgentContext, view: ExecutorView, after: Turn) {
  const all = view.tools.map((t) => t.name)
  const allowed = all.filter((n) => !view.excluded.includes(n))
  const { value, turn } = yield* askTurn(ctx, {
    role: "executor.choose",
    template: "executor-choose",
    context: subtaskContext(view),
    follows: after,
    // the names are in the shared prefix's tool list: repeated only when some are excluded (the schema's enum holds them anyway)
    values: { allowed: view.excluded.length === 0 ? "any listed" : allowed.join(", ") },
    data: { allowed },
    schema: choiceSchema(allowed),
    check: (v) => checkToolName(v.tool, allowed, all, ctx.guardrails)
  })
  // With the name guardrail off, an unknown name reaches here; the caller treats it as a failed call.
  return { tool: view.tools.find((t) => t.name === value.tool) ?? value.tool, turn }
})

/**
 * Arguments for `tool` (chosen in the exchange `after`), validated by its schema; undeclared parameters are
 * dropped with a traced event. `grounding` is the text argument values must come from (query, subtask,
 * memory), for the optional grounding guardrail. Returns the exchange the step's answer continues too.
 */
export const writeArgs = spanFn("Executor.writeArgs")(function* (
  ctx: AgentContext,
  view: ExecutorView,
  tool: Tool,
  grounding: string,
  after: Turn
) {
  const { value: raw, turn } = yield* askTurn(ctx, {
    role: "executor.args",
    template: "executor-args",
    context: subtaskContext(view),
    follows: after,
    values: toolDoc(tool, true),
    schema: argsSchema(tool),
    check: (v) => checkArgs(tool, v, ctx.guardrails, grounding),
    clipText: false
  })
  return { args: yield* usableArgs(ctx.guardrails, "executor.args", tool, raw), turn }
})
