// What bench:grammar reports from the converted schemas: sizes, the largest, failures, and what Ollama would cut.
import type { Conversion } from "./converter.ts"
import type { SentSchema } from "./sent-schemas.ts"

/**
 * Ollama's grammar buffer (llama/llama.go SchemaToGrammar): 32,768 bytes in older releases; current ones
 * size it max(32 KiB, min(1 MiB, 4 x the schema's bytes)). llama/sampling_ext.cpp's schema_to_grammar
 * copies at most the buffer less one byte and silently drops the rest, so a grammar is whole on every
 * release only up to OLLAMA_GRAMMAR_LIMIT bytes.
 */
export const OLLAMA_GRAMMAR_BUFFER = 32_768
export const OLLAMA_GRAMMAR_LIMIT = OLLAMA_GRAMMAR_BUFFER - 1

export interface Converted extends SentSchema {
  readonly result: Conversion
}

export interface LargeGrammar {
  readonly name: string
  readonly sentAs: SentSchema["sentAs"]
  readonly bytes: number
  readonly rules: number
  /** Other schemas sent with the same text (the same tool in other queries). */
  readonly alsoAs: number
}

const median = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return 0
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2)
}

const sizes = (items: ReadonlyArray<Converted>) => {
  const bytes = items.flatMap((i) => ("bytes" in i.result ? [i.result.bytes] : []))
  return { count: items.length, median: median(bytes), largest: bytes.length > 0 ? Math.max(...bytes) : 0 }
}

/** The figures of a conversion run: per kind of schema, the `top` largest grammars (one line per distinct schema), failures, and format grammars over Ollama's limit. */
export const grammarFigures = (items: ReadonlyArray<Converted>, top: number) => {
  const distinct = new Map<string, LargeGrammar>()
  for (const item of items) {
    if (!("bytes" in item.result)) continue
    const key = `${item.sentAs}:${JSON.stringify(item.schema)}`
    const seen = distinct.get(key)
    distinct.set(
      key,
      seen
        ? { ...seen, alsoAs: seen.alsoAs + 1 }
        : { name: item.name, sentAs: item.sentAs, bytes: item.result.bytes, rules: item.result.rules, alsoAs: 0 }
    )
  }
  return {
    count: items.length,
    format: sizes(items.filter((i) => i.sentAs === "format")),
    tool: sizes(items.filter((i) => i.sentAs === "tool")),
    failed: items.flatMap((i) => ("error" in i.result ? [{ name: i.name, error: i.result.error }] : [])),
    // Ollama builds a grammar from `format` only; tool calls are parsed, not constrained.
    over: items.flatMap((i) =>
      i.sentAs === "format" && "bytes" in i.result && i.result.bytes > OLLAMA_GRAMMAR_LIMIT
        ? [{ name: i.name, bytes: i.result.bytes }]
        : []
    ),
    largest: [...distinct.values()].sort((a, b) => b.bytes - a.bytes).slice(0, top)
  }
}
