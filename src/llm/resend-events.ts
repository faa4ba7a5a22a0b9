// A request sent again on a new connection after a reset (bounded-fetch's resend) is a fault of the server: each one
// is a `model_call` event marked `retried`, so the task's record counts it in `totals.serverRetries`.
import * as Effect from "effect/Effect"
import { emit } from "../trace/events.ts"

/** The events of the resends of one call of `role` (the codes the resets came with). */
export const resendEvents = (role: string, codes: ReadonlyArray<string>): Effect.Effect<void> =>
  Effect.forEach(
    codes,
    (code, i) =>
      emit("model_call", {
        role,
        model: "",
        promptTokens: 0,
        completionTokens: 0,
        durationMs: 0,
        attempt: i + 1,
        ok: false,
        error: `the server reset the connection (${code}) before replying; the request was sent again on a new one`,
        retried: true
      }),
    { discard: true }
  )
