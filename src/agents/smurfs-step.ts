// The pieces the Smurfs loop calls by name: one executor step, a tool call, a backtrack, soft failure.
import * as Effect from "effect/Effect"
import type { GenerateError, ModelNotFound, ModelUnreachable } from "../llm/errors.ts"
import type { ContextBudget } from "../memory/context-budget.ts"
import type { LocalMemory } from "../memory/local-memory.ts"
import { renderStep } from "../memory/render.ts"
import type { Step } from "../memory/step.ts"
import { guardToolCall } from "../tools/call.ts"
import { serverResponseText } from "../tools/environments/python-json.ts"
import { ledgerFields, type Tool, type ToolResult } from "../tools/tool.ts"
import { emit, type ToolCallData } from "../trace/events.ts"
import { spanFn } from "../trace/span-fn.ts"
import { answerStep } from "./answerer.ts"
import type { Turn } from "./ask.ts"
import type { BudgetExhausted } from "./errors.ts"
import { chooseAgain, chooseTool, type ExecutorView, type FailedCall, think, writeArgs } from "./executor.ts"
import type { PipelineContext } from "./pipeline-context.ts"
import { smurfsDefaults } from "./smurfs-options.ts"
import {
  answerStepReference,
  chooseReference,
  type ReferenceAgents,
  taskLog,
  thinkReference,
  writeArgsReference
} from "./smurfs-reference.ts"
import { type SubtaskView, subtaskLog } from "./subtask-context.ts"
import type { Verdict } from "./verifier.ts"

/** Failures that end the whole task; every other failure ends only the current step. */
export type Fatal = ModelUnreachable | ModelNotFound | BudgetExhausted

/** Each error class says whether it ends the task (`fatalToTask`). */
const isFatal = (e: GenerateError | BudgetExhausted): e is Fatal => e.fatalToTask

/** Run an agent call; a non-fatal failure is recorded as an `error` event and becomes `undefined`. */
export const soft = <A, R>(
  role: string,
  effect: Effect.Effect<A, GenerateError | BudgetExhausted, R>
): Effect.Effect<A | undefined, Fatal, R> =>
  effect.pipe(
    Effect.catch((e) =>
      isFatal(e) ? Effect.fail(e) : Effect.as(emit("error", { role, tag: e._tag, error: e.message }), undefined)
    )
  )

/**
 * Call a tool and trace it. Tools promise never to fail, but a hand-written one may still die or hang:
 * the guard turns a defect, a failure or a call past `timeoutMs` into a failed result.
 */
export const callTool = (
  budget: ContextBudget,
  tool: Tool,
  args: Record<string, unknown>,
  timeoutMs: number = smurfsDefaults.toolTimeoutMs,
  whole = false
) =>
  Effect.gen(function* () {
    const started = Date.now()
    // a tool that waits on a person or runs a whole agent declares its own, longer limit
    const limit = typeof tool.meta?.["timeoutMs"] === "number" ? tool.meta["timeoutMs"] : timeoutMs
    const result: ToolResult = yield* guardToolCall(tool.name, tool.call(args), { timeoutMs: limit })
    const content = whole ? result.content : budget.observation(result.content)
    const data: ToolCallData = {
      tool: tool.name,
      args,
      ok: result.ok,
      content,
      ...(result.error !== undefined ? { error: result.error } : {}),
      durationMs: Date.now() - started,
      truncated: result.truncated === true || content !== result.content,
      ...(result.cached ? { cached: true } : {}),
      ...(result.missed ? { missed: true } : {}),
      ...ledgerFields(result)
    }
    yield* emit("tool_call", { ...data })
    yield* Effect.annotateCurrentSpan({ ok: result.ok, durationMs: data.durationMs })
    // a response cut to the budget is its text only
    return content === result.content ? result : { ...result, content, structured: undefined }
  }).pipe(Effect.withSpan("Tool.call", { attributes: { tool: tool.name } }))

/**
 * What one executor step ended with: a new step on the path, a failed tool (`called` when the call
 * reached the tool, not when the name was unknown or no valid arguments came), or an agent error.
 */
export type StepOutcome =
  | {
      readonly kind: "step"
      readonly step: Step
      /** The exchange the verifier continues (the step answer's request and reply). */
      readonly turn?: Turn | undefined
      /**
       * A short tool response that is the step's answer as it is (no Answer agent call): the verifier continues the
       * arguments' exchange `turn` with the call's response after it.
       */
      readonly response?:
        | { readonly turn: Turn; readonly tool: string; readonly args: Record<string, unknown> }
        | undefined
      /** The verifier's verdict when it came with the step's answer (`--executor fused`); `undefined` inside when that request failed. */
      readonly verdict?: { readonly value: Verdict | undefined } | undefined
    }
  | {
      readonly kind: "failed"
      readonly tool: string
      readonly called: boolean
      /** The call that failed, for the next attempt at this node to continue (a call that reached its tool). */
      readonly retry?: FailedCall | undefined
    }
  | { readonly kind: "error"; readonly badChoice?: boolean | undefined }

/** The earlier subtasks a subtask's agents read (those it depends on, in a graph plan) with their answers. */
const earlierAnswers = (ctx: PipelineContext, index: number): string => subtaskLog(ctx.global.answersFor(index))

/** What every agent of a subtask sees first (their shared prefix), with `steps` as the memory. */
export const subtaskViewOf = (
  ctx: PipelineContext,
  index: number,
  subtask: string,
  steps: ReadonlyArray<Step>
): SubtaskView => {
  const earlier = earlierAnswers(ctx, index)
  return {
    query: ctx.task.query,
    subtask,
    index,
    tools: ctx.task.tools.tools,
    fused: ctx.options.executor === "fused",
    memory: (room) => ctx.budget.steps(steps, room),
    background: (room) => ctx.budget.truncate(earlier, room)
  }
}

/** The text a step's argument values must come from (query, subtask, earlier answers, hint, path), for the grounding guardrail. */
export const groundingOf = (
  ctx: PipelineContext,
  index: number,
  subtask: string,
  local: LocalMemory,
  hint: string | undefined
): string =>
  [ctx.task.query, subtask, earlierAnswers(ctx, index), hint ?? "", ...local.steps.map(renderStep)].join("\n")

/** A call that reached the tool and failed: kept in global memory, reported so that the tool gets excluded at this depth. */
export const failedCall = (
  ctx: PipelineContext,
  index: number,
  depth: number,
  step: Pick<Step, "thought" | "tool" | "args">,
  result: ToolResult,
  turn?: Turn
): StepOutcome => {
  ctx.global.record(
    index,
    depth,
    { ...step, observation: result.content, answer: `The call failed: ${result.error ?? result.content}` },
    true
  )
  return {
    kind: "failed",
    tool: step.tool,
    called: true,
    // the response as the next request reads it: the tool's text, else its error
    retry:
      turn === undefined
        ? undefined
        : {
            ...step,
            response: result.content.trim().length > 0 ? result.content : `Error: ${result.error ?? "the call failed"}`,
            turn
          }
  }
}

/**
 * One step at the current node: thought -> tool (among those not excluded here) -> arguments ->
 * call -> answer, one exchange (the answer's is returned for the verifier to continue). A failed call
 * is recorded in global memory and reported so the tool gets excluded. After a failed call at this node
 * (`retry`, with `rules.rethink` off) the thought stands: the tool choice continues the failed call's exchange.
 */
export const executeStep = spanFn("Smurfs.step")(function* (
  ctx: PipelineContext,
  index: number,
  subtask: string,
  local: LocalMemory,
  excluded: ReadonlyArray<string>,
  hint: string | undefined,
  retry?: FailedCall
) {
  const depth = local.depth
  // the path before this step: the executor's, the answerer's and the verifier's memory (one prefix)
  const before = [...local.steps]
  const shared = subtaskViewOf(ctx, index, subtask, before)
  const view: ExecutorView = { ...shared, hint, excluded }
  let thought: string
  // the thought's exchange: the tool choice continues it, and so does every choice after a failed call at this node
  let thoughtTurn: Turn
  let choice: { readonly tool: Tool | string; readonly turn: Turn } | undefined
  if (retry) {
    thought = retry.thought
    thoughtTurn = retry.turn
    choice = yield* soft("executor.choose", chooseAgain(ctx, view, retry))
  } else {
    const thinking = yield* soft("executor.thought", think(ctx, view))
    if (thinking === undefined) return { kind: "error" } satisfies StepOutcome
    thought = thinking.thought
    thoughtTurn = thinking.turn
    yield* emit("thought", { subtask: index, depth, thought })
    choice = yield* soft("executor.choose", chooseTool(ctx, view, thinking.turn))
  }
  if (choice === undefined) return { kind: "error" } satisfies StepOutcome
  const { tool } = choice
  if (typeof tool === "string") {
    yield* emit("error", { role: "executor.choose", tag: "UnknownTool", error: `no tool named "${tool}"` })
    return { kind: "failed", tool, called: false } satisfies StepOutcome
  }
  const grounding = groundingOf(ctx, index, subtask, local, hint)
  const written = yield* soft("executor.args", writeArgs(ctx, view, tool, grounding, choice.turn))
  if (written === undefined) return { kind: "failed", tool: tool.name, called: false } satisfies StepOutcome
  const { args } = written
  const result = yield* callTool(ctx.budget, tool, args, ctx.options.toolTimeoutMs)
  if (!result.ok) return failedCall(ctx, index, depth, { thought, tool: tool.name, args }, result, thoughtTurn)
  const observation = result.content
  const limit = ctx.options.rules.answerShortResponses
  // a response no longer than the answer the Answer agent would write is the answer: its call would only repeat it
  const short = limit !== undefined && observation.trim().length > 0 && observation.length <= limit
  const answered =
    ctx.options.answerer && !short
      ? yield* soft("answerer.step", answerStep(ctx, shared, { tool: tool.name, args, observation }, written.turn))
      : undefined
  const answer = answered?.answer ?? observation
  yield* emit("answer", { subtask: index, depth, answer })
  return {
    kind: "step",
    step: { thought, tool: tool.name, args, observation, answer },
    turn: answered?.turn,
    response: short ? { turn: written.turn, tool: tool.name, args } : undefined
  } satisfies StepOutcome
})

/**
 * One step with the authors' agents (`--profile reference`): their thought, tool choice (an unknown ID
 * is a bad choice; `forced` is the first remaining tool taken after four of them), arguments (none
 * asked for an API without parameters), the call with its response as the full `{"error", "response"}`
 * JSON (a known server error is a response too), and their step answer.
 */
export const executeReferenceStep = spanFn("Smurfs.referenceStep")(function* (
  ctx: PipelineContext,
  agents: ReferenceAgents,
  index: number,
  subtask: string,
  local: LocalMemory,
  excluded: ReadonlyArray<string>,
  hint: string | undefined,
  forced: Tool | undefined
) {
  const depth = local.depth
  const tools = ctx.task.tools.tools
  const view = {
    tools,
    excluded,
    forced,
    subtask,
    question: taskLog(ctx.global.answersFor(index), subtask),
    path: local.steps,
    hint
  }
  const thought = yield* soft("executor.thought", thinkReference(ctx, agents, view))
  if (thought === undefined) return { kind: "error" } satisfies StepOutcome
  yield* emit("thought", { subtask: index, depth, thought })
  const tool = forced ?? (yield* soft("executor.choose", chooseReference(ctx, agents, view, thought)))
  if (tool === undefined) {
    yield* emit("error", { role: "executor.choose", tag: "BadChoice", error: "the reply named no tool of the list" })
    return { kind: "error", badChoice: true } satisfies StepOutcome
  }
  const args = yield* soft("executor.args", writeArgsReference(ctx, agents, view, thought, tool))
  if (args === undefined) return { kind: "failed", tool: tool.name, called: false } satisfies StepOutcome
  const result = yield* callTool(ctx.budget, tool, args, ctx.options.toolTimeoutMs, ctx.options.rules.wholeObservations)
  const error = result.ok ? "" : (result.error ?? "the tool failed")
  if (!result.ok && !ctx.options.rules.errorObservations.includes(error)) {
    ctx.global.record(
      index,
      depth,
      { thought, tool: tool.name, args, observation: result.content, answer: `The call failed: ${error}` },
      true
    )
    return { kind: "failed", tool: tool.name, called: true } satisfies StepOutcome
  }
  // their client's json.dumps(response): a structured response nested, non-ASCII escaped
  const observation = serverResponseText(error, result)
  const answered = ctx.options.answerer
    ? yield* soft("answerer.step", answerStepReference(ctx, agents, subtask, local.steps, thought, observation))
    : undefined
  const answer = answered ?? observation
  yield* emit("answer", { subtask: index, depth, answer })
  return { kind: "step", step: { thought, tool: tool.name, args, observation, answer } } satisfies StepOutcome
})

/** Backtrack one level: pop the last step and exclude its tool at the level above; deeper exclusions are forgotten. */
export const backtrack = (ctx: PipelineContext, index: number, local: LocalMemory, excluded: Array<Set<string>>) =>
  Effect.gen(function* () {
    const from = local.depth
    const popped = local.pop()!
    excluded.length = from
    const above = excluded[from - 1]!
    above.add(popped.tool)
    ctx.global.markBacktracked(index, from - 1)
    yield* emit("backtrack", {
      subtask: index,
      fromDepth: from,
      toDepth: from - 1,
      tool: popped.tool,
      excluded: [...above]
    })
  })
