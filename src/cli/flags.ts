// A command's flags as typed, without its settings: light enough for --help and usage errors before the command loads.
import { type ParseArgsOptionsConfig, parseArgs } from "node:util"
import { closest } from "./did-you-mean.ts"
import { ExitCode } from "./exit-codes.ts"

/** A command's options, in the shape node:util's parseArgs takes (so an option is one line in its table). */
export interface CommandSpec<O extends ParseArgsOptionsConfig> {
  /** The subcommand's name, as typed after `smurfs`. */
  readonly name: string
  /** The text `smurfs <name> --help` and `smurfs help <name>` print (and the command reference, docs/cli.md, repeats). */
  readonly help: string
  readonly options: O
  /** Whether the command takes positional arguments (a query, run directories). */
  readonly positionals?: boolean | undefined
}

/** Bad usage: an unknown flag, a missing or malformed value. Exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError"
  readonly kind = "usage" as const
}

/** The hint under every usage error. */
export const usageHint = (command: string): string => `hint: \`smurfs help ${command}\` lists its options`

/** The flags of a table, as typed: `--name` and `-x`. */
const flagNames = (options: ParseArgsOptionsConfig): Array<string> => Object.keys(options).map((n) => `--${n}`)

const unknownOption = (spec: CommandSpec<ParseArgsOptionsConfig>, raw: string): UsageError => {
  const long = raw.startsWith("--") ? raw : undefined
  const suggestion = long ? closest(long, flagNames(spec.options)) : undefined
  return new UsageError(`unknown option ${raw}${suggestion ? ` (did you mean ${suggestion}?)` : ""}`)
}

/**
 * The flags given on the command line (no environment, settings file or default yet) and the positionals, or a
 * UsageError: an unknown flag (with a "did you mean"), a missing value, a positional where the command takes none.
 * With `--help`, the rest goes unchecked.
 */
export const readFlags = (
  spec: CommandSpec<ParseArgsOptionsConfig>,
  argv: ReadonlyArray<string>
): { values: Record<string, unknown>; positionals: Array<string> } => {
  const options: ParseArgsOptionsConfig = { help: { type: "boolean", short: "h" }, ...spec.options }
  // parseCommand applies defaults after the environment and the config file, so parseArgs must not fill them in.
  const bare = Object.fromEntries(Object.entries(options).map(([name, { default: _default, ...rest }]) => [name, rest]))
  const loose = parseArgs({ args: [...argv], options: bare, strict: false, allowPositionals: true, tokens: true })
  for (const token of loose.tokens)
    if (token.kind === "option" && !(token.name in options)) throw unknownOption(spec, token.rawName)
  let strict
  try {
    strict = parseArgs({ args: [...argv], options: bare, strict: true, allowPositionals: true })
  } catch (e) {
    throw new UsageError(
      (e as Error).message
        .replace(/\. To specify a positional argument.*$/s, "")
        .replace(/^Option '(.*?)' argument missing$/, "$1: the value is missing")
    )
  }
  const values: Record<string, unknown> = { ...strict.values }
  if (values["help"] !== true && !spec.positionals && strict.positionals.length > 0) {
    const first = strict.positionals[0]!
    throw new UsageError(
      `unexpected argument "${first}"${first.startsWith("-") ? "" : "; this command takes only --options"}`
    )
  }
  return { values, positionals: strict.positionals }
}

/**
 * What `smurfs <command> <argv>` comes to before the command's module loads: its help (exit 0), a usage error
 * (exit 2, the same lines runCommand prints), or undefined when the command has work to do.
 */
export const answerBeforeLoading = (
  spec: CommandSpec<ParseArgsOptionsConfig>,
  argv: ReadonlyArray<string>
): number | undefined => {
  try {
    if (readFlags(spec, argv).values["help"] !== true) return undefined
    console.log(spec.help)
    return ExitCode.Ok
  } catch (e) {
    if (!(e instanceof UsageError)) throw e
    console.error(`smurfs ${spec.name}: ${e.message}\n${usageHint(spec.name)}`)
    return ExitCode.Usage
  }
}
