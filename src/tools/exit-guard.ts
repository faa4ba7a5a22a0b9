// A tool that calls process.exit must not end the process silently: while the guard is on, such a call
// fails the running tool's call with its name instead.
import * as Effect from "effect/Effect"

/** Names of the tool calls in flight (a tool may run more than once at a time, so a count per name). */
const running = new Map<string, number>()

/** The error thrown in place of process.exit while a tool runs; the safe call turns it into a failed result. */
export class ToolCalledExit extends Error {
  readonly tools: ReadonlyArray<string>
  readonly code: unknown
  constructor(tools: ReadonlyArray<string>, code: unknown) {
    super(
      `${tools.length === 1 ? `tool "${tools[0]}"` : `one of the tools ${tools.map((t) => `"${t}"`).join(", ")}`} called process.exit(${String(code ?? "")}); ` +
        "the call was stopped and the process kept running. A tool should return or throw an error, never end the process."
    )
    this.name = "ToolCalledExit"
    this.tools = tools
    this.code = code
  }
}

/** Mark a call of tool `name` as running for the exit guard; the returned function marks it ended. */
export const enterToolCall = (name: string): (() => void) => {
  running.set(name, (running.get(name) ?? 0) + 1)
  return () => {
    const n = (running.get(name) ?? 1) - 1
    if (n <= 0) running.delete(name)
    else running.set(name, n)
  }
}

/** Mark `effect` as a call of tool `name` for the exit guard while it runs. */
export const trackToolCall = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => enterToolCall(name)),
    () => effect,
    (exit) => Effect.sync(exit)
  )

/**
 * Replace process.exit for as long as the returned function is not called: while a tool call is in flight
 * it throws {@link ToolCalledExit} naming the tool; otherwise the real exit runs. Used by the CLI, which
 * loads user tool modules into its own process.
 */
export const containToolExits = (): (() => void) => {
  const realExit = process.exit
  const guarded = ((code?: number | string | null) => {
    if (running.size > 0) throw new ToolCalledExit([...running.keys()], code)
    return realExit.call(process, code)
  }) as typeof process.exit
  process.exit = guarded
  return () => {
    if (process.exit === guarded) process.exit = realExit
  }
}
