// The agents that can hold a τ² conversation, in one list: τ²'s own baseline (`tau2-agent`: a tool-calling model with
// the domain policy as its system prompt, one model call per step, as their LLMAgent runs) and smurfs' `chat` (intent
// routing and the Smurfs pipeline around the four agents; `ask_user` becomes a message to the user). Adding one is one
// entry here.
import { existsSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { makeChatSession } from "../../../src/agents/chat/session.ts"
import type { SmurfsOptions } from "../../../src/agents/smurfs-options.ts"
import { LanguageModel, type Message, type ToolSpec } from "../../../src/llm/language-model.ts"
import { callModel } from "../../../src/llm/structured.ts"
import { renderTemplate } from "../../../src/text/prompt-template.ts"
import { makeToolLibrary, toolSpec } from "../../../src/tools/library.ts"
import type { Tool } from "../../../src/tools/tool.ts"
import { emit } from "../../../src/trace/events.ts"
import { readFileBounded } from "../../../src/trace/guarded-fs.ts"
import type { RunEvent } from "../../../src/trace/record.ts"
import { type ConversationAgent, type ConversationTurn, FIRST_AGENT_MESSAGE, toolResultText } from "./conversation.ts"

/** What an agent is built from for one conversation. */
export interface ConverserContext {
  readonly conversationId: string
  readonly policy: string
  readonly tools: ReadonlyArray<Tool>
  /** The agent's instruction text (τ²'s AGENT_INSTRUCTION from the checkout, or our wording). */
  readonly agentInstruction: string
  /** The Smurfs pipeline's options (chat), from the run's settings. */
  readonly smurfs?: SmurfsOptions | undefined
  /** Where an agent's events that its own recorder keeps (chat's pipeline) are sent, to join the conversation's record. */
  readonly onEvent: (event: RunEvent) => void
}

export interface ConverserEntry {
  readonly name: string
  readonly label: string
  readonly build: (context: ConverserContext) => ConversationAgent
}

/** Where τ²'s LLM agent keeps its instruction in a full checkout (the data-only checkout has none). */
const agentSourcePath = (tau2Dir: string) => join(tau2Dir, "src", "tau2", "agent", "llm_agent.py")

/**
 * τ²'s agent instruction (AGENT_INSTRUCTION of src/tau2/agent/llm_agent.py) when the checkout has the code, else our
 * own wording (prompts/tau2-agent-instruction.md); `source` says which, for run.json.
 */
export const agentInstructionOf = (tau2Dir: string): { readonly text: string; readonly source: string } => {
  const path = agentSourcePath(tau2Dir)
  if (existsSync(path)) {
    const found = /AGENT_INSTRUCTION\s*=\s*"""([\s\S]*?)"""/.exec(readFileBounded(path))
    if (found) return { text: found[1]!.trim(), source: `tau2:${path}` }
  }
  return { text: renderTemplate("tau2-agent-instruction", {}).user, source: "smurfs" }
}

/** A tool as the model is shown it: τ²'s own function schema (pydantic's) when the tool carries it, else ours. */
const functionSpec = (tool: Tool): ToolSpec => {
  const f = (tool as { readonly openAiSchema?: { readonly function?: Record<string, unknown> } }).openAiSchema?.function
  return f !== undefined && typeof f["name"] === "string" && typeof f["parameters"] === "object"
    ? {
        name: f["name"],
        description: String(f["description"] ?? ""),
        parameters: f["parameters"] as Record<string, unknown>
      }
    : toolSpec(tool)
}

/** τ²'s LLM agent: the policy as system prompt, the domain's tools natively, one model call per step. */
const tau2Agent = (context: ConverserContext): ConversationAgent => {
  const system = renderTemplate("tau2-agent", { instruction: context.agentInstruction, policy: context.policy }).user
  const specs = context.tools.map(functionSpec)
  const history: Array<Message> = [{ role: "assistant", content: FIRST_AGENT_MESSAGE }]
  return {
    // between two model calls it looks whether the conversation has ended: its last tool calls are still recorded
    yieldsAtEnd: true,
    respond: (userMessage, turn) =>
      Effect.gen(function* () {
        const model = yield* LanguageModel
        history.push({ role: "user", content: userMessage })
        for (;;) {
          const reply = yield* Effect.result(
            callModel(model.generate, {
              role: "tau2.agent",
              messages: [{ role: "system", content: system }, ...history],
              tools: specs
            })
          )
          if (reply._tag === "Failure") return { error: `the agent's model failed: ${reply.failure.message}` }
          const { text, toolCalls = [] } = reply.success
          if (toolCalls.length === 0) {
            history.push({ role: "assistant", content: text })
            return { text }
          }
          history.push({ role: "assistant", content: text, toolCalls })
          const started = Date.now()
          const results = yield* turn.callTools(
            toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }))
          )
          for (const [i, r] of results.entries()) {
            yield* emit("tool_call", {
              tool: r.name,
              args: toolCalls[i]?.arguments ?? {},
              ok: r.result.ok,
              content: r.result.content,
              ...(r.result.error === undefined ? {} : { error: r.result.error }),
              durationMs: i === 0 ? Date.now() - started : 0
            })
            history.push({ role: "tool", content: toolResultText(r.result), toolCallId: r.id, toolName: r.name })
          }
          if (turn.ended()) return { text: "" }
        }
      })
  }
}

/**
 * smurfs' chat: each user message is routed (small talk, capabilities, task, refusal); a task runs the Smurfs pipeline
 * on the domain's tools with the policy before the request; `ask_user` is a message to the user, the reply its answer.
 */
const chatAgent = (context: ConverserContext): ConversationAgent => {
  // the tools are the domain's, each call made through the conversation (its message, result and writes recorded)
  let current: ConversationTurn | undefined
  const tools: ReadonlyArray<Tool> = context.tools.map((tool) => ({
    ...tool,
    call: (args) =>
      Effect.gen(function* () {
        if (current === undefined || current.ended())
          return { ok: false, content: "", error: "the conversation has ended" } as const
        const [done] = yield* current.callTools([{ name: tool.name, arguments: args }])
        return done?.result ?? ({ ok: false, content: "", error: "the conversation has ended" } as const)
      })
  }))
  const session = makeChatSession({
    tools: makeToolLibrary(context.conversationId, tools),
    sessionId: context.conversationId,
    instructions: context.policy,
    pipeline: {
      ...context.smurfs,
      onEvent: context.onEvent,
      askUser: ({ question }) => (current === undefined ? undefined : Effect.runPromise(current.ask(question)))
    }
  })
  return {
    respond: (userMessage, turn) => {
      current = turn
      return Effect.map(session.turn(userMessage), (t) => ({ text: t.reply }))
    }
  }
}

const entry = <const N extends string>(e: ConverserEntry & { readonly name: N }) => e

/** Every agent that can converse, in the order help lists them. */
export const CONVERSERS = [
  entry({ name: "tau2-agent", label: "τ² LLM agent", build: tau2Agent }),
  entry({ name: "chat", label: "smurfs chat", build: chatAgent })
] as const

/** The conversing agents' names, in order (a tuple, so that a zod enum can be built from it). */
export const CONVERSER_NAMES = CONVERSERS.map((c) => c.name) as unknown as readonly [
  (typeof CONVERSERS)[number]["name"],
  ...Array<(typeof CONVERSERS)[number]["name"]>
]

export const converserOf = (name: string): ConverserEntry | undefined =>
  (CONVERSERS as ReadonlyArray<ConverserEntry>).find((c) => c.name === name)
