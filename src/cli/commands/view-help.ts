// The help text and options table of `smurfs view`, light enough to answer --help before the command loads.
import type { ParseArgsOptionsConfig } from "node:util"

const HELP = `usage: smurfs view <dir>... [--port <n>] [--judge <spec>]

Serve the comparison report of the given directories (as \`smurfs compare --html\` writes it: the runs'
table, statistics, charts and every task with filters, search, sorting and its transcripts, methods
side by side) on http://127.0.0.1:<port>/ and print the address; open it in a browser. Only this
machine can reach it. The pages are built once, when it starts; Ctrl-C stops it.
A directory is a run from \`smurfs bench\` (judged with \`smurfs eval\`), a StableToolBench folder with
model_predictions_converted/, or ToolEval's results, as for \`smurfs compare\`.

options:
  --port <n>        the port to listen on (default 8765; 0: any free port)
  --judge <spec>    show only this judge's labels (default: every judge found)
  -h, --help        show this help

exit codes: 0 stopped with Ctrl-C, 2 bad usage, 3 bad input (a directory that is not a run, no tasks,
the port in use)`

/** The options of `smurfs view`, in node:util parseArgs' shape. */
const OPTIONS = {
  port: { type: "string" },
  judge: { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "view", help: HELP, options: OPTIONS, positionals: true } as const
