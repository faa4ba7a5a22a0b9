// `Effect.fn` for the agents' per-call functions: the same named span, without the stack traces it captures.
import * as Effect from "effect/Effect"

/**
 * `Effect.fn(name)` without stack traces: a span named `name` around each call, as `Effect.fn` makes,
 * but no Error captured for the call site and none for the span. Those name the same line on every call
 * and cost a capture each on every model call of an agent; a failure's cause still names the span.
 */
export const spanFn = (name: string): typeof Effect.fnUntraced =>
  ((body: never, ...pipeables: Array<never>) =>
    // biome-ignore lint/suspicious/noExplicitAny: forwarded as given; the signature is fnUntraced's own
    (Effect.fnUntraced as any)(
      body,
      ...pipeables,
      Effect.withSpan(name, undefined, { captureStackTrace: false })
    )) as never
