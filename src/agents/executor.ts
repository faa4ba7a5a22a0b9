// Executor agent, in the paper's three calls: a thought, a tool choice, then the tool's arguments.
import * as Effect from "effect/Effect"
import { z } from "zod"
import { parseToolArgs, type Tool } from "../tools/tool.ts"
import { emit } from "../trace/events.ts"
import { type AgentContext, ask } from "./ask.ts"
import { argsSchema, checkArgs, checkToolName, choiceSchema, declaredArgs } from "./guardrails.ts"
import { type SubtaskView, subtaskContext } from "./subtask-context.ts"
import { toolDoc } from "./tool-docs.ts"

export const Thought = z.object({ thought: z.string() })

/**
 * What the executor sees (the paper's memory table): the subtask, its local memory, the verifier's hint.
 * Its three requests share one prefix (`subtaskContext`) and differ only at the end.
 */
export interface ExecutorView extends SubtaskView {
  readonly hint?: string | undefined
  /** Tools that failed at the current depth. */
  readonly excluded: ReadonlyArray<string>
}

const none = (items: ReadonlyArray<string>) => (items.length > 0 ? items.join(", ") : "none")

export const think = Effect.fn("Executor.think")(function* (ctx: AgentContext, view: ExecutorView) {
  const { thought } = yield* ask(ctx, {
    role: "executor.thought",
    template: "executor-thought",
    context: subtaskContext(view),
    values: { excluded: none(view.excluded), hint: view.hint ?? "none" },
    data: { excluded: view.excluded },
    schema: Thought
  })
  return thought
})

export const chooseTool = Effect.fn("Executor.chooseTool")(function* (
  ctx: AgentContext,
  view: ExecutorView,
  thought: string
) {
  const all = view.tools.map((t) => t.name)
  const allowed = all.filter((n) => !view.excluded.includes(n))
  const { tool } = yield* ask(ctx, {
    role: "executor.choose",
    template: "executor-choose",
    context: subtaskContext(view),
    // the names are in the shared prefix's tool list: repeated only when some are excluded (the schema's enum holds them anyway)
    values: { thought, allowed: view.excluded.length === 0 ? "any tool of the list" : allowed.join(", ") },
    data: { allowed },
    schema: choiceSchema(allowed),
    check: (v) => checkToolName(v.tool, allowed, all, ctx.guardrails)
  })
  // With the name guardrail off, an unknown name reaches here; the caller treats it as a failed call.
  return view.tools.find((t) => t.name === tool) ?? tool
})

/** Arguments for `tool`, validated by its schema; undeclared parameters are dropped with a traced event. */
/** `grounding` is the text argument values must come from (query, subtask, memory), for the optional grounding guardrail. */
export const writeArgs = Effect.fn("Executor.writeArgs")(function* (
  ctx: AgentContext,
  view: ExecutorView,
  thought: string,
  tool: Tool,
  grounding: string
) {
  const raw = yield* ask(ctx, {
    role: "executor.args",
    template: "executor-args",
    context: subtaskContext(view),
    values: { ...toolDoc(tool, true), thought },
    schema: argsSchema(tool),
    check: (v) => checkArgs(tool, v, ctx.guardrails, grounding),
    clipText: false
  })
  if (!ctx.guardrails.extraParams) return raw
  const { args, dropped } = declaredArgs(tool, raw)
  if (dropped.length > 0)
    yield* emit("guardrail", {
      guardrail: "extra_params",
      role: "executor.args",
      error: `dropped undeclared parameter(s) ${dropped.join(", ")} of the tool "${tool.name}"`,
      attempt: 1,
      recovered: true
    })
  // Parse to apply the schema's coercions and defaults; on a rule violation that guardrails let through, keep the raw values.
  const parsed = parseToolArgs(tool, args)
  return parsed.success ? (parsed.data as Record<string, unknown>) : args
})
