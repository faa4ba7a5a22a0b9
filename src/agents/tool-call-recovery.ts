// Native tool calls that survive the server's own parse errors: Ollama answers HTTP 500 "error parsing
// tool call" when a model writes a call it cannot read. That is a bad reply, not a dead server: it is
// reflected back and retried, then the step falls back to JSON mode; it never ends a run.
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { type GenerateError, ModelServerError } from "../llm/errors.ts"
import { type GenerateRequest, type GenerateResponse, LanguageModel, type Message } from "../llm/language-model.ts"
import { callModel, MAX_REFLECTIONS, withOutputLimit } from "../llm/structured.ts"
import { renderTemplate } from "../text/prompt-template.ts"
import { emit, holdBack } from "../trace/events.ts"

/** The server's tool-call parse error (a bad reply, not a server failure), as the provider classified it. */
const unparsedToolCall = (e: GenerateError): e is ModelServerError =>
  e instanceof ModelServerError && e.unparsedToolCall === true

/**
 * A native tool-calling request. A tool-call parse error is reflected to the model (at most
 * `retries` times); then `fallback` (JSON mode) makes the step. Each parse error is one
 * `tool_call_parse` guardrail event, recovered when the step ended with a reply; they come before the
 * fallback's own guardrail events, in the order of the replies.
 */
export const callNative = <E = never>(
  request: GenerateRequest,
  fallback: (messages: ReadonlyArray<Message>) => Effect.Effect<GenerateResponse, GenerateError | E, LanguageModel>,
  retries = MAX_REFLECTIONS
): Effect.Effect<GenerateResponse, GenerateError | E, LanguageModel> => {
  const errors: Array<{ error: string; attempt: number }> = []
  const fallen = holdBack("guardrail")
  const attempts = Effect.gen(function* () {
    const model = yield* LanguageModel
    let messages = request.messages
    for (let attempt = 1; ; attempt++) {
      const result = yield* Effect.result(callModel(model.generate, { ...request, messages }, attempt))
      if (result._tag === "Success") {
        // a reply cut at the output limit is traced; without a call it is a reply without an action, which the
        // chain answers as it answers any (a reminder, or the next step as StableToolBench's code does)
        if (result.success.truncated)
          yield* emit("guardrail", {
            guardrail: "length",
            role: request.role,
            error: `the reply was cut at the output limit of ${withOutputLimit(request).options?.maxTokens} tokens${(result.success.toolCalls ?? []).length > 0 ? "" : " before it called a function"}`,
            attempt,
            recovered: (result.success.toolCalls ?? []).length > 0
          })
        return result.success
      }
      if (!unparsedToolCall(result.failure)) return yield* Effect.fail(result.failure)
      const error = result.failure.detail
      errors.push({ error, attempt })
      if (attempt > retries) return yield* fallen.run(fallback(messages))
      messages = [
        ...request.messages,
        { role: "reflection", content: renderTemplate("tool-call-parse-error", { error }).user }
      ]
    }
  })
  return attempts.pipe(
    // nearly every call has no parse error: nothing to walk then
    Effect.onExit((exit) =>
      errors.length === 0
        ? Effect.void
        : Effect.andThen(
            Effect.forEach(
              errors,
              (e) =>
                emit("guardrail", {
                  guardrail: "tool_call_parse",
                  role: request.role,
                  error: e.error,
                  attempt: e.attempt,
                  recovered: Exit.isSuccess(exit)
                }),
              {
                discard: true
              }
            ),
            fallen.release
          )
    )
  )
}
