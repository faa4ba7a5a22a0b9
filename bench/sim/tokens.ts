// Token counts of prompts and replies with gpt-tokenizer (o200k_base), memoized since prompts repeat their static parts.
import { LRUCache } from "lru-cache"
import type { GenerateRequest } from "../../src/llm/language-model.ts"
import { estimateTokens } from "../../src/llm/scripted.ts"

// gpt-tokenizer is a development dependency (its 50 MB of encodings are no part of the library): an
// installed package without it counts with the library's estimate and says so in TOKENIZER.
const exact = await import("gpt-tokenizer").then(
  (m) => m.countTokens,
  () => undefined
)
const countTokens = exact ?? estimateTokens

/** The tokenizer the simulated model counts with, for outputs that report its figures. */
export const TOKENIZER = exact ? "gpt-tokenizer o200k_base" : "an estimate of 4 characters a token (install gpt-tokenizer for exact counts)"

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
