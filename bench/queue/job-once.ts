// A worker runs each sending of a job (its id and nonce) once: the same sending again joins the run under way or gets
// the result it had, and one that any worker finished (a replay) is refused.
import { createHash } from "node:crypto"
import { LRUCache } from "lru-cache"

/** How long a finished sending's result is kept here to answer it again (Redis lost its acknowledgement). */
export const KEPT_RESULT_MS = 60 * 60 * 1000

/** How long Redis remembers that a sending was done, so that no worker runs a replay of it. */
export const DONE_MARK_MS = 7 * 24 * 60 * 60 * 1000

/** At most this much of finished results (as JSON text) is kept here. */
const KEPT_BYTES = 256 * 1024 * 1024

/**
 * One sending of a job: its id with its nonce, or (a job of a coordinator that sends no nonce) with a digest of its
 * data, so that a different job under a reused id is another sending.
 */
export const sendingOf = (jobId: string, nonce: string | undefined, data: unknown): string =>
  `${jobId}\n${nonce ?? createHash("sha256").update(JSON.stringify(data)).digest("hex")}`

/** The Redis key that marks a sending as done (a digest: ids hold any text). */
export const doneKeyOf = (prefix: string, sending: string): string =>
  `${prefix}:done:${createHash("sha256").update(sending).digest("hex")}`

/** How a sending was answered: run now, joined to its run under way here, or answered again with its kept result. */
export type Answered = "ran" | "joined" | "again"

export interface JobOnce<R> {
  /** Run `work` for `sending` unless this worker runs or ran it; a failed run is not kept (a retry runs again). */
  readonly run: (
    sending: string,
    work: () => Promise<R>
  ) => { readonly answered: Answered; readonly result: Promise<R> }
}

/** Runs under way and finished results, by sending; finished ones are kept for KEPT_RESULT_MS, within a size bound. */
export const jobOnce = <R extends object>(): JobOnce<R> => {
  const running = new Map<string, Promise<R>>()
  const finished = new LRUCache<string, R>({
    max: 10_000,
    ttl: KEPT_RESULT_MS,
    maxSize: KEPT_BYTES,
    sizeCalculation: (result) => Math.max(1, JSON.stringify(result).length)
  })
  return {
    run: (sending, work) => {
      const under = running.get(sending)
      if (under !== undefined) return { answered: "joined", result: under }
      const kept = finished.get(sending)
      if (kept !== undefined) return { answered: "again", result: Promise.resolve(kept) }
      const result = work()
      running.set(sending, result)
      result.then(
        (value) => {
          running.delete(sending)
          finished.set(sending, value)
        },
        () => running.delete(sending)
      )
      return { answered: "ran", result }
    }
  }
}
