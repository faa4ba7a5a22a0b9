// Verifier agent: accepts a subtask's answer or sends a hint back to the executor (sees the subtask's prefix + the answer).
import * as Effect from "effect/Effect"
import { z } from "zod"
import { spanFn } from "../trace/span-fn.ts"
import { type AgentContext, ask, type Turn } from "./ask.ts"
import { type SubtaskView, subtaskContext } from "./subtask-context.ts"

export const Verdict = z.object({
  status: z.enum(["solved", "pending"]),
  reason: z.string(),
  hint: z.string().nullish()
})
export type Verdict = z.infer<typeof Verdict>

/** A tool's short response that is the step's answer as it is, after the arguments' exchange `turn`. */
export interface ResponseAsAnswer {
  readonly turn: Turn
  readonly tool: string
  readonly args: Record<string, unknown>
}

/**
 * The verdict on a step's answer, in the subtask's prefix (the memory before the step, as the answerer saw it):
 * continuing the Answer agent's exchange `after` when there is one (its reply is the answer); else continuing the
 * arguments' exchange with the tool's response when that response is the answer (`response`: too short to need the
 * Answer agent); else with the answer written out (the Answer agent off).
 */
export const verify = spanFn("Verifier.verify")(function* (
  ctx: AgentContext,
  view: SubtaskView,
  answer: string,
  after?: Turn,
  response?: ResponseAsAnswer
) {
  return yield* ask(ctx, {
    role: "verifier",
    ...(after
      ? { template: "verifier-after-answer", follows: after, values: {}, data: { answer } }
      : response
        ? {
            template: "verifier-after-response",
            follows: response.turn,
            values: {},
            data: { answer },
            fit: { response: (room: number) => ctx.budget.truncate(answer, room) },
            toolResult: { tool: response.tool, args: response.args, response: "response" }
          }
        : { template: "verifier", values: {}, fit: { answer: (room: number) => ctx.budget.truncate(answer, room) } }),
    context: subtaskContext(view),
    schema: Verdict
  }).pipe(Effect.tap((verdict) => Effect.annotateCurrentSpan("verdict", verdict.status)))
})
