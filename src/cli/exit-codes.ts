// Exit codes scripts can rely on, and the one mapping from what a command failed with to its code.
import { type FailureKind, isFailure } from "../failure.ts"

export const ExitCode = {
  /** The command did what was asked. */
  Ok: 0,
  /** The command ran but the outcome is a failure (doctor found a problem, a task gave up with --strict), or a bug. */
  Failure: 1,
  /** Bad usage: unknown command or flag, missing argument. */
  Usage: 2,
  /** Bad input: a missing or malformed file, an invalid model spec or tools path. */
  BadInput: 3,
  /** The model server is unreachable, lacks the model, or kept failing; or a model or data file cannot be downloaded. */
  ModelUnavailable: 4,
  /** Interrupted (Ctrl-C); work done so far is kept. */
  Interrupted: 130
} as const

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/** Each kind of failure's exit code: a new kind does not compile until it has one. */
export const EXIT_CODE_OF_KIND: Readonly<Record<FailureKind, ExitCode>> = {
  usage: ExitCode.Usage,
  "bad-input": ExitCode.BadInput,
  unavailable: ExitCode.ModelUnavailable,
  failed: ExitCode.Failure
}

/**
 * The exit code for what a command failed with, read from the error itself (its `kind`): bad usage 2,
 * bad input 3, the model server or queue unavailable 4, any other expected failure 1. An error that
 * says no kind (a defect, a TypeError) is a bug: 1, never "model unavailable".
 */
export const exitCodeOf = (error: unknown): ExitCode =>
  isFailure(error) ? EXIT_CODE_OF_KIND[error.kind] : ExitCode.Failure

/** What each code means, for the README's table (checked against it by test/cli/exit-codes.test.ts). */
export const EXIT_CODE_TABLE: ReadonlyArray<{ readonly code: ExitCode; readonly meaning: string }> = [
  { code: ExitCode.Ok, meaning: "done" },
  {
    code: ExitCode.Failure,
    meaning:
      "the command ran but failed (a task gave up with `--strict`, tasks left undone, doctor's test reply failed), or a bug in smurfs (it says so)"
  },
  { code: ExitCode.Usage, meaning: "bad usage: an unknown command or flag, a missing or malformed value" },
  {
    code: ExitCode.BadInput,
    meaning:
      "bad input: a model spec, file, tools path, run directory or settings file that cannot be used, an `--out` that is a file"
  },
  {
    code: ExitCode.ModelUnavailable,
    meaning:
      "the model server (or the queue) is unavailable: unreachable, without the model, overloaded or timing out after retries; or a model or data download cannot be had (offline without it, its host unreachable, a corrupt file)"
  },
  { code: ExitCode.Interrupted, meaning: "interrupted (Ctrl-C or SIGTERM); work done so far is kept" }
]

/**
 * The codes each command's --help names on its "exit codes:" line (test/cli/exit-codes.test.ts checks
 * the help against this and spawns each command into its usage, bad-input, server-down and
 * interrupted codes). Any command ends with 1 on a bug.
 */
export const COMMAND_EXIT_CODES: Readonly<Record<string, ReadonlyArray<ExitCode>>> = {
  run: [0, 1, 2, 3, 4, 130],
  chat: [0, 2, 3, 130],
  tools: [0, 2, 3],
  "tools search": [0, 2, 3, 4],
  doctor: [0, 1, 2, 3, 4],
  bench: [0, 1, 2, 3, 4, 130],
  eval: [0, 1, 2, 3, 4, 130],
  compare: [0, 2, 3],
  view: [0, 2, 3],
  results: [0, 2, 3],
  show: [0, 2, 3],
  worker: [0, 2, 3, 4, 130],
  pull: [0, 2, 3, 4, 130],
  data: [0, 2, 3, 4, 130],
  completion: [0, 2]
}

/** The README's exit-code table, as Markdown. */
export const renderExitCodeTable = (): string =>
  ["| code | meaning |", "| --- | --- |", ...EXIT_CODE_TABLE.map((r) => `| ${r.code} | ${r.meaning} |`)].join("\n")
