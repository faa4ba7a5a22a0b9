// The simulated user of a τ² conversation: a model of its own (`--user-model`), prompted with τ²'s simulation guidelines
// (read from the user's checkout, never copied here) and the task's user_scenario, as τ²'s UserSimulator builds its
// system prompt; it sees the agent's texts as the other side (roles flipped) and ends the conversation with a stop token.
import { existsSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import type { LanguageModelShape, Message } from "../../../src/llm/language-model.ts"
import { callModel } from "../../../src/llm/structured.ts"
import { loadTemplate, renderTemplate } from "../../../src/text/prompt-template.ts"
import { readFileBounded } from "../../../src/trace/guarded-fs.ts"
import type { TranscriptMessage } from "./transcript.ts"

/** τ²'s stop tokens (tau2/user/user_simulator_base.py): the user ends the conversation by saying one. */
export const STOP_TOKENS = ["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"] as const

/** Whether a user message ends the conversation (UserSimulator.is_stop). */
export const isStop = (content: string): boolean => STOP_TOKENS.some((t) => content.includes(t))

/** The user simulator's guidelines file in a τ² checkout (the text-only variant: retail gives the user no tools). */
export const guidelinesPath = (tau2Dir: string): string =>
  join(tau2Dir, "data", "tau2", "user_simulator", "simulation_guidelines.md")

/**
 * The user's guidelines: τ²'s own from the checkout (the persona placeholder emptied, no runtime persona), else our own
 * wording (prompts/tau2-user-guidelines.md: a checkout of only the domain's data, as the test fixture); `source` says
 * which, for run.json. A file that exists but cannot be read throws.
 */
export const userGuidelinesOf = (tau2Dir: string): { readonly text: string; readonly source: string } => {
  const path = guidelinesPath(tau2Dir)
  if (existsSync(path))
    return { text: readFileBounded(path).replace("<PERSONA_GUIDELINES>", ""), source: `tau2:${path}` }
  return { text: loadTemplate("tau2-user-guidelines").user, source: "smurfs" }
}

/** τ²'s StructuredUserInstructions, or plain text. */
export type UserInstructions =
  | string
  | {
      readonly domain: string
      readonly reason_for_call: string
      readonly known_info?: string | null | undefined
      readonly unknown_info?: string | null | undefined
      readonly task_instructions: string
    }

export interface UserScenario {
  readonly persona?: string | null | undefined
  readonly instructions: UserInstructions
}

/** Python's textwrap.indent: the prefix before every line that is not only whitespace. */
const indent = (text: string, prefix = "\t") =>
  text
    .split(/(?<=\n)/)
    .map((line) => (line.trim() === "" ? line : prefix + line))
    .join("")

const instructionsText = (i: UserInstructions): string => {
  if (typeof i === "string") return i
  return [
    `Domain: ${i.domain}`,
    `Reason for call:\n${indent(i.reason_for_call)}`,
    ...(i.known_info == null ? [] : [`Known info:\n${indent(i.known_info)}`]),
    ...(i.unknown_info == null ? [] : [`Unknown info:\n${indent(i.unknown_info)}`]),
    `Task instructions:\n${indent(i.task_instructions)}`
  ].join("\n")
}

/** The scenario as τ²'s UserScenario.__str__ writes it. */
export const scenarioText = (scenario: UserScenario): string =>
  [
    ...(scenario.persona == null ? [] : ["Persona:", indent(scenario.persona)]),
    "Instructions:",
    indent(instructionsText(scenario.instructions))
  ].join("\n")

/** The user's system prompt: the guidelines, then the scenario (prompts/tau2-user.md). */
export const userSystemPrompt = (guidelines: string, scenario: UserScenario): string =>
  renderTemplate("tau2-user", { guidelines, scenario: scenarioText(scenario) }).user

/**
 * The user's view of the conversation (UserState.flip_roles): the agent's texts are the other side's ("user"), the
 * user's own messages its replies ("assistant"); the agent's tool calls and their results are not the user's to see.
 */
export const userView = (messages: ReadonlyArray<TranscriptMessage>): Array<Message> =>
  messages.flatMap((m): Array<Message> => {
    if (m.role === "user") return [{ role: "assistant", content: m.content }]
    if (m.role === "assistant" && m.content !== undefined && (m.toolCalls ?? []).length === 0)
      return [{ role: "user", content: m.content }]
    return []
  })

/** The user simulator's role in model calls and traces. */
export const USER_ROLE = "tau2.user"

/** The next user message: the user model's reply to the conversation so far. */
export const userReply = (model: LanguageModelShape, system: string, messages: ReadonlyArray<TranscriptMessage>) =>
  callModel(model.generate, {
    role: USER_ROLE,
    messages: [{ role: "system", content: system }, ...userView(messages)]
  }).pipe(Effect.map((r) => ({ text: r.text, usage: r.usage })))
