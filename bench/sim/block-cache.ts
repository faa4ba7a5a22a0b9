// A model of vLLM's and SGLang's automatic prefix caching: the KV cache is a pool of fixed-size blocks, a full block is
// named by the hash of its tokens and of every block before it, and a request reuses the longest run of its prompt's
// blocks the pool still holds; blocks no request holds stay cached until the least recently freed is evicted.

/** The pool's size and GPU costs. */
export interface BlockCacheOptions {
  /** Tokens a block holds (vLLM's `--block-size`, 16 by default). */
  readonly blockTokens: number
  /**
   * The KV memory budget in tokens (vLLM: what `--gpu-memory-utilization` leaves after the weights; 45,056 tokens is an
   * 8B model with grouped-query attention, 128 KiB a token, in the 5.5 GiB a 24 GB GPU leaves at 0.9).
   */
  readonly budgetTokens: number
  readonly prefillMsPerToken: number
  readonly decodeMsPerToken: number
}

export const blockCacheDefaults: BlockCacheOptions = {
  blockTokens: 16,
  budgetTokens: 45_056,
  prefillMsPerToken: 0.25,
  decodeMsPerToken: 20
}

/** What one request costs, known when it starts; `end` gives its blocks back (cached, evictable). */
export interface BlockRequest {
  readonly cachedTokens: number
  readonly uncachedTokens: number
  readonly end: () => void
}

/** A block's name: its tokens and its parent's name, as vLLM chains block hashes. */
const hashBlock = (parent: string, tokens: ReadonlyArray<number>): string => {
  let a = 0x811c9dc5
  let b = 0x01000193
  for (const t of tokens) {
    a = Math.imul(a ^ t, 0x01000193) >>> 0
    b = Math.imul(b ^ (t + 0x9e3779b9), 0x85ebca6b) >>> 0
  }
  return `${parent.length > 24 ? parent.slice(-12) : parent}|${a.toString(36)}${b.toString(36)}`
}

/**
 * A block pool of `budgetTokens / blockTokens` blocks. A request needs a block for every `blockTokens` of its prompt and
 * reply; the full blocks of its prompt that the pool holds (in use by another request or cached) are shared, the rest are
 * new, taken from never-used blocks and then by evicting the least recently freed cached block. A request that does not
 * fit waits (`fits` is false); one larger than the whole pool is let in alone. The prompt's full blocks are named (found
 * by later requests) when the request starts, the reply's when it ends; a request's blocks are freed last block first,
 * so that a prefix outlives its tails (vLLM frees them in reverse order). A prompt the pool holds whole still computes
 * its last token.
 */
export const makeBlockCache = (options: BlockCacheOptions = blockCacheDefaults) => {
  if (!(options.blockTokens >= 1 && options.budgetTokens >= options.blockTokens))
    throw new RangeError(`a block cache needs a budget of at least one block (got ${options.budgetTokens} tokens)`)
  const capacity = Math.floor(options.budgetTokens / options.blockTokens)
  /** Named blocks: requests holding each. */
  const named = new Map<string, { refs: number }>()
  /** Named blocks no request holds, least recently freed first (a Map keeps insertion order). */
  const evictable = new Map<string, true>()
  /** Blocks taken: named ones (held or cached) and the unnamed tails of requests in flight. */
  let taken = 0
  let inFlight = 0

  const names = (tokens: ReadonlyArray<number>): Array<string> => {
    const out: Array<string> = []
    let parent = ""
    for (let i = 0; i + options.blockTokens <= tokens.length; i += options.blockTokens) {
      parent = hashBlock(parent, tokens.slice(i, i + options.blockTokens))
      out.push(parent)
    }
    return out
  }
  const hits = (blocks: ReadonlyArray<string>): number => {
    let n = 0
    while (n < blocks.length && named.has(blocks[n]!)) n++
    return n
  }
  const blocksFor = (tokens: number) => Math.ceil(tokens / options.blockTokens)
  /** Blocks a request would add to the pool, and the cached ones it would keep from eviction. */
  const need = (prompt: ReadonlyArray<number>, output: ReadonlyArray<number>) => {
    const blocks = names(prompt)
    const hit = hits(blocks)
    const pinned = blocks.slice(0, hit).filter((b) => evictable.has(b)).length
    return { blocks, hit, fresh: blocksFor(prompt.length + output.length) - hit, pinned }
  }
  /** Whether the request can start now: its new blocks fit in what is free or evictable. */
  const fits = (prompt: ReadonlyArray<number>, output: ReadonlyArray<number>): boolean => {
    const { fresh, pinned } = need(prompt, output)
    return inFlight === 0 || fresh <= capacity - taken + evictable.size - pinned
  }
  const take = (n: number) => {
    for (let i = 0; i < n; i++) {
      if (taken >= capacity) {
        const oldest = evictable.keys().next()
        if (oldest.done) {
          // let in over the budget (a request larger than the pool, alone)
          taken++
          continue
        }
        evictable.delete(oldest.value)
        named.delete(oldest.value)
        taken--
      }
      taken++
    }
  }
  const begin = (prompt: ReadonlyArray<number>, output: ReadonlyArray<number>): BlockRequest => {
    const { blocks, hit, fresh } = need(prompt, output)
    const held: Array<string> = []
    for (const b of blocks.slice(0, hit)) {
      const entry = named.get(b)!
      if (entry.refs++ === 0) evictable.delete(b)
      held.push(b)
    }
    take(fresh)
    let unnamed = fresh
    // the prompt's full blocks are computed now: later requests find them
    for (const b of blocks.slice(hit)) {
      if (named.has(b)) continue
      named.set(b, { refs: 1 })
      held.push(b)
      unnamed--
    }
    inFlight++
    const shared = hit * options.blockTokens
    const cachedTokens = prompt.length > 0 && shared >= prompt.length ? prompt.length - 1 : shared
    return {
      cachedTokens,
      uncachedTokens: prompt.length - cachedTokens,
      end: () => {
        inFlight--
        // the reply's full blocks (those past the prompt's) are named too
        const whole = names([...prompt, ...output])
        for (const b of whole.slice(blocks.length)) {
          if (named.has(b) || unnamed === 0) continue
          named.set(b, { refs: 1 })
          held.push(b)
          unnamed--
        }
        taken -= unnamed
        for (const b of held.reverse()) {
          const entry = named.get(b)
          if (entry === undefined) continue
          if (--entry.refs === 0) evictable.set(b, true)
        }
      }
    }
  }
  return {
    fits,
    begin,
    options,
    capacity,
    /** Blocks taken now (held or cached). */
    taken: () => taken
  }
}

export type BlockCache = ReturnType<typeof makeBlockCache>
