// One step of the Smurfs loop with the fused executor (`--executor fused`): one request for the thought, the
// tool and its arguments, the call, then one request for the step answer and the verdict on it.
import type { LocalMemory } from "../memory/local-memory.ts"
import { emit } from "../trace/events.ts"
import { spanFn } from "../trace/span-fn.ts"
import { ANSWER_VERIFY_ROLE, answerAndVerify } from "./answer-verify.ts"
import { answerStep } from "./answerer.ts"
import type { FailedCall } from "./executor.ts"
import { actFused, FUSED_ROLE } from "./executor-fused.ts"
import type { PipelineContext } from "./pipeline-context.ts"
import { callTool, failedCall, groundingOf, type StepOutcome, soft, subtaskViewOf } from "./smurfs-step.ts"

/**
 * One step at the current node, as `executeStep` with fewer requests: each agent keeps its memory slice (the
 * path before the step, in the subtask's shared prefix) and its guardrails. With the Answer and Verifier agents
 * both on, the step's answer comes with its verdict; with one of them off, that one is skipped as usual.
 */
export const executeFusedStep = spanFn("Smurfs.fusedStep")(function* (
  ctx: PipelineContext,
  index: number,
  subtask: string,
  local: LocalMemory,
  excluded: ReadonlyArray<string>,
  hint: string | undefined,
  retry?: FailedCall
) {
  const depth = local.depth
  const shared = subtaskViewOf(ctx, index, subtask, [...local.steps])
  const view = { ...shared, hint, excluded, toolCalling: ctx.options.toolCalling, retry }
  const action = yield* soft(FUSED_ROLE, actFused(ctx, view, groundingOf(ctx, index, subtask, local, hint)))
  if (action === undefined) return { kind: "error" } satisfies StepOutcome
  // a thought that stands after a failed call was traced with that call
  if (action.thought && action.thought !== retry?.thought)
    yield* emit("thought", { subtask: index, depth, thought: action.thought })
  if (action.kind === "unknown") {
    yield* emit("error", { role: FUSED_ROLE, tag: "UnknownTool", error: `no tool named "${action.name}"` })
    return { kind: "failed", tool: action.name, called: false } satisfies StepOutcome
  }
  if (action.kind === "bad_args") {
    // as the three-call executor's failed arguments request is traced: the tool is excluded without a call
    yield* emit("error", { role: FUSED_ROLE, tag: "MalformedOutput", error: action.error })
    return { kind: "failed", tool: action.tool.name, called: false } satisfies StepOutcome
  }
  const { thought, tool, args } = action
  const result = yield* callTool(ctx.budget, tool, args, ctx.options.toolTimeoutMs)
  // the next attempt continues this node's first exchange (the one its thought was written in)
  if (!result.ok)
    return failedCall(ctx, index, depth, { thought, tool: tool.name, args }, result, retry?.turn ?? action.turn)
  const observation = result.content
  const call = { tool: tool.name, args, observation }
  const { answerer, verifier } = ctx.options
  const limit = ctx.options.rules.answerShortResponses
  if (answerer && limit !== undefined && observation.trim().length > 0 && observation.length <= limit) {
    // as the three-call step: a response no longer than the answer would be is the answer, and the verifier alone
    // continues the call's exchange with it
    yield* emit("answer", { subtask: index, depth, answer: observation })
    return {
      kind: "step",
      step: { thought, tool: tool.name, args, observation, answer: observation },
      response: { turn: action.turn, tool: tool.name, args }
    } satisfies StepOutcome
  }
  if (answerer && verifier) {
    const both = yield* soft(ANSWER_VERIFY_ROLE, answerAndVerify(ctx, shared, call, action.turn))
    // the request failed: the raw response is the answer, and the verdict is a failed verifier's (no hint)
    const answer = both?.answer ?? observation
    yield* emit("answer", { subtask: index, depth, answer })
    return {
      kind: "step",
      step: { thought, tool: tool.name, args, observation, answer },
      verdict: { value: both?.verdict }
    } satisfies StepOutcome
  }
  const answered = answerer ? yield* soft("answerer.step", answerStep(ctx, shared, call, action.turn)) : undefined
  const answer = answered?.answer ?? observation
  yield* emit("answer", { subtask: index, depth, answer })
  return {
    kind: "step",
    step: { thought, tool: tool.name, args, observation, answer },
    turn: answered?.turn
  } satisfies StepOutcome
})
