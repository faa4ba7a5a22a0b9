// A seed per attempt: a request sent again with the same prompt (a retry loop resending it, each try of CoT@n)
// gets another seed than the sends before it, so that sampling can give another reply; or no seed at all.
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type GenerateRequest, LanguageModel } from "./language-model.ts"
import { MODEL_DEFAULTS } from "./model-options.ts"

/** How a run seeds its requests: from `base`, plus the number of earlier sends of the same prompt; or none (null). */
export interface AttemptSeeds {
  /** The first send's seed; null sends no seed (the server samples freshly each time, as the references ran). */
  readonly base: number | null
}

/**
 * The first seed of a run's requests: the user's seed, else under the `reference` profile none (the references send
 * none, and their retries rely on sampling anew), else MODEL_DEFAULTS.seed. Each later send of the same prompt adds one.
 */
export const seedBase = (seed: number | undefined, reference: boolean): number | null =>
  seed ?? (reference ? null : MODEL_DEFAULTS.seed)

// prompts remembered at once; a prompt forgotten and sent again starts from `base` again
export const REMEMBERED = 100_000

/**
 * The sends of each prompt, the least recently sent forgotten past `max`: a Map in order of last send. (An LRUCache
 * of 100,000 entries allocates its arrays whole when made, about a millisecond of CPU and a megabyte of garbage, and
 * `solve` makes one per task.)
 */
export const makeSendCounts = (max = REMEMBERED) => {
  const sent = new Map<string, number>()
  return {
    /** Counts a send of `key`: how many sends of it came before. */
    next: (key: string): number => {
      const n = sent.get(key) ?? 0
      if (n > 0) sent.delete(key)
      sent.set(key, n + 1)
      if (sent.size > max) sent.delete(sent.keys().next().value!)
      return n
    }
  }
}

/**
 * What makes two requests the same attempt: role, messages as sent, reply shape, tools and options (the request's own
 * seed too: the agent runs of `bench --runs N` each carry theirs, and each counts its own attempts from it), but the
 * output limit: the reference Smurfs agents send the rest of the window, which moves by a token when a reply
 * calibrates the estimate, and their resend of the same prompt is still another attempt.
 */
const promptKey = (request: GenerateRequest): string => {
  const { timeoutMs: _timeout, maxTokens: _limit, ...options } = request.options ?? {}
  const messages = request.messages.map(({ values: _values, ...m }) => m)
  return createHash("sha256")
    .update(JSON.stringify([request.role, messages, request.format ?? null, request.tools ?? null, options]))
    .digest("base64url")
}

/**
 * The model with each request's seed set per attempt: the n-th send (from 0) of a prompt in this process
 * carries `seed + n`, where `seed` is the request's own or `base`; with `base` null a request that names
 * no seed is sent without one. Sits above the call cache, so a cached reply is the one of its own attempt.
 */
export const attemptSeedsLayer = (seeds: AttemptSeeds): Layer.Layer<LanguageModel, never, LanguageModel> =>
  Layer.effect(
    LanguageModel,
    Effect.gen(function* () {
      const inner = yield* LanguageModel
      const sent = makeSendCounts()
      return LanguageModel.of({
        ...inner,
        generate: (request) =>
          Effect.suspend(() => {
            const n = sent.next(promptKey(request))
            const own = request.options?.seed
            const seed = own === null ? null : own !== undefined ? own + n : seeds.base === null ? null : seeds.base + n
            return inner.generate({ ...request, options: { ...request.options, seed } })
          })
      })
    })
  )
