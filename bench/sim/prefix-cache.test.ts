import { describe, expect, it } from "vitest"
import { parseSimSpec } from "./options.ts"
import { commonPrefixLength, makePrefixCache } from "./prefix-cache.ts"
import { makeTokenCounter } from "./tokens.ts"

const costs = { prefillMsPerToken: 0.5, decodeMsPerToken: 10, similarity: 0 }
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)

describe("prefix cache model", () => {
  it("gives a request the slot holding the longest common prefix of its prompt, and costs only the rest", () => {
    const cache = makePrefixCache({ slots: 2, ...costs })
    const a = range(0, 100)
    const b = range(1000, 100)
    expect(cache.serve(a, [7, 8])).toEqual({
      slot: 0,
      cachedTokens: 0,
      uncachedTokens: 100,
      outputTokens: 2,
      gpuMs: 100 * 0.5 + 2 * 10
    })
    // the other slot is empty and less recently used: a prompt sharing nothing goes there
    expect(cache.serve(b, [9]).slot).toBe(1)
    // a's continuation (its prompt, its reply, then more) reuses slot 0 whole
    const next = [...a, 7, 8, 50, 51, 52]
    expect(cache.serve(next, [])).toEqual({
      slot: 0,
      cachedTokens: 102,
      uncachedTokens: 3,
      outputTokens: 0,
      gpuMs: 1.5
    })
    // b's prefix with another ending reuses slot 1 up to where they differ
    const c = [...range(1000, 60), 5, 5, 5]
    expect(cache.serve(c, [1])).toMatchObject({ slot: 1, cachedTokens: 60, uncachedTokens: 3 })
    expect(cache.totals).toEqual({
      requests: 4,
      promptTokens: 100 + 100 + 105 + 63,
      cachedTokens: 162,
      uncachedTokens: 206,
      outputTokens: 4,
      gpuMs: 206 * 0.5 + 4 * 10
    })
  })

  it("breaks ties by the least recently used slot, and evicts it", () => {
    const cache = makePrefixCache({ slots: 3, ...costs })
    expect([range(0, 5), range(10, 5), range(20, 5)].map((p) => cache.serve(p, []).slot)).toEqual([0, 1, 2])
    // slot 0 used again: now slot 1 is the least recently used of the three that share nothing with the prompt
    expect(cache.serve(range(0, 5), []).slot).toBe(0)
    expect(cache.serve(range(90, 5), []).slot).toBe(1)
    // slot 1 now holds the new prompt: the old one it held is gone
    expect(cache.serve(range(10, 5), [])).toMatchObject({ slot: 2, cachedTokens: 0 })
  })

  it("takes the least recently used slot when the best holds less than the similarity share of the prompt (llama-server)", () => {
    const strict = makePrefixCache({ slots: 2, ...costs, similarity: 0.5 })
    const loose = makePrefixCache({ slots: 2, ...costs })
    const long = range(0, 100)
    // shares 3 framing tokens with the long prompt, 3% of it
    const other = [...range(0, 3), ...range(500, 97)]
    for (const cache of [strict, loose]) {
      cache.serve(long, [])
      cache.serve(range(900, 10), [])
      cache.serve(long, [])
    }
    // the longest prefix alone would overwrite the long prompt's slot; the similarity rule keeps it
    expect(loose.serve(other, [])).toMatchObject({ slot: 0, cachedTokens: 3 })
    expect(strict.serve(other, [])).toMatchObject({ slot: 1, cachedTokens: 0 })
    expect(strict.serve(long, [])).toMatchObject({ slot: 0, cachedTokens: 99 })
  })

  it("computes the last token of a prompt it holds whole, as llama.cpp and Ollama do", () => {
    const cache = makePrefixCache({ slots: 1, ...costs })
    cache.serve([1, 2, 3], [])
    expect(cache.serve([1, 2, 3], [])).toMatchObject({ cachedTokens: 2, uncachedTokens: 1 })
    expect(commonPrefixLength([1, 2, 3], [1, 2, 4])).toBe(2)
    expect(() => makePrefixCache({ slots: 0, ...costs })).toThrow(/at least one slot/)
  })

  it("encodes a request as the token counter counts it, framing each message, so a reply continues its prompt", () => {
    const tokens = makeTokenCounter()
    const request = {
      role: "x",
      messages: [
        { role: "system" as const, content: "You are a helper." },
        { role: "user" as const, content: "What is 2 + 2?" }
      ],
      tools: [{ name: "add", description: "adds", parameters: { type: "object" } }]
    }
    const prompt = tokens.encodePrompt(request)
    expect(prompt.length).toBe(tokens.prompt(request))
    const reply = tokens.encodeReply({ text: "4" })
    const followUp = tokens.encodePrompt({
      ...request,
      messages: [...request.messages, { role: "assistant", content: "4" }, { role: "user", content: "And 3 + 3?" }]
    })
    expect(commonPrefixLength([...prompt, ...reply], followUp)).toBe(prompt.length + reply.length)
  })

  it("a request in flight holds its slot: two tasks at once keep their prefixes apart, as the embedded engine measures", () => {
    const shared = [1, 2, 3, 4, 5, 6, 7, 8]
    const a = [...shared, 10, 11, 12]
    const b = [...shared, 20, 21, 22]
    const cache = makePrefixCache({ slots: 2, prefillMsPerToken: 0, decodeMsPerToken: 0, similarity: 0 })
    const first = cache.begin(a)
    // b arrives while a is served: it cannot take a's slot, whatever they share
    const second = cache.begin(b)
    expect(first.end([13]).slot).not.toBe(second.end([23]).slot)
    // each task's next request finds its own slot whole
    expect(cache.begin([...a, 13, 14]).end([]).cachedTokens).toBe(a.length + 1)
    expect(cache.serve([...b, 23, 24], []).cachedTokens).toBe(b.length + 1)
    // one at a time (serve), b would have taken a's slot for the longer shared prefix and a would compute again
    const serial = makePrefixCache({ slots: 2, prefillMsPerToken: 0, decodeMsPerToken: 0, similarity: 0 })
    serial.serve(a, [13])
    serial.serve(b, [23])
    expect(serial.serve([...a, 13, 14], []).cachedTokens).toBe(shared.length)
    const full = makePrefixCache({ slots: 1, prefillMsPerToken: 0, decodeMsPerToken: 0, similarity: 0 })
    full.begin(a)
    expect(() => full.begin(b)).toThrow(RangeError)
  })

  it("is read from the sim spec: cache=N slots with per-token costs, none by default", () => {
    const parsed = parseSimSpec("sim:cache=3,prefill=0.5ms,decode=10ms,similarity=0")
    expect("options" in parsed && parsed.options.prefixCache).toEqual({ slots: 3, ...costs })
    const plain = parseSimSpec("sim")
    expect("options" in plain && plain.options.prefixCache).toBeUndefined()
    const off = parseSimSpec("sim:cache=0")
    expect("options" in off && off.options.prefixCache).toBeUndefined()
    expect("error" in parseSimSpec("sim:cache=-1")).toBe(true)
  })
})
