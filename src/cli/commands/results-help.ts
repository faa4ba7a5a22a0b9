// The help text and options table of `smurfs results`, light enough to answer --help before the command loads.
import type { ParseArgsOptionsConfig } from "node:util"
import { LABEL_FILTERS } from "../../../bench/report/results.ts"

const HELP = `usage: smurfs results <run dir> [--method m] [--group g] [--label l] [--judge spec] [--json]

List every task of a run, one per row: method, group, task id (and the agent run, with
\`smurfs bench --runs N\`: one row per run), the label of each judge run (S Solved, U Unsolved,
? Unsure; "-" not judged yet, "error" the model server failed it), calls (model/tool), tokens
(prompt + completion), wall seconds, tool calls nothing recorded or simulated (misses), and the
judge's reason (of the first run that did not say Solved). The run directory is one made by
\`smurfs bench\` and judged with \`smurfs eval\` (or the --out folder of \`smurfs eval\`).
\`smurfs show <run dir> <task id>\` prints a task's trajectory.

options:
  --method <m>      only these methods (comma list, or repeat the flag)
  --group <g>       only these groups
  --label <l>       only tasks any judge run labelled so (comma list):
                    ${LABEL_FILTERS.join(", ")}
  --judge <spec>    only this judge's labels (default: every judge found)
  --json            print the tasks as JSON (every label with its full reason)
  -h, --help        show this help

exit codes: 0 shown (also when no task matches), 2 bad usage, 3 bad input (not a run directory, a
label file that does not validate)`

/** The options of `smurfs results`, in node:util parseArgs' shape. */
const OPTIONS = {
  method: { type: "string", multiple: true },
  group: { type: "string", multiple: true },
  label: { type: "string", multiple: true },
  judge: { type: "string" },
  json: { type: "boolean" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "results", help: HELP, options: OPTIONS, positionals: true } as const
