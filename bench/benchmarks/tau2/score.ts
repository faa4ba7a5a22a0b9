// A conversation's reward as τ²'s `evaluate_simulation` (evaluation type ALL) computes it: the database check
// (the conversation's writes replayed on a fresh database against the gold actions'), communicated information,
// actions, natural-language assertions (only from a judge's verdicts), multiplied over the task's `reward_basis`.
import { z } from "zod"
import type { Tau2ToolMessage } from "./domain.ts"
import { replayGold, type Tau2GoldReplay } from "./gold.ts"
import type { Tau2Domain } from "./load.ts"
import { type PyValue, parsePyJson, pyEqual } from "./python-json.ts"
import { type Tau2Action, Tau2Requestor, type Tau2RewardType, type Tau2Task } from "./tasks.ts"

/** A tool call in a conversation (`ToolCall`). */
export const Tau2ToolCall = z.object({
  id: z.string().default(""),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  requestor: Tau2Requestor.default("assistant")
})
export type Tau2ToolCall = z.infer<typeof Tau2ToolCall>

/** A message of a conversation as τ² records it: the agent's, the user's, a tool's answer, or the system's. */
export const Tau2Message = z.discriminatedUnion("role", [
  z.object({
    role: z.literal("assistant"),
    content: z.string().nullish(),
    tool_calls: z.array(Tau2ToolCall).nullish()
  }),
  z.object({ role: z.literal("user"), content: z.string().nullish(), tool_calls: z.array(Tau2ToolCall).nullish() }),
  z.object({
    role: z.literal("tool"),
    id: z.string().default(""),
    content: z.string().nullish(),
    requestor: Tau2Requestor.default("assistant"),
    error: z.boolean().default(false)
  }),
  z.object({ role: z.literal("system"), content: z.string().nullish() })
])
export type Tau2Message = z.infer<typeof Tau2Message>
export type Tau2MessageInput = z.input<typeof Tau2Message>

/** Why a conversation ended (`TerminationReason`); only `agent_stop` and `user_stop` are scored. */
export const Tau2Termination = z.enum([
  "user_stop",
  "agent_stop",
  "max_steps",
  "timeout",
  "too_many_errors",
  "agent_error",
  "user_error",
  "infrastructure_error",
  "context_window_exceeded",
  "unexpected_error"
])
export type Tau2Termination = z.infer<typeof Tau2Termination>

/** `DBCheck`, with both hashes for the report. */
export interface Tau2DbCheck {
  readonly dbMatch: boolean
  readonly dbReward: number
  readonly goldHash: string
  readonly predictedHash: string
}

/** `ActionCheck`: whether some tool call of the conversation matched a gold action. */
export interface Tau2ActionCheck {
  readonly action: Tau2Action
  readonly actionMatch: boolean
  readonly actionReward: number
  readonly toolType: string | undefined
}

/** `CommunicateCheck`. */
export interface Tau2CommunicateCheck {
  readonly info: string
  readonly met: boolean
  readonly justification: string
}

/** `NLAssertionCheck`, as a judge returns it. */
export const Tau2NlAssertionCheck = z.object({
  nl_assertion: z.string(),
  met: z.boolean(),
  justification: z.string()
})
export type Tau2NlAssertionCheck = z.infer<typeof Tau2NlAssertionCheck>

/** A replayed write whose answer differs from the one recorded in the conversation (τ²'s non-strict replay). */
export interface Tau2ReplayMismatch {
  readonly call: Tau2ToolCall
  readonly recorded: string
  readonly replayed: string
}

/** `RewardInfo`: the reward, what it was the product of, and every check. */
export interface Tau2Reward {
  readonly reward: number
  /** The task's basis; null when the conversation was not scored (ended early, no criteria). */
  readonly rewardBasis: ReadonlyArray<Tau2RewardType> | null
  /** Each component of the basis that was evaluated, with its reward. */
  readonly breakdown: Partial<Record<Tau2RewardType, number>>
  /**
   * Components of the basis that could not be evaluated here (NL_ASSERTION with assertions but no judge verdicts,
   * ENV_ASSERTION): the reward is the product of the others, and a run should say so rather than count it as τ²'s.
   */
  readonly notEvaluated: ReadonlyArray<Tau2RewardType>
  readonly dbCheck?: Tau2DbCheck | undefined
  readonly actionChecks?: ReadonlyArray<Tau2ActionCheck> | undefined
  readonly communicateChecks?: ReadonlyArray<Tau2CommunicateCheck> | undefined
  readonly nlAssertions?: ReadonlyArray<Tau2NlAssertionCheck> | undefined
  readonly replayMismatches?: ReadonlyArray<Tau2ReplayMismatch> | undefined
  readonly note?: string | undefined
}

/** A conversation to score: its messages in order and why it ended. */
export interface Tau2Conversation {
  readonly messages: ReadonlyArray<Tau2MessageInput>
  readonly termination: Tau2Termination
}

/** What scoring may be given besides the conversation. */
export interface Tau2ScoreOptions {
  /** The task's gold replay, when the caller already has it (it is computed otherwise). */
  readonly gold?: Tau2GoldReplay | undefined
  /** A judge's verdicts on the task's `nl_assertions`; without them NL_ASSERTION is not evaluated. */
  readonly nlAssertions?: ReadonlyArray<Tau2NlAssertionCheck> | undefined
}

/** τ²'s `is_successful`: a reward of 1 within 1e-6. */
export const isSuccessful = (reward: number): boolean => 1 - 1e-6 <= reward && reward <= 1 + 1e-6

/** The tool calls of a conversation with their answers, as τ²'s `get_actions_from_messages` pairs them. */
export const pairToolCalls = (
  messages: ReadonlyArray<Tau2Message>
): Array<{ readonly call: Tau2ToolCall; readonly answer: Tau2Message & { role: "tool" } }> => {
  const pairs: Array<{ call: Tau2ToolCall; answer: Tau2Message & { role: "tool" } }> = []
  let k = 0
  while (k < messages.length) {
    const message = messages[k++] as Tau2Message
    if (message.role === "tool")
      throw new Error("Tool message not expected. Tool messages should always follow a tool call.")
    if ((message.role === "assistant" || message.role === "user") && message.tool_calls != null)
      for (const call of message.tool_calls) {
        const answer = messages[k++]
        if (answer === undefined) throw new Error("Tool message expected. Got None.")
        if (answer.role !== "tool") throw new Error(`Tool message expected. Got ${answer.role} message.`)
        if (call.id !== answer.id) throw new Error(`Tool call id mismatch. Got ${call.id} and ${answer.id}`)
        pairs.push({ call, answer })
      }
  }
  return pairs
}

/** Why the messages' tool calls and answers do not pair up, or undefined when they do. */
const checkPairs = (messages: ReadonlyArray<Tau2Message>): string | undefined => {
  try {
    pairToolCalls(messages)
    return undefined
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
}

const loadsOrText = (text: string): PyValue => {
  try {
    return parsePyJson(text)
  } catch {
    return text
  }
}

/**
 * The database a conversation leaves, as τ²'s `Environment.set_state` rebuilds it: the task's initial state, then
 * every write tool call of the conversation run again in order (unknown tools and reads skipped); a replayed answer
 * that differs from the recorded one is reported (τ²'s non-strict replay), not fatal.
 */
export const replayConversation = (
  domain: Tau2Domain,
  task: Tau2Task,
  messages: ReadonlyArray<Tau2Message>
): { readonly db: unknown; readonly mismatches: ReadonlyArray<Tau2ReplayMismatch> } => {
  const db = domain.initialDb(task)
  const tools = domain.tools(db)
  const mismatches: Array<Tau2ReplayMismatch> = []
  for (const { call, answer } of pairToolCalls(messages)) {
    const tool = tools.find((t) => t.name === call.name)
    if (tool === undefined || !tool.mutatesState || call.requestor === "user") continue
    const replayed: Tau2ToolMessage = tool.run(call.arguments)
    const recorded = answer.content ?? ""
    if (!pyEqual(loadsOrText(replayed.content), loadsOrText(recorded)))
      mismatches.push({ call, recorded, replayed: replayed.content })
  }
  return { db, mismatches }
}

/** `Action.compare_with_tool_call`: the same name and equal values of the compared arguments. */
export const actionMatchesCall = (action: Tau2Action, call: Tau2ToolCall): boolean => {
  if (action.name !== call.name) return false
  const compared = action.compare_args ?? Object.keys(call.arguments)
  if (compared.length === 0) return true
  const pick = (args: Record<string, unknown>) =>
    new Map(Object.entries(args).filter(([k]) => compared.includes(k))) as PyValue
  return pyEqual(pick(call.arguments), pick(action.arguments))
}

/** `CommunicateEvaluator.evaluate_communicate_info`: each string, lower-cased, in an agent message without commas. */
export const checkCommunicateInfo = (
  messages: ReadonlyArray<Tau2Message>,
  infos: ReadonlyArray<string>
): Array<Tau2CommunicateCheck> =>
  infos.map((info) => {
    const found = messages.find(
      (m) =>
        m.role === "assistant" &&
        m.content != null &&
        m.content.trim() !== "" &&
        m.content.toLowerCase().replaceAll(",", "").includes(info.toLowerCase())
    )
    return found === undefined
      ? { info, met: false, justification: `Information '${info}' not communicated.` }
      : { info, met: true, justification: `Information '${info}' communicated in the message:\n '${found.content}'` }
  })

const allOrNothing = (checks: ReadonlyArray<boolean>): number => (checks.every(Boolean) ? 1 : 0)

/**
 * Score one conversation of `task` as τ²'s `evaluate_simulation` with evaluation type ALL: 0 when it ended otherwise
 * than by the agent or the user, 1 without criteria, else the product of the basis' components.
 */
export const scoreConversation = (
  domain: Tau2Domain,
  task: Tau2Task,
  conversation: Tau2Conversation,
  options: Tau2ScoreOptions = {}
): Tau2Reward => {
  if (conversation.termination !== "agent_stop" && conversation.termination !== "user_stop")
    return {
      reward: 0,
      rewardBasis: null,
      breakdown: {},
      notEvaluated: [],
      note: `Simulation terminated prematurely. Termination reason: ${conversation.termination}`
    }
  const criteria = task.evaluation_criteria
  if (criteria == null)
    return { reward: 1, rewardBasis: null, breakdown: {}, notEvaluated: [], note: "No evaluation criteria" }
  const parsed = z.array(Tau2Message).safeParse(conversation.messages)
  const paired = parsed.success ? checkPairs(parsed.data) : parsed.error.issues[0]?.message
  if (!parsed.success || paired !== undefined)
    return {
      reward: 0,
      rewardBasis: criteria.reward_basis,
      breakdown: {},
      notEvaluated: [],
      note: `The transcript cannot be scored: ${paired ?? "malformed messages"}`
    }
  const messages = parsed.data
  const basis = criteria.reward_basis

  // ENV: the database check (and env assertions, which this port does not run)
  let dbCheck: Tau2DbCheck | undefined
  let replayMismatches: ReadonlyArray<Tau2ReplayMismatch> | undefined
  const hasEnvCriteria = criteria.actions != null || criteria.env_assertions != null
  if (hasEnvCriteria) {
    const gold = options.gold ?? replayGold(domain, task)
    const predicted = replayConversation(domain, task, messages)
    replayMismatches = predicted.mismatches
    const predictedHash = domain.hashDb(predicted.db)
    const dbMatch = predictedHash === gold.hash
    dbCheck = { dbMatch, dbReward: dbMatch ? 1 : 0, goldHash: gold.hash, predictedHash }
  }
  const dbReward = dbCheck?.dbReward ?? 1

  // ACTION
  const calls = messages.flatMap((m) => ((m.role === "assistant" || m.role === "user") && m.tool_calls) || [])
  const toolTypes = new Map(domain.spec.tools.map((t) => [t.name, t.type]))
  const actionChecks = (criteria.actions ?? []).map((action): Tau2ActionCheck => {
    const match = calls.some((call) => actionMatchesCall(action, call))
    return { action, actionMatch: match, actionReward: match ? 1 : 0, toolType: toolTypes.get(action.name) }
  })
  const actionReward = allOrNothing(actionChecks.map((c) => c.actionMatch))

  // COMMUNICATE
  const communicateChecks = checkCommunicateInfo(messages, criteria.communicate_info ?? [])
  const communicateReward = allOrNothing(communicateChecks.map((c) => c.met))

  // NL_ASSERTION: 1 without assertions (as theirs); a judge's verdicts otherwise
  const assertions = criteria.nl_assertions ?? []
  const nlEvaluated = assertions.length === 0 || options.nlAssertions !== undefined
  const nlAssertions = assertions.length === 0 ? [] : options.nlAssertions
  const nlReward = allOrNothing((nlAssertions ?? []).map((c) => c.met))

  const breakdown: Partial<Record<Tau2RewardType, number>> = {}
  const notEvaluated: Array<Tau2RewardType> = []
  let reward = 1
  if (basis.includes("DB")) {
    breakdown.DB = dbReward
    reward *= dbReward
  }
  if (basis.includes("ENV_ASSERTION")) {
    if ((criteria.env_assertions ?? []).length === 0) breakdown.ENV_ASSERTION = 1
    else notEvaluated.push("ENV_ASSERTION")
  }
  if (basis.includes("ACTION")) {
    breakdown.ACTION = actionReward
    reward *= actionReward
  }
  if (basis.includes("NL_ASSERTION")) {
    if (nlEvaluated) {
      breakdown.NL_ASSERTION = nlReward
      reward *= nlReward
    } else notEvaluated.push("NL_ASSERTION")
  }
  if (basis.includes("COMMUNICATE")) {
    breakdown.COMMUNICATE = communicateReward
    reward *= communicateReward
  }
  return {
    reward,
    rewardBasis: basis,
    breakdown,
    notEvaluated,
    dbCheck,
    actionChecks,
    communicateChecks,
    nlAssertions,
    replayMismatches
  }
}

/** τ²'s `pass_hat_k`: C(successes, k) / C(trials, k), the chance that k trials drawn without replacement all pass. */
export const passHatK = (numTrials: number, successCount: number, k: number): number => {
  if (numTrials < k) throw new RangeError(`Number of trials ${numTrials} is less than k ${k}.`)
  const comb = (n: number, r: number): bigint => {
    if (r < 0 || r > n) return 0n
    let c = 1n
    for (let j = 0; j < r; j++) c = (c * BigInt(n - j)) / BigInt(j + 1)
    return c
  }
  return Number(comb(successCount, k)) / Number(comb(numTrials, k))
}

/** One scored trial of a task. */
export interface Tau2TrialResult {
  readonly taskId: string
  readonly reward: number
  readonly termination?: Tau2Termination | undefined
}

/** τ²'s `compute_metrics` figures: average reward and pass^k for k = 1..(fewest trials of any task). */
export interface Tau2PassHatK {
  readonly avgReward: number
  /** pass^k by k: the mean over tasks of each task's pass^k. */
  readonly passHatKs: Readonly<Record<number, number>>
  readonly maxK: number
  readonly tasks: number
  readonly trials: number
  /** Trials left out as τ² leaves them out (infrastructure errors: the conversation never ran). */
  readonly infraErrors: number
}

/**
 * pass^k over trials as τ² computes it: infrastructure errors left out, success = reward 1 (within 1e-6), k from 1 to
 * the fewest trials any task has, each k the mean over tasks of `passHatK(trials, successes, k)`.
 */
export const computePassHatKs = (results: ReadonlyArray<Tau2TrialResult>): Tau2PassHatK => {
  const counted = results.filter((r) => r.termination !== "infrastructure_error")
  const byTask = new Map<string, { trials: number; successes: number }>()
  for (const r of counted) {
    const entry = byTask.get(r.taskId) ?? { trials: 0, successes: 0 }
    entry.trials += 1
    if (isSuccessful(r.reward)) entry.successes += 1
    byTask.set(r.taskId, entry)
  }
  const maxK = byTask.size === 0 ? 0 : Math.min(...[...byTask.values()].map((e) => e.trials))
  const passHatKs: Record<number, number> = {}
  for (let k = 1; k <= maxK; k++) {
    let sum = 0
    for (const e of byTask.values()) sum += passHatK(e.trials, e.successes, k)
    passHatKs[k] = sum / byTask.size
  }
  const avgReward = counted.length === 0 ? 0 : counted.reduce((s, r) => s + r.reward, 0) / counted.length
  return {
    avgReward,
    passHatKs,
    maxK,
    tasks: byTask.size,
    trials: counted.length,
    infraErrors: results.length - counted.length
  }
}
