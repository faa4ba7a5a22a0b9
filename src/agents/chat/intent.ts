// The intent step of a chat (MARCO): small talk and capability questions get a direct reply, tasks go to the pipeline.
import { z } from "zod"
import type { Tool } from "../../tools/tool.ts"
import { spanFn } from "../../trace/span-fn.ts"
import { type AgentContext, ask } from "../ask.ts"
import { toolList } from "../tool-docs.ts"

export const INTENTS = ["small_talk", "capabilities", "task", "out_of_domain", "jailbreak"] as const

export const Intent = z.object({
  intent: z.enum(INTENTS),
  reply: z.string().optional(),
  task: z.string().optional(),
  reason: z.string().optional()
})
export type Intent = z.infer<typeof Intent>

/** Classify the latest message; `history` is the session memory rendered within `room` tokens. */
export const classifyIntent = spanFn("Chat.intent")(function* (
  ctx: AgentContext,
  tools: ReadonlyArray<Tool>,
  history: (room: number) => string,
  message: string
) {
  return yield* ask(ctx, {
    role: "chat.intent",
    template: "chat-intent",
    values: { tools: toolList(tools), message: ctx.budget.agentText(message) },
    fit: { history },
    schema: Intent
  })
})
