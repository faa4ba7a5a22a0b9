// Token counts of prompts and replies with gpt-tokenizer (o200k_base), memoized since prompts repeat their static parts.
import { LRUCache } from "lru-cache"
import type { GenerateRequest } from "../../src/llm/language-model.ts"
import { estimateTokens } from "../../src/llm/scripted.ts"

// gpt-tokenizer is a development dependency (its 50 MB of encodings are no part of the library): an
// installed package without it counts with the library's estimate and says so in TOKENIZER.
const tokenizer = await import("gpt-tokenizer").then(
  (m) => ({ count: m.countTokens, encode: m.encode }),
  () => undefined
)
const exact = tokenizer?.count
const countTokens = exact ?? estimateTokens

/** Without gpt-tokenizer: one token id per 4-character piece (prefix-stable, as the estimate counts). */
const pieceIds = new Map<string, number>()
const encodePieces = (text: string): Array<number> => {
  const ids: Array<number> = []
  for (let i = 0; i < text.length; i += 4) {
    const piece = text.slice(i, i + 4)
    let id = pieceIds.get(piece)
    if (id === undefined) pieceIds.set(piece, (id = pieceIds.size))
    ids.push(id)
  }
  return ids
}
const encodeText = tokenizer?.encode ?? encodePieces

/** The tokenizer the simulated model counts with, for outputs that report its figures. */
export const TOKENIZER = exact
  ? "gpt-tokenizer o200k_base"
  : "an estimate of 4 characters a token (install gpt-tokenizer for exact counts)"

/** Tokens a chat template adds around each message (OpenAI's documented overhead). */
const PER_MESSAGE = 4
const PER_REPLY = 3

/**
 * Framing tokens of a chat template, as ids no text encodes to: a message is START, its role, NEWLINE,
 * its text, END (the 4 tokens of PER_MESSAGE); the reply starts after START, ASSISTANT, NEWLINE (PER_REPLY).
 */
const FRAME = { start: -1, end: -2, newline: -3 } as const
const ROLE_ID: Readonly<Record<string, number>> = { system: -10, user: -11, assistant: -12, tool: -13 }
const roleId = (role: string) => ROLE_ID[role] ?? -14

/** What the encoder reads of a message (the trace's messages carry only role and content). */
export interface EncodableMessage {
  readonly role: string
  readonly content: string
  readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly arguments: unknown }> | undefined
}

export interface TokenCounter {
  /** Tokens of one text. */
  readonly text: (text: string) => number
  /** Tokens of a request as a server would see it: every message with its framing, and the tool specs. */
  readonly prompt: (request: GenerateRequest) => number
  /**
   * The token ids a server computes for a request, as its chat template lays them out: each message
   * framed, the tool specs at the end of the system message (as Qwen's templates put them), then the
   * reply's start. Its length is `prompt(request)`; the prefix cache compares these.
   */
  readonly encodePrompt: (request: {
    readonly messages: ReadonlyArray<EncodableMessage>
    readonly tools?: GenerateRequest["tools"]
  }) => ReadonlyArray<number>
  /** The token ids of a reply (its text and tool calls, then END): what a server's slot holds after the prompt. */
  readonly encodeReply: (reply: {
    readonly text: string
    readonly toolCalls?: EncodableMessage["toolCalls"]
  }) => ReadonlyArray<number>
}

/**
 * A counter with its own memo, bounded by total characters held: 4 million keep the static parts of the
 * prompts of hundreds of tasks in flight (32 million held every prompt and reply of a whole bench run: 11 MB
 * more live heap at its end, the same counts).
 */
export const makeTokenCounter = (maxChars = 4_000_000): TokenCounter => {
  const memo = new LRUCache<string, number>({
    maxSize: maxChars,
    sizeCalculation: (_v, key) => Math.max(1, key.length)
  })
  const text = (t: string): number => {
    if (t.length === 0) return 0
    const hit = memo.get(t)
    if (hit !== undefined) return hit
    const n = countTokens(t)
    if (t.length <= maxChars / 4) memo.set(t, n)
    return n
  }
  const prompt = (request: GenerateRequest): number => {
    let n = PER_REPLY
    for (const m of request.messages) {
      n += PER_MESSAGE + text(m.content)
      for (const call of m.toolCalls ?? []) n += text(call.name) + text(JSON.stringify(call.arguments))
    }
    if (request.tools && request.tools.length > 0) n += text(JSON.stringify(request.tools))
    return n
  }
  const encoded = new LRUCache<string, ReadonlyArray<number>>({
    maxSize: maxChars,
    sizeCalculation: (_v, key) => Math.max(1, key.length)
  })
  const encode = (t: string): ReadonlyArray<number> => {
    if (t.length === 0) return []
    const hit = encoded.get(t)
    if (hit !== undefined) return hit
    const ids = encodeText(t)
    if (t.length <= maxChars / 4) encoded.set(t, ids)
    return ids
  }
  const pushAll = (into: Array<number>, ids: ReadonlyArray<number>) => {
    for (const id of ids) into.push(id)
  }
  const body = (into: Array<number>, content: string, calls: EncodableMessage["toolCalls"]) => {
    pushAll(into, encode(content))
    for (const call of calls ?? []) {
      pushAll(into, encode(call.name))
      pushAll(into, encode(JSON.stringify(call.arguments)))
    }
  }
  const encodePrompt: TokenCounter["encodePrompt"] = (request) => {
    const ids: Array<number> = []
    // the tool specs' tokens, with no framing of their own (so that the length matches `prompt`): at the end
    // of the system message, as Qwen's templates put them, else before the first message
    const tools = request.tools && request.tools.length > 0 ? encode(JSON.stringify(request.tools)) : []
    if (request.messages[0]?.role !== "system") pushAll(ids, tools)
    request.messages.forEach((m, i) => {
      ids.push(FRAME.start, roleId(m.role), FRAME.newline)
      body(ids, m.content, m.toolCalls)
      if (i === 0 && m.role === "system") pushAll(ids, tools)
      ids.push(FRAME.end)
    })
    ids.push(FRAME.start, roleId("assistant"), FRAME.newline)
    return ids
  }
  const encodeReply: TokenCounter["encodeReply"] = (reply) => {
    const ids: Array<number> = []
    body(ids, reply.text, reply.toolCalls)
    ids.push(FRAME.end)
    return ids
  }
  return { text, prompt, encodePrompt, encodeReply }
}
