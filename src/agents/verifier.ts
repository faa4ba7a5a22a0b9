// Verifier agent: accepts a subtask's answer or sends a hint back to the executor (sees the subtask's prefix + the answer).
import * as Effect from "effect/Effect"
import { z } from "zod"
import { spanFn } from "../trace/span-fn.ts"
import { type AgentContext, ask, type Turn } from "./ask.ts"
import { type SubtaskView, subtaskContext } from "./subtask-context.ts"

/**
 * What the verifier writes: `solved`, or `pending` with the hint for the executor's next step (what the answer lacks
 * and how to get it). No reason is asked for: an accepted answer's reason was read by nobody, and a pending one's
 * hint says it (on the modelled server it was 15 reply tokens of every verdict, docs/performance.md).
 */
export const Verdict = z.object({
  status: z.enum(["solved", "pending"]),
  hint: z.string().nullish()
})
/** A verdict as the loop reads it; the authors' verifier (`--profile reference`) also says why (their `Speak`). */
export type Verdict = z.infer<typeof Verdict> & { readonly reason?: string | undefined }

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
