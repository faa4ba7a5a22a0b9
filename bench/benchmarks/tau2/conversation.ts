// One τ² conversation, half-duplex as τ²'s Orchestrator runs it: the agent opens with its greeting, then user and agent
// take turns; the agent's tool calls go to the domain's tools on this conversation's own database. It ends when the user
// says a stop token, at τ²'s step limit (200) or after 10 failed tool calls. Every message, tool call and database
// write is kept. Agents see the conversation through `ConversationTurn`, whatever their orchestration.
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { LanguageModel, LanguageModelShape } from "../../../src/llm/language-model.ts"
import type { Tool, ToolResult } from "../../../src/tools/tool.ts"
import { type DbSnapshot, diffSnapshots, snapshotDb } from "./db-writes.ts"
import type { Termination, TranscriptMessage, TranscriptToolCall } from "./transcript.ts"
import { isStop, userReply } from "./user-simulator.ts"

/** τ²'s limits (tau2/config.py): steps of a simulation and failed tool calls. */
export const CONVERSATION_LIMITS = { maxSteps: 200, maxErrors: 10 } as const

/** τ²'s first agent message (DEFAULT_FIRST_AGENT_MESSAGE): the agent model does not write it. */
export const FIRST_AGENT_MESSAGE = "Hi! How can I help you today?"

/** What an agent sees of a conversation while it answers the user. */
export interface ConversationTurn {
  /** Call tools as one message of the agent (τ²: one assistant message with its tool calls, then their results). */
  readonly callTools: (
    calls: ReadonlyArray<Omit<TranscriptToolCall, "id"> & { id?: string | undefined }>
  ) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly name: string; readonly result: ToolResult }>>
  /** Ask the user something in the middle of a task: the question is the agent's message, the user's reply the answer. */
  readonly ask: (question: string) => Effect.Effect<string | undefined>
  /** Whether the conversation has ended (a limit, the user stopped): the agent should give up its turn. */
  readonly ended: () => boolean
}

/** An agent in a conversation: built once per conversation, then asked for its reply to each user message. */
export interface ConversationAgent {
  /**
   * True when the agent gives up its turn itself once `turn.ended()` (τ²'s agent: between two model calls); otherwise
   * (a Smurfs pipeline) the conversation interrupts it where it is.
   */
  readonly yieldsAtEnd?: boolean | undefined
  /**
   * The reply to the user's message (its text goes to the user); the agent may call tools and ask questions first.
   * `error`: the agent could not answer (its model failed), which ends the conversation as agent_error.
   */
  readonly respond: (
    userMessage: string,
    turn: ConversationTurn
  ) => Effect.Effect<{ readonly text: string } | { readonly error: string }, never, LanguageModel>
}

export interface ConversationOptions<Db> {
  /** The conversation's own database (never shared with another conversation). */
  readonly db: Db
  /** The domain's tools on `db`. */
  readonly tools: ReadonlyArray<Tool>
  readonly agent: ConversationAgent
  /** The user simulator's model (not the model under test) and its system prompt. */
  readonly userModel: LanguageModelShape
  readonly userSystem: string
  readonly limits?: { readonly maxSteps?: number | undefined; readonly maxErrors?: number | undefined } | undefined
}

export interface ConversationResult {
  readonly messages: ReadonlyArray<TranscriptMessage>
  readonly termination: Termination
  readonly terminationDetail?: string | undefined
  readonly steps: number
  readonly toolErrors: number
  readonly userTotals: { modelCalls: number; promptTokens: number; completionTokens: number }
}

/** The text an agent sees of a failed call (τ²'s environment answers "Error: <exception>"). */
export const toolResultText = (result: ToolResult): string =>
  result.ok ? result.content : result.content !== "" ? result.content : `Error: ${result.error ?? "the tool failed"}`

/** Run one conversation to its end; never fails (a model that fails ends it as agent_error or user_error, said in the detail). */
export const runConversation = <Db>(
  options: ConversationOptions<Db>
): Effect.Effect<ConversationResult, never, LanguageModel> =>
  Effect.gen(function* () {
    const maxSteps = options.limits?.maxSteps ?? CONVERSATION_LIMITS.maxSteps
    const maxErrors = options.limits?.maxErrors ?? CONVERSATION_LIMITS.maxErrors
    const byName = new Map(options.tools.map((t) => [t.name, t]))
    const messages: Array<TranscriptMessage> = [{ role: "assistant", content: FIRST_AGENT_MESSAGE, turn: 0 }]
    const userTotals = { modelCalls: 0, promptTokens: 0, completionTokens: 0 }
    let steps = 0
    let toolErrors = 0
    let calls = 0
    let termination: Termination | undefined
    let detail: string | undefined
    let snapshot: DbSnapshot = snapshotDb(options.db)
    const ended = yield* Deferred.make<void>()
    const end = (why: Termination, text?: string) => {
      if (termination !== undefined) return
      termination = why
      detail = text
      Deferred.doneUnsafe(ended, Effect.void)
    }
    const push = (m: TranscriptMessage) => void messages.push(m)
    const turnOf = () => messages.length
    /** τ² checks its limits after every step that does not wait for the environment. */
    const checkLimits = () => {
      if (steps >= maxSteps) end("max_steps", `the conversation reached τ²'s limit of ${maxSteps} steps`)
      if (toolErrors >= maxErrors)
        end("too_many_errors", `${toolErrors} tool calls failed (τ²'s limit is ${maxErrors})`)
    }

    const userSpeaks = Effect.gen(function* () {
      const reply = yield* Effect.result(userReply(options.userModel, options.userSystem, messages))
      steps++
      if (reply._tag === "Failure") {
        end("user_error", `the user simulator's model failed: ${reply.failure.message}`)
        return undefined
      }
      userTotals.modelCalls++
      userTotals.promptTokens += reply.success.usage.promptTokens
      userTotals.completionTokens += reply.success.usage.completionTokens
      const text = reply.success.text
      push({ role: "user", content: text, turn: turnOf() })
      if (text.trim() === "") end("user_error", "the user simulator sent an empty message")
      else if (isStop(text)) end("user_stop", `the user said ${text.trim().slice(0, 40)}`)
      else checkLimits()
      return termination === undefined ? text : undefined
    })

    const callTools: ConversationTurn["callTools"] = (requested) =>
      Effect.gen(function* () {
        if (termination !== undefined) return []
        const withIds = requested.map((c) => ({
          id: c.id ?? `call_${++calls}`,
          name: c.name,
          arguments: c.arguments
        }))
        push({ role: "assistant", toolCalls: withIds, turn: turnOf() })
        steps++
        const results: Array<{ id: string; name: string; result: ToolResult }> = []
        for (const call of withIds) {
          const tool = byName.get(call.name)
          // a τ² tool checks its arguments as the Python signature and pydantic do, with their error texts
          const result: ToolResult =
            tool === undefined
              ? { ok: false, content: "", error: `Tool '${call.name}' not found.` }
              : yield* tool.call(call.arguments)
          // a tool that says it only reads (τ²'s read tools) leaves the snapshot as it was: 2.8 MB of retail is not walked
          const reads = (tool as { readonly mutatesState?: boolean } | undefined)?.mutatesState === false
          const next = reads ? snapshot : snapshotDb(options.db)
          const writes = reads ? [] : diffSnapshots(snapshot, next)
          snapshot = next
          if (!result.ok) toolErrors++
          push({
            role: "tool",
            id: call.id,
            name: call.name,
            content: toolResultText(result),
            error: !result.ok,
            turn: turnOf(),
            ...(writes.length > 0 ? { writes } : {})
          })
          results.push({ id: call.id, name: call.name, result })
        }
        // the results of one message are one step of τ²'s (a MultiToolMessage)
        steps++
        checkLimits()
        return results
      })

    const ask: ConversationTurn["ask"] = (question) =>
      Effect.gen(function* () {
        if (termination !== undefined) return undefined
        push({ role: "assistant", content: question, turn: turnOf() })
        steps++
        checkLimits()
        if (termination !== undefined) return undefined
        return yield* userSpeaks
      })

    const turn: ConversationTurn = { callTools, ask, ended: () => termination !== undefined }
    let userMessage = yield* userSpeaks
    while (userMessage !== undefined && termination === undefined) {
      // an agent that goes on past the end (a limit reached inside a Smurfs pipeline) is stopped there
      const reply = options.agent.yieldsAtEnd
        ? yield* options.agent.respond(userMessage, turn)
        : yield* Effect.raceFirst(options.agent.respond(userMessage, turn), Effect.as(Deferred.await(ended), undefined))
      if (reply === undefined || termination !== undefined) break
      if ("error" in reply) {
        end("agent_error", reply.error)
        break
      }
      push({ role: "assistant", content: reply.text, turn: turnOf() })
      steps++
      checkLimits()
      if (termination !== undefined) break
      userMessage = yield* userSpeaks
    }
    return {
      messages,
      termination: termination ?? "agent_error",
      ...(detail === undefined ? {} : { terminationDetail: detail }),
      steps,
      toolErrors,
      userTotals
    }
  })
