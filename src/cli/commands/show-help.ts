// The help text and options table of `smurfs show`, light enough to answer --help before the command loads.
import type { ParseArgsOptionsConfig } from "node:util"

const HELP = `usage: smurfs show <run dir> <task id> [options]
       smurfs show <trajectory.json> [options]

Print a recorded trajectory as \`smurfs run\` showed it live: the query, the plan, each subtask's
steps, tool calls and their results, the verifier's verdicts, backtracks and the answer, then the
judges' labels (from \`smurfs eval\`) with their reasons. A run directory's task
is found under tasks/<method>/<group>/<task id>.json; a trajectory file is what \`smurfs run --json\`
prints.

options:
  --method <m>      the task's methods when the run has several, e.g. smurfs,react (default: every
                    method that has it); several are shown side by side in the --html page
  --group <g>       the task's group when several groups have the id
  --full            show tool results, thoughts and answers whole (the view cuts them to 160 characters)
  --json            print the trajectories as JSON instead ({"tasks": [{label, method, query, finishType,
                    finalAnswer, totals, labels, events}]}, one per method shown)
  --html <file>     also write one self-contained HTML page: the judges' labels and reasons, each step
                    collapsible with its whole tool response and (for runs made with --full-trace)
                    the prompt the model saw, one column per method
  -h, --help        show this help

exit codes: 0 shown, 2 bad usage, 3 no such run directory, task or trajectory file`

/** The options of `smurfs show`, in node:util parseArgs' shape. */
const OPTIONS = {
  method: { type: "string" },
  group: { type: "string" },
  full: { type: "boolean" },
  json: { type: "boolean" },
  html: { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "show", help: HELP, options: OPTIONS, positionals: true } as const
