// Token counts of prompts and replies with gpt-tokenizer (o200k_base), memoized since prompts repeat their static parts.
import { countTokens } from "gpt-tokenizer"
import { LRUCache } from "lru-cache"
import type { GenerateRequest } from "../../src/llm/language-model.ts"

/** The tokenizer the simulated model counts with, for outputs that report its figures. */
export const TOKENIZER = "gpt-tokenizer o200k_base"

/** Tokens a chat template adds around each message (OpenAI's documented overhead). */
const PER_MESSAGE = 4
const PER_REPLY = 3

export interface TokenCounter {
  /** Tokens of one text. */
  readonly text: (text: string) => number
  /** Tokens of a request as a server would see it: every message with its framing, and the tool specs. */
  readonly prompt: (request: GenerateRequest) => number
}

/** A counter with its own memo (bounded by total characters held). */
export const makeTokenCounter = (maxChars = 32_000_000): TokenCounter => {
  const memo = new LRUCache<string, number>({ maxSize: maxChars, sizeCalculation: (_v, key) => Math.max(1, key.length) })
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
  return { text, prompt }
}
