// The help text and options table of `smurfs compare`, light enough to answer --help before the command loads.
import type { ParseArgsOptionsConfig } from "node:util"
import { DEFAULT_RESAMPLES, DEFAULT_SEED } from "../../../bench/report/stats.ts"

const HELP = `usage: smurfs compare <dir>... [--html <file>] [--judge <spec>] [--json] [--seed <n>] [--resamples <n>]
                      [--gpu-model <m>]

Print one table of every method and group in the given directories: judged/N (tasks labelled by
the judge of all the row's tasks), pass rate ± std over judge runs with its 95% interval (over the
judged tasks: an unjudged task is never counted as Unsolved), pass^k when tasks were run several
times, win rate against a reference over the tasks both sides have (with that N), model calls per
task and per solved task, wall time per task. Below the table: pass@k and pass^k, the paired
difference of every two rows of a group and judge on the tasks both have (95% interval, verdict,
McNemar's p, noise floor), cost per task and per solved task (model calls, prompt and completion
tokens, tool calls, wall time) with intervals, and the judges' agreement (Cohen's κ, Krippendorff's
α); docs/benchmark.md says how to read them. Labels of other judge texts (--stb) or profiles are
never mixed: each gets its own row, named in it. A win rate over tasks with fewer than K rounds, or
beside answered tasks with no round, is marked "incomplete". Below the table, every row with missing
work (unjudged tasks, missing judge runs and win rounds by task id, runs no judge has seen, tasks the
model server failed, tasks not run yet) is named with what to run. A directory is a run from
\`smurfs bench\` (judged with \`smurfs eval\`), a StableToolBench folder with
model_predictions_converted/, or ToolEval's results (pass_rate_results/, preference_results/), whose
published labels are shown as judge "ToolEval".

options:
  --html <file>     also write the report: one self-contained page (opens offline) with the table,
                    statistics, charts and every task to filter, search and sort, each opening its
                    transcripts (methods side by side, labels, reasons, win rounds); beside it,
                    <file name>-tasks/ holds each task's own page (as \`smurfs show --html\` writes),
                    which the task ids link to. \`smurfs view <dir>...\` serves the same on 127.0.0.1
  --judge <spec>    show only this judge's labels (default: every judge found)
  --allow-env-mismatch
                    set runs side by side whose tool calls were served by different environments
                    (another chain, recorded responses, cache, simulator or replay leniency), which
                    compare otherwise refuses; their rows are marked "(env≠)"
  --json            print the rows, the missing work and the statistics as JSON instead of the table
  --seed <n>        the bootstrap's seed: the same labels and seed give the same numbers
                    (default ${DEFAULT_SEED})
  --resamples <n>   bootstrap resamples, 100 to 100000 (default ${DEFAULT_RESAMPLES})
  --gpu-model <m>   add GPU seconds per task and per solved task on a modelled server, from each task's
                    recorded tokens: prefill=<time per prompt token>,decode=<time per reply token>, or
                    "default" (prefill=0.25ms,decode=20ms, the simulated server's); no prefix cache is
                    modelled, so this is an upper bound for a server that caches prompt prefixes
  -h, --help        show this help

Each pass rate shows the share of its tool calls that missed (nothing recorded or simulated) and that a
simulator answered, from the runs' environment ledger.

exit codes: 0 shown, 2 bad usage, 3 bad input (a directory that is not a run, no tasks, runs of different
tool environments without --allow-env-mismatch, an --html file that cannot be written)`

/** The options of `smurfs compare`, in node:util parseArgs' shape. */
const OPTIONS = {
  html: { type: "string" },
  judge: { type: "string" },
  "allow-env-mismatch": { type: "boolean" },
  json: { type: "boolean" },
  seed: { type: "string" },
  resamples: { type: "string" },
  "gpu-model": { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "compare", help: HELP, options: OPTIONS, positionals: true } as const
