// A model of a server's prefix cache: N slots, each request takes the slot holding the longest common prefix
// with its prompt, and the GPU computes only the rest of the prompt (prefill) and the reply (decode).

/** How the modelled server caches and what its GPU work costs. */
export interface PrefixCacheOptions {
  /**
   * Cache slots (llama-server's `--parallel`, Ollama's `OLLAMA_NUM_PARALLEL`): each holds the tokens of
   * the last request it served, prompt and reply.
   */
  readonly slots: number
  /** GPU milliseconds per prompt token computed (prefill, batched): 0.25 ms is a 7-8B model on one consumer GPU. */
  readonly prefillMsPerToken: number
  /** GPU milliseconds per reply token (decode, one token at a time): 20 ms is the same model at 50 tokens/s. */
  readonly decodeMsPerToken: number
  /**
   * The share of a prompt a slot must hold for the request to take it (llama-server's
   * `--slot-prompt-similarity`, default 0.1); below it the request takes the least recently used slot
   * instead, so that an unrelated prompt does not evict a useful cache. 0 takes the longest prefix always.
   */
  readonly similarity: number
}

export const prefixCacheDefaults: PrefixCacheOptions = {
  slots: 4,
  prefillMsPerToken: 0.25,
  decodeMsPerToken: 20,
  similarity: 0.1
}

/** What serving one request cost. */
export interface ServedRequest {
  readonly slot: number
  /** Prompt tokens the slot already held. */
  readonly cachedTokens: number
  /** Prompt tokens the GPU computed. */
  readonly uncachedTokens: number
  readonly outputTokens: number
  readonly gpuMs: number
}

/** Totals over the requests served. */
export interface PrefixCacheTotals {
  requests: number
  promptTokens: number
  cachedTokens: number
  uncachedTokens: number
  outputTokens: number
  gpuMs: number
}

/** Totals before the first request (each cache model, and the modelled server, counts from these). */
export const emptyTotals = (): PrefixCacheTotals => ({
  requests: 0,
  promptTokens: 0,
  cachedTokens: 0,
  uncachedTokens: 0,
  outputTokens: 0,
  gpuMs: 0
})

/** Length of the common prefix of two token sequences. */
export const commonPrefixLength = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a[i] === b[i]) i++
  return i
}

/**
 * A prefix cache. Requests are served one at a time in the order they arrive (a slot is not held while
 * a reply is written, which is exact for one request in flight). The slot choice is llama-server's
 * (`get_available_slot`: the slot with the longest common prefix when it holds at least `similarity` of
 * the prompt, else the least recently used) and, with `similarity` 0, Ollama's runner's
 * (`findLongestCacheSlot`: the longest common prefix); ties go to the least recently used slot.
 * A prompt the slot holds whole still computes its last token, as both do, to have the next token's logits.
 */
export const makePrefixCache = (options: PrefixCacheOptions = prefixCacheDefaults) => {
  if (!Number.isInteger(options.slots) || options.slots < 1)
    throw new RangeError(`a prefix cache needs at least one slot (got ${options.slots})`)
  const slots = Array.from({ length: options.slots }, () => ({ tokens: [] as ReadonlyArray<number>, lastUsed: -1 }))
  const totals = emptyTotals()
  let clock = 0
  /** Slots serving a request now (`begin` without its `end`): a request in flight holds its slot. */
  const busy = new Set<number>()
  /**
   * The slot a prompt takes, and how many of its tokens that slot holds: among the slots no request holds, or the
   * one it names (llama-server's `id_slot`).
   */
  const choose = (prompt: ReadonlyArray<number>, pinned?: number): { slot: number; shared: number } => {
    if (pinned !== undefined) {
      if (busy.has(pinned)) throw new RangeError(`slot ${pinned} is serving a request: end it first`)
      return { slot: pinned, shared: commonPrefixLength(slots[pinned]!.tokens, prompt) }
    }
    const free = slots.map((_, i) => i).filter((i) => !busy.has(i))
    if (free.length === 0) throw new RangeError("every slot is serving a request: end one first")
    let best = free[0]!
    let shared = -1
    for (const i of free) {
      const n = commonPrefixLength(slots[i]!.tokens, prompt)
      if (n > shared || (n === shared && slots[i]!.lastUsed < slots[best]!.lastUsed)) {
        best = i
        shared = n
      }
    }
    if (prompt.length > 0 && shared / prompt.length >= options.similarity) return { slot: best, shared }
    // too little in common: the least recently used slot, which may still hold a shorter common prefix
    const lru = free.reduce((oldest, i) => (slots[i]!.lastUsed < slots[oldest]!.lastUsed ? i : oldest), free[0]!)
    return { slot: lru, shared: commonPrefixLength(slots[lru]!.tokens, prompt) }
  }
  /**
   * A request that starts now and holds its slot until `end` (several in flight at once, as a server with
   * `--parallel` slots serves them): what its prompt costs is known at once, its reply when it ends.
   */
  const begin = (prompt: ReadonlyArray<number>, pinned?: number) => {
    const chosen = choose(prompt, pinned)
    busy.add(chosen.slot)
    return {
      slot: chosen.slot,
      /** Prompt tokens the slot holds, known as the request starts. */
      cachedTokens: cachedOf(chosen.shared, prompt),
      end: (output: ReadonlyArray<number>): ServedRequest => {
        busy.delete(chosen.slot)
        return account(chosen, prompt, output)
      }
    }
  }
  /** A request served whole before the next one arrives (exact for one request in flight). */
  const serve = (prompt: ReadonlyArray<number>, output: ReadonlyArray<number>): ServedRequest =>
    account(choose(prompt), prompt, output)
  const cachedOf = (shared: number, prompt: ReadonlyArray<number>) =>
    prompt.length > 0 && shared >= prompt.length ? prompt.length - 1 : shared
  const account = (
    { slot, shared }: { slot: number; shared: number },
    prompt: ReadonlyArray<number>,
    output: ReadonlyArray<number>
  ): ServedRequest => {
    const cachedTokens = cachedOf(shared, prompt)
    const uncachedTokens = prompt.length - cachedTokens
    const gpuMs = uncachedTokens * options.prefillMsPerToken + output.length * options.decodeMsPerToken
    slots[slot] = { tokens: [...prompt, ...output], lastUsed: clock++ }
    totals.requests++
    totals.promptTokens += prompt.length
    totals.cachedTokens += cachedTokens
    totals.uncachedTokens += uncachedTokens
    totals.outputTokens += output.length
    totals.gpuMs += gpuMs
    return { slot, cachedTokens, uncachedTokens, outputTokens: output.length, gpuMs }
  }
  /** Whether a slot serves no request now (`slot` undefined: whether any does not). */
  const isFree = (slot?: number): boolean =>
    slot === undefined ? busy.size < options.slots : slot >= 0 && slot < options.slots && !busy.has(slot)
  return { serve, begin, choose, isFree, totals, options }
}

export type PrefixCache = ReturnType<typeof makePrefixCache>
