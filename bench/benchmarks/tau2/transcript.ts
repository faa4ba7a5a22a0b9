// A τ² conversation as a record keeps it: every message (the agent's texts and tool calls, the tools' results with the
// database writes each made, the user's texts), how it ended, and its reward. One zod definition for the runner that
// writes it, the scorer and the reports that read it.
import { z } from "zod"

/** A tool call of the agent, as τ²'s ToolCall holds it. */
export const TranscriptToolCall = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown())
})
export type TranscriptToolCall = z.infer<typeof TranscriptToolCall>

/** One entry of the database a tool call changed: the table, the entry's key, and the entry before and after (null: absent). */
export const DbWrite = z.object({
  table: z.string(),
  key: z.string(),
  before: z.unknown(),
  after: z.unknown()
})
export type DbWrite = z.infer<typeof DbWrite>

/** One field where two databases differ: its path from the root (table, key, field...) and each side's value (absent: none). */
export const DbChange = z.object({
  path: z.array(z.string()),
  gold: z.unknown(),
  actual: z.unknown()
})
export type DbChange = z.infer<typeof DbChange>

export const TranscriptMessage = z.discriminatedUnion("role", [
  z.object({
    role: z.literal("assistant"),
    /** Text to the user; absent when the message only calls tools. */
    content: z.string().optional(),
    toolCalls: z.array(TranscriptToolCall).optional(),
    turn: z.number().int()
  }),
  z.object({ role: z.literal("user"), content: z.string(), turn: z.number().int() }),
  z.object({
    role: z.literal("tool"),
    /** The call this answers. */
    id: z.string(),
    name: z.string(),
    content: z.string(),
    error: z.boolean(),
    turn: z.number().int(),
    /** The database entries the call changed (none for a read). */
    writes: z.array(DbWrite).optional()
  })
])
export type TranscriptMessage = z.infer<typeof TranscriptMessage>

/** How a conversation ended: τ²'s TerminationReason values (only user_stop and agent_stop can score above 0). */
export const TERMINATIONS = [
  "user_stop",
  "agent_stop",
  "max_steps",
  "too_many_errors",
  "agent_error",
  "user_error"
] as const
export const Termination = z.enum(TERMINATIONS)
export type Termination = z.infer<typeof Termination>

/** The reward of a conversation as τ²'s evaluator states it: the product of its reward_basis' components, with each one's checks. */
export const Reward = z.object({
  reward: z.number(),
  /** Each component of the task's reward_basis (DB, COMMUNICATE, ACTION, ...) and its value. */
  breakdown: z.record(z.string(), z.number()).optional(),
  /** What the scorer says of the reward (a premature end, a mismatched database, an action not taken). */
  notes: z.array(z.string()).optional(),
  /** Whatever else the scorer reports (its checks, in its own shape). */
  info: z.record(z.string(), z.unknown()).optional()
})
export type Reward = z.infer<typeof Reward>

/** `record.benchmark` of a τ² conversation. */
export const Tau2RecordData = z.object({
  name: z.literal("tau2"),
  domain: z.string(),
  /** The trial (0..k-1): the record's `run`. */
  trial: z.number().int().min(0),
  userModel: z.string(),
  messages: z.array(TranscriptMessage),
  termination: Termination,
  /** Why, in words (the limit reached, the stop token said). */
  terminationDetail: z.string().optional(),
  /** Steps as τ²'s orchestrator counts them (one per message, one per batch of tool results). */
  steps: z.number().int(),
  /** Tool calls that failed. */
  toolErrors: z.number().int(),
  /** The user simulator's model calls and tokens (the agent's are the record's totals). */
  userTotals: z.object({ modelCalls: z.number(), promptTokens: z.number(), completionTokens: z.number() }),
  /** The database's hash at the end, and the gold state's (the task's actions replayed on a fresh database). */
  dbHash: z.string().optional(),
  goldHash: z.string().optional(),
  /** Where the final database differs from the gold one, field by field (empty when they match). */
  goldDiff: z.array(DbChange).optional(),
  reward: Reward
})
export type Tau2RecordData = z.infer<typeof Tau2RecordData>

/** Whether a reward counts as a success, as τ²'s is_successful reads it (1 within 1e-6). */
export const isSuccess = (reward: number): boolean => reward >= 1 - 1e-6 && reward <= 1 + 1e-6
