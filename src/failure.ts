// What a failure means to the code above it: every error class says it itself, so no caller keeps a list of tag names.

/**
 * How an expected failure ends a command (the exit code is `src/cli/exit-codes.ts`' `exitCodeOf`):
 * - `usage`: the command line is wrong (an unknown flag, a missing argument);
 * - `bad-input`: something the user gave cannot be used (a file, a folder, a model spec, a settings file);
 * - `unavailable`: the model server (or the queue) cannot serve: it is down, lacks the model, stays
 *   overloaded, does not answer in time, or fails;
 * - `failed`: the work ran and failed otherwise (a malformed reply, a prompt too long, a used-up budget).
 * A failure with none of these (a defect, an unknown error) is a bug.
 */
export type FailureKind = "usage" | "bad-input" | "unavailable" | "failed"

/** An expected failure: an error that knows its kind and whose message says what to do. */
export interface Failure {
  readonly kind: FailureKind
  readonly message: string
}

const KINDS: ReadonlySet<unknown> = new Set<FailureKind>(["usage", "bad-input", "unavailable", "failed"])

/** True for an error that says its kind; anything else (a defect, a thrown TypeError) is a bug. */
export const isFailure = (u: unknown): u is Failure =>
  typeof u === "object" && u !== null && KINDS.has((u as { kind?: unknown }).kind)
