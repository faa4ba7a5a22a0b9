// The one edge between a command's Effect program and the process: SIGINT/SIGTERM interrupt it, and its outcome becomes an exit code.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { type Failure, isFailure } from "../failure.ts"
import { redactText } from "../trace/redact.ts"
import { ExitCode, exitCodeOf } from "./exit-codes.ts"

/** How one command meets the process. */
export interface Edge<E> {
  /** The command's name, as its messages start: "smurfs <command>: ...". */
  readonly command: string
  /** Says that Ctrl-C or SIGTERM ended the run, and what is kept (default: "smurfs <command>: interrupted"). */
  readonly interrupted?: (() => void) | undefined
  /** The code an interruption ends with (130; a worker stopped with Ctrl-C stopped cleanly: 0). */
  readonly interruptedCode?: number | undefined
  /** A line under an expected failure's message (how to resume, what to check). */
  readonly hint?: ((error: E) => string | undefined) | undefined
  /** Other sources of an interruption (readline's own Ctrl-C): given `interrupt`, returns how to stop listening. */
  readonly listen?: ((interrupt: () => void) => () => void) | undefined
  /** Where messages go (stderr). */
  readonly write?: ((line: string) => void) | undefined
}

const SIGNALS = ["SIGINT", "SIGTERM"] as const

/** The environment variable that makes a bug's report carry the whole stack. */
export const DEBUG_ENV = "SMURFS_DEBUG"

/**
 * Run a command's program once, as `NodeRuntime.runMain` of @effect/platform-node would (signals
 * interrupt it, the exit becomes a code), but resolving with the code instead of ending the process:
 * `main()` and the tests read it, and the process ends when its output is flushed. The handlers are
 * installed before the first await, so a signal held while the command loaded (early-signals.ts)
 * reaches the program as an interruption.
 */
export const runProgram = async <E extends Failure>(
  program: Effect.Effect<number, E>,
  edge: Edge<E>
): Promise<number> => {
  const controller = new AbortController()
  const interrupt = () => controller.abort()
  for (const s of SIGNALS) process.on(s, interrupt)
  const unlisten = edge.listen?.(interrupt)
  try {
    return exitCodeOfExit(await Effect.runPromiseExit(program, { signal: controller.signal }), edge)
  } finally {
    for (const s of SIGNALS) process.off(s, interrupt)
    unlisten?.()
  }
}

/**
 * The exit code of a program's exit, with what the user reads: the code it succeeded with; 130 and the
 * command's "interrupted" line; an expected failure's message (and hint) with the code of its kind;
 * anything else is a bug (`bugReport`), exit 1.
 */
export const exitCodeOfExit = <E>(exit: Exit.Exit<number, E>, edge: Edge<E>): number => {
  const write = edge.write ?? ((line: string) => console.error(line))
  if (Exit.isSuccess(exit)) return exit.value
  if (Cause.hasInterruptsOnly(exit.cause)) {
    if (edge.interrupted) edge.interrupted()
    else write(`smurfs ${edge.command}: interrupted`)
    return edge.interruptedCode ?? ExitCode.Interrupted
  }
  return reportFailure(Cause.squash(exit.cause), edge, exit.cause)
}

/** Say what `error` was and return its exit code; a bug gets the bug report. */
export const reportFailure = <E>(error: unknown, edge: Edge<E>, cause?: Cause.Cause<unknown>): number => {
  const write = edge.write ?? ((line: string) => console.error(line))
  if (!isFailure(error)) {
    write(redactText(bugReport(edge.command, error, cause)))
    return ExitCode.Failure
  }
  write(redactText(`smurfs ${edge.command}: ${error.message}`))
  const hint = edge.hint?.(error as E)
  if (hint) write(redactText(hint))
  return exitCodeOf(error)
}

/**
 * What a bug says: the error, the first frame of its stack (the whole stack with SMURFS_DEBUG=1), and
 * how to report it. It never reads "model unavailable" or any advice meant for an expected failure.
 */
export const bugReport = (
  command: string,
  error: unknown,
  cause?: Cause.Cause<unknown>,
  env: NodeJS.ProcessEnv = process.env
): string => {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  const debug = env[DEBUG_ENV] !== undefined && env[DEBUG_ENV] !== "" && env[DEBUG_ENV] !== "0"
  const stack =
    error instanceof Error ? (error.stack ?? "").split("\n").filter((l) => l.trimStart().startsWith("at ")) : []
  const where = debug ? (cause ? Cause.pretty(cause) : stack.join("\n")) : (stack[0]?.trim() ?? "")
  return [
    `smurfs ${command}: unexpected error: ${message}`,
    ...(where ? [where] : []),
    `This is a bug in smurfs, not a problem with your setup; please report it with the command you ran and this message` +
      (debug ? "." : ` (run it again with ${DEBUG_ENV}=1 for the whole stack).`)
  ].join("\n")
}
