// Answer agent and Verifier agent in one request (`--executor fused`): a step's answer from the tool response
// with the verdict on it, at the end of the subtask's shared prefix (the memory both agents see: the path before the step).
import * as Effect from "effect/Effect"
import { z } from "zod"
import type { Step } from "../memory/step.ts"
import { spanFn } from "../trace/span-fn.ts"
import { Answer } from "./answerer.ts"
import { type AgentContext, ask, type Turn } from "./ask.ts"
import { type SubtaskView, subtaskContext } from "./subtask-context.ts"
import { Verdict } from "./verifier.ts"

export const ANSWER_VERIFY_ROLE = "answerer.verify"

/** The step answer and the verdict on it, as one object: the Answer agent's field, then the Verifier agent's. */
export const AnswerVerdict = z.object({ ...Answer.shape, ...Verdict.shape })

/**
 * The step's answer and the verifier's verdict on it, from one tool response and the memory before the step:
 * continues the fused executor's exchange `after` (its request and reply, the call on it), the response after it.
 */
export const answerAndVerify = spanFn("Answerer.answerAndVerify")(function* (
  ctx: AgentContext,
  view: SubtaskView,
  step: Pick<Step, "tool" | "args" | "observation">,
  after: Turn
) {
  const { answer, status, hint } = yield* ask(ctx, {
    role: ANSWER_VERIFY_ROLE,
    template: "answer-verify",
    context: subtaskContext(view),
    follows: after,
    // as answerStep: the arguments' gist, and the response as data in a tool message, never inside instructions
    values: { tool: step.tool, args: ctx.budget.agentText(JSON.stringify(step.args)) },
    fit: { observation: (room) => ctx.budget.truncate(step.observation ?? "", room) },
    toolResult: { tool: step.tool, args: step.args, response: "observation" },
    schema: AnswerVerdict
  })
  yield* Effect.annotateCurrentSpan("verdict", status)
  return { answer, verdict: { status, hint } satisfies Verdict }
})
