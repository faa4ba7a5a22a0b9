// Exit codes scripts can rely on.
export const ExitCode = {
  /** The command did what was asked. */
  Ok: 0,
  /** The command ran but the outcome is a failure (doctor found a problem, a task gave up with --strict). */
  Failure: 1,
  /** Bad usage: unknown command or flag, missing argument. */
  Usage: 2,
  /** Bad input: a missing or malformed file, an invalid model spec or tools path. */
  BadInput: 3,
  /** The model server is unreachable, lacks the model, or kept failing. */
  ModelUnavailable: 4,
  /** Interrupted (Ctrl-C); work done so far is kept. */
  Interrupted: 130
} as const
