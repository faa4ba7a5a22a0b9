import { describe, expect, it } from "vitest"
import { makeBlockCache } from "./block-cache.ts"

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)
const costs = { prefillMsPerToken: 0.25, decodeMsPerToken: 20 }

describe("block cache model (vLLM / SGLang prefix caching)", () => {
  it("reuses the full blocks of an earlier prompt and reply, never a partly filled one", () => {
    const cache = makeBlockCache({ blockTokens: 4, budgetTokens: 64, ...costs })
    const prompt = range(0, 10) // blocks [0-3] [4-7], and 2 tokens of a third
    const first = cache.begin(prompt, [100, 101])
    expect(first).toMatchObject({ cachedTokens: 0, uncachedTokens: 10 })
    first.end()
    // the continuation: prompt, reply, more; the third block is full now (8, 9, 100, 101) and was named at the end
    const next = cache.begin([...prompt, 100, 101, 7, 7, 7], [])
    expect(next).toMatchObject({ cachedTokens: 12, uncachedTokens: 3 })
    next.end()
    // another prompt sharing 6 tokens shares one full block only
    expect(cache.begin([...range(0, 6), 50, 51], []).cachedTokens).toBe(4)
  })

  it("computes the last token of a prompt it holds whole", () => {
    const cache = makeBlockCache({ blockTokens: 4, budgetTokens: 64, ...costs })
    cache.begin(range(0, 8), []).end()
    expect(cache.begin(range(0, 8), [])).toMatchObject({ cachedTokens: 7, uncachedTokens: 1 })
  })

  it("evicts the least recently freed blocks past its budget, never those of a request in flight, and makes a request wait when nothing can go", () => {
    const cache = makeBlockCache({ blockTokens: 4, budgetTokens: 16, ...costs }) // 4 blocks
    const a = range(0, 8)
    const b = range(100, 8)
    cache.begin(a, []).end()
    const held = cache.begin(b, [])
    // a's two cached blocks make room for a third prompt while b is in flight
    expect(cache.fits(range(200, 8), [])).toBe(true)
    const c = cache.begin(range(200, 8), [])
    expect(cache.taken()).toBe(4)
    // nothing is free or evictable now: a fourth request waits
    expect(cache.fits(range(300, 4), [])).toBe(false)
    held.end()
    c.end()
    // b was freed before c: b's blocks are the older and go first
    cache.begin(range(400, 8), []).end()
    expect(cache.begin(b, []).cachedTokens).toBe(0)
  })
})
