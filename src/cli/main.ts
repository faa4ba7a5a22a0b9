// The `smurfs` command line: dispatches to one module per subcommand.

import type { ParseArgsOptionsConfig } from "node:util"

import { closest } from "./did-you-mean.ts"
import { holdSignals } from "./early-signals.ts"
import { ExitCode } from "./exit-codes.ts"
import { answerBeforeLoading, type CommandSpec } from "./flags.ts"

/** A command's module: its body, and (for help, completion and the settings file's check) its options table. */
export interface CommandModule {
  readonly run: (argv: string[]) => Promise<number>
  readonly COMMAND?: { readonly name: string; readonly options: Readonly<Record<string, unknown>> } | undefined
}

/**
 * A subcommand: its summary, its module, and (for a command whose module is slow to load) a light module with its
 * help and options table, which answers `--help` and bad usage without loading the command.
 */
interface CommandEntry {
  readonly summary: string
  readonly load: () => Promise<CommandModule>
  readonly spec?: (() => Promise<{ readonly COMMAND: CommandSpec<ParseArgsOptionsConfig> }>) | undefined
}

const commands: Record<string, CommandEntry> = {
  run: {
    summary: "solve one query with the Smurfs agents and print each step",
    load: () => import("./commands/run.ts"),
    spec: () => import("./commands/run-help.ts")
  },
  chat: {
    summary: "talk with the Smurfs agents: several turns, remembered, with your tools",
    load: () => import("./commands/chat.ts"),
    spec: () => import("./commands/chat-help.ts")
  },
  tools: { summary: "list the tools of a library", load: () => import("./commands/tools.ts") },
  doctor: {
    summary: "check that the model server is reachable and the model usable",
    load: () => import("./commands/doctor.ts"),
    spec: () => import("./commands/doctor-help.ts")
  },
  bench: {
    summary: "run methods on ToolBench tasks into a resumable run directory",
    load: () => import("./commands/bench.ts"),
    spec: () => import("./commands/bench-help.ts")
  },
  eval: {
    summary: "judge a run's pass rate (and win rate against a reference)",
    load: () => import("./commands/eval.ts"),
    spec: () => import("./commands/eval-help.ts")
  },
  compare: {
    summary: "set runs side by side in one table (and an HTML report)",
    load: () => import("./commands/compare.ts"),
    spec: () => import("./commands/compare-help.ts")
  },
  view: {
    summary: "serve the comparison report of runs on 127.0.0.1 to explore in a browser",
    load: () => import("./commands/view.ts"),
    spec: () => import("./commands/view-help.ts")
  },
  results: {
    summary: "list a run's tasks with their labels, the judge's reasons and costs",
    load: () => import("./commands/results.ts"),
    spec: () => import("./commands/results-help.ts")
  },
  show: {
    summary: "print a recorded trajectory as the live view showed it (or one HTML page)",
    load: () => import("./commands/show.ts"),
    spec: () => import("./commands/show-help.ts")
  },
  pull: {
    summary: "fetch a model for the embedded engine (--model llama:...) into the model cache",
    load: () => import("./commands/pull.ts"),
    spec: () => import("./commands/pull-help.ts")
  },
  data: {
    summary: "fetch benchmark data: smurfs data pull stabletoolbench|tau2",
    load: () => import("./commands/data.ts"),
    spec: () => import("./commands/data-help.ts")
  },
  worker: {
    summary: "run bench tasks from a Redis queue (smurfs bench --queue) on this machine",
    load: () => import("./commands/worker.ts"),
    spec: () => import("./commands/worker-help.ts")
  },
  completion: {
    summary: "print a shell completion script (bash, zsh or fish), made from the commands' options",
    load: () => import("./commands/completion.ts")
  }
}

/** The subcommands with their one-line summaries and modules, in the order `smurfs help` lists them. */
export const commandTable = (): ReadonlyArray<{ name: string } & CommandEntry> =>
  Object.entries(commands).map(([name, c]) => ({ name, ...c }))

/** The subcommands, in the order `smurfs help` lists them. */
export const commandNames = (): Array<string> => Object.keys(commands)

export const usage = (): string =>
  [
    "smurfs: multi-agent tool planning with local language models",
    "",
    "usage: smurfs <command> [options]   (smurfs help <command> for its options)",
    "",
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`)
  ].join("\n")

export const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  const [name, ...rest] = argv
  if (name === undefined || name === "--help" || name === "-h" || (name === "help" && rest.length === 0)) {
    console.log(usage())
    return name === undefined ? ExitCode.Usage : ExitCode.Ok
  }
  if (name === "--version" || name === "-v") {
    const { version } = await import("../version.ts")
    console.log(version)
    return ExitCode.Ok
  }
  // `smurfs help <command>` is `smurfs <command> --help`
  const [commandName, commandArgs] = name === "help" ? [rest[0]!, ["--help"]] : [name, rest]
  const command = commands[commandName]
  if (!command) {
    const suggestion = closest(commandName, Object.keys(commands))
    console.error(
      `smurfs: unknown command "${commandName}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}\n${"hint: `smurfs help` lists the commands"}`
    )
    return ExitCode.Usage
  }
  let module: CommandModule
  // a Ctrl-C or SIGTERM while the command loads reaches it once it listens (it installs its handlers before its first await)
  const signals = holdSignals()
  try {
    const answered = command.spec && answerBeforeLoading((await command.spec()).COMMAND, commandArgs)
    if (answered !== undefined) {
      signals.release()
      return answered
    }
    module = await command.load()
  } catch (e) {
    signals.release()
    console.error(`smurfs: the "${commandName}" command is not available in this build (${(e as Error).message})`)
    return ExitCode.Failure
  }
  const running = module.run(commandArgs)
  signals.release()
  return running
}

/**
 * A reader that stops early (`smurfs run ... | head`) closes the pipe: that is the reader's choice,
 * not a failure, so the process ends quietly with 0 instead of an EPIPE stack trace.
 */
export const exitQuietlyOnClosedPipe = (stream: NodeJS.WriteStream = process.stdout): void => {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(ExitCode.Ok)
    throw error
  })
}
