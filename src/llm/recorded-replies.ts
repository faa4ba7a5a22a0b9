// A LanguageModel that answers from a task's recorded model calls (`model_call` events) and never from a server: what a
// verified replay (`bench --replay-from`) runs a task with. A request the record never made fails, naming it.
import * as Effect from "effect/Effect"
import type { ModelCallData } from "../trace/record.ts"
import { requestHash } from "./cache.ts"
import { ModelServerError } from "./errors.ts"
import { type GenerateResponse, LanguageModel, type LanguageModelShape, type ModelInfo } from "./language-model.ts"

/** Where a replay's failures say they came from (a ModelServerError's host). */
export const RECORDED_REPLIES_HOST = "recorded replies"

/**
 * A model that answers each request with the recorded reply of the same request (by its hash; the same request
 * twice gets its replies in recorded order) or, for calls recorded without a hash, the next recorded reply of the
 * same role. A recorded failure fails again with its message. A request with no recorded reply fails: the replay
 * went somewhere the record did not.
 */
export const recordedRepliesModel = (calls: ReadonlyArray<ModelCallData>, info: ModelInfo): LanguageModelShape => {
  const byRequest = new Map<string, Array<ModelCallData>>()
  const byRole = new Map<string, Array<ModelCallData>>()
  for (const call of calls) {
    const key = call.request
    const list = key === undefined ? byRole : byRequest
    const k = key ?? call.role
    list.set(k, [...(list.get(k) ?? []), call])
  }
  let answered = 0
  return LanguageModel.of({
    info,
    generate: (request) =>
      Effect.suspend(() => {
        const hash = requestHash(request)
        const call = byRequest.get(hash)?.shift() ?? byRole.get(request.role)?.shift()
        if (call === undefined)
          return Effect.fail(
            new ModelServerError({
              host: RECORDED_REPLIES_HOST,
              detail: `the record has no reply for this ${request.role} request (call ${answered + 1} of the replay; ${calls.length} recorded): the replay asked what the recorded run did not`
            })
          )
        answered++
        if (!call.ok)
          return Effect.fail(
            new ModelServerError({
              host: RECORDED_REPLIES_HOST,
              detail: call.error ?? "the recorded call failed",
              // the recorded failure was the reply's, not a dead server's: the task goes on as it did
              unparsedToolCall: true
            })
          )
        return Effect.succeed<GenerateResponse>({
          text: call.reply ?? "",
          ...(call.thinking === undefined ? {} : { thinking: call.thinking }),
          ...(call.toolCalls === undefined ? {} : { toolCalls: call.toolCalls }),
          usage: { promptTokens: call.promptTokens, completionTokens: call.completionTokens },
          model: call.model,
          durationMs: 0,
          ...(call.cached ? { cached: true } : {})
        })
      })
  })
}
