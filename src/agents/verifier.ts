// Verifier agent: accepts a subtask's answer or sends a hint back to the executor (sees subtask + answer).
import * as Effect from "effect/Effect"
import { z } from "zod"
import { type AgentContext, ask } from "./ask.ts"

export const Verdict = z.object({
  status: z.enum(["solved", "pending"]),
  reason: z.string(),
  hint: z.string().nullish()
})
export type Verdict = z.infer<typeof Verdict>

export const verify = Effect.fn("Verifier.verify")(function* (ctx: AgentContext, subtask: string, answer: string) {
  return yield* ask(ctx, {
    role: "verifier",
    template: "verifier",
    values: { subtask },
    fit: { answer: (room) => ctx.budget.truncate(answer, room) },
    schema: Verdict
  }).pipe(Effect.tap((verdict) => Effect.annotateCurrentSpan("verdict", verdict.status)))
})
