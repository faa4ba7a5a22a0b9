// A chat session around the Smurfs pipeline: session memory of earlier turns, an intent step that
// routes each message, and the pipeline for tasks; every turn answers, whatever fails.
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { LanguageModel } from "../../llm/language-model.ts"
import { ContextBudget } from "../../memory/context-budget.ts"
import { renderTemplate } from "../../text/prompt-template.ts"
import type { ToolLibrary } from "../../tools/tool.ts"
import type { RunEvent } from "../../trace/events.ts"
import { recording, type Trajectory } from "../../trace/trajectory.ts"
import type { AgentContext } from "../ask.ts"
import { smurfs } from "../smurfs.ts"
import { guardrailDefaults, type SmurfsOptions } from "../smurfs-options.ts"
import { classifyIntent, type Intent } from "./intent.ts"

export type IntentName = Intent["intent"] | "unclassified"

/** One turn of the transcript: what the person said, how it was routed, the reply, and the pipeline's trajectory for tasks. */
export interface ChatTurn {
  readonly user: string
  readonly intent: IntentName
  readonly reply: string
  /** The self-contained task the intent step made of the message (tasks only). */
  readonly task?: string | undefined
  /** Why a request was refused. */
  readonly reason?: string | undefined
  readonly trajectory?: Trajectory | undefined
  /** The intent step's own events (its model calls). */
  readonly intentEvents: ReadonlyArray<RunEvent>
}

export interface ChatOptions {
  readonly tools: ToolLibrary
  /** Options of the pipeline that solves tasks (onEvent shows its steps, askUser asks the person). */
  readonly pipeline?: SmurfsOptions | undefined
  /** Id prefix of the turns' tasks. */
  readonly sessionId?: string | undefined
  /** Rules every task is solved under (a customer-service policy): the pipeline's query holds them before the request. */
  readonly instructions?: string | undefined
}

/** The direct reply to "what can you do?": the tools, one line each. */
export const capabilitiesReply = (tools: ToolLibrary): string =>
  [
    `I answer questions with ${tools.tools.length} tools:`,
    ...tools.tools.map((t) => `- ${t.name}: ${t.description.split("\n")[0]!.trim()}`)
  ].join("\n")

/** Session memory as the intent step reads it: earlier turns, the newest kept when the budget is short. */
const historyText = (turns: ReadonlyArray<ChatTurn>): string =>
  turns.length === 0 ? "(none)" : turns.map((t) => `User: ${t.user}\nAssistant: ${t.reply}`).join("\n")

export const makeChatSession = (options: ChatOptions) => {
  const turns: Array<ChatTurn> = []
  const sessionId = options.sessionId ?? "chat"

  /** Route one message and answer it. Never fails: a failed intent step sends the message to the pipeline as it is. */
  const turn = (message: string) =>
    Effect.gen(function* () {
      const model = yield* LanguageModel
      const budget = new ContextBudget({ ...options.pipeline?.budget, contextTokens: model.info.contextTokens })
      const ctx: AgentContext = {
        budget,
        guardrails: { ...guardrailDefaults, ...options.pipeline?.guardrails },
        charge: Effect.void
      }
      const earlier = historyText(turns)
      const n = turns.length + 1
      const routed = yield* recording(
        `${sessionId}-${n}-intent`,
        Effect.result(
          classifyIntent(ctx, options.tools.tools, (room) => budget.truncate(earlier, room, "end"), message)
        ),
        options.pipeline?.onEvent
      )
      const intent: Intent | undefined = Result.isSuccess(routed.value) ? routed.value.success : undefined
      const base = { user: message, intentEvents: routed.events }
      let result: ChatTurn
      switch (intent?.intent) {
        case "small_talk":
          result = {
            ...base,
            intent: "small_talk",
            reply: intent.reply?.trim() || "Hello! Ask me what I can do, or ask a question."
          }
          break
        case "capabilities":
          result = { ...base, intent: "capabilities", reply: capabilitiesReply(options.tools) }
          break
        case "out_of_domain":
        case "jailbreak": {
          const reason =
            intent.reason?.trim() ||
            (intent.intent === "jailbreak"
              ? "that asks me to set aside my instructions"
              : "none of my tools can help with that")
          result = {
            ...base,
            intent: intent.intent,
            reason,
            reply: `I can't help with that: ${reason}.`.replace(/\.\.$/, ".")
          }
          break
        }
        default: {
          // a task, or an intent step that failed: the pipeline answers (AMCP: always answer)
          const task = intent?.task?.trim() || message
          const trajectory = yield* smurfs(options.pipeline)({
            id: `${sessionId}-${n}`,
            query:
              options.instructions === undefined
                ? task
                : renderTemplate("chat-instructions", { instructions: options.instructions, task }).user,
            tools: options.tools
          })
          const reply =
            trajectory.finishType === "give_answer"
              ? trajectory.finalAnswer
              : `I could not find an answer${trajectory.error ? `: ${trajectory.error}` : "."}`
          result = { ...base, intent: intent ? "task" : "unclassified", task, reply, trajectory }
        }
      }
      turns.push(result)
      return result
    })

  return { turn, turns: turns as ReadonlyArray<ChatTurn> }
}
