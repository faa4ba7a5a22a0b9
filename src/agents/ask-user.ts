// Human in the loop: the `ask_user` pseudo-tool, an interrupt that the caller of the pipeline answers.
import * as Effect from "effect/Effect"
import { z } from "zod"
import { loadTemplate } from "../text/prompt-template.ts"
import type { Tool, ToolResult } from "../tools/tool.ts"
import { emit } from "../trace/events.ts"

export const ASK_USER = "ask_user"

/** What the executor wants to know; `subtask` says what it is working on, for the person's context. */
export interface UserQuestion {
  readonly question: string
}

/**
 * Answers a question of the executor: the person's reply, or `undefined` when nobody can answer
 * (the call then fails as a tool, and the executor tries another way). May be async: a web app can
 * keep the promise open until its user replies.
 */
export type AskUser = (question: UserQuestion) => string | undefined | Promise<string | undefined>

type Reply = { readonly reply?: string; readonly error?: string }

/** A person may take long to reply: the call waits up to a day instead of the tool timeout. */
export const ASK_USER_TIMEOUT_MS = 86_400_000

/** The pseudo-tool: its call hands the question to `askUser` and returns the reply as the tool's result. */
export const askUserTool = (askUser: AskUser): Tool => ({
  name: ASK_USER,
  description: loadTemplate("ask-user-tool").user,
  meta: { timeoutMs: ASK_USER_TIMEOUT_MS },
  parameters: z.object({
    question: z.string().min(1).describe("the question for the person, one sentence")
  }) as unknown as z.ZodObject<z.ZodRawShape>,
  call: (args) =>
    Effect.gen(function* () {
      const question = String(args["question"] ?? "").trim()
      const reply = yield* Effect.tryPromise({
        try: async () => await askUser({ question }),
        catch: (e) => (e instanceof Error ? e : new Error(String(e)))
      }).pipe(
        Effect.map(
          (r): Reply =>
            r === undefined || r.trim().length === 0 ? { error: "the person gave no answer" } : { reply: r.trim() }
        ),
        Effect.catch((e) => Effect.succeed<Reply>({ error: e.message }))
      )
      yield* emit("ask_user", { question, ...reply })
      return (
        reply.reply !== undefined
          ? { ok: true, content: reply.reply }
          : { ok: false, content: "", error: `${reply.error}; continue without asking` }
      ) satisfies ToolResult
    })
})
