// `smurfs compare`: set runs (and ToolEval's published results) side by side in one table, optionally an HTML report.
import type { ParseArgsOptionsConfig } from "node:util"
import { slug } from "../../../bench/eval/labels.ts"
import { collectRows } from "../../../bench/report/collect.ts"
import { guardLines } from "../../../bench/report/guards.ts"
import { renderHtml } from "../../../bench/report/html.ts"
import { missingWork } from "../../../bench/report/missing.ts"
import { renderTable } from "../../../bench/report/table.ts"
import { plural } from "../../plural.ts"
import { ExitCode } from "../exit-codes.ts"
import { type ParsedCommand, runCommand, UsageError } from "../options.ts"
import { writeOutputFile } from "../output-file.ts"
import { reportFailure } from "../run-program.ts"
import { pagesFolder, writeTaskPages } from "../task-pages.ts"

const HELP = `usage: smurfs compare <dir>... [--html <file>] [--judge <spec>] [--json]

Print one table of every method and group in the given directories: judged/N (tasks labelled by
the judge of all the row's tasks), pass rate ± std over judge runs (over the judged tasks: an
unjudged task is never counted as Unsolved), win rate against a reference over the tasks both
sides have (with that N), mean model calls, prompt and completion tokens, tool calls and wall time
per task. Labels of other judge texts (--stb) or profiles are never mixed: each gets its own row,
named in it. A win rate over tasks with fewer than K rounds, or beside answered tasks with no round,
is marked "incomplete". Below the table, every row with missing work (unjudged tasks, missing judge
runs and win rounds by task id, runs no judge has seen, tasks the model server failed, tasks not run
yet) is named with what to run. A directory is a run from \`smurfs bench\` (judged with \`smurfs eval\`),
a StableToolBench folder with model_predictions_converted/, or ToolEval's results
(pass_rate_results/, preference_results/), whose published labels are shown as judge "ToolEval".

options:
  --html <file>     also write a self-contained HTML report with charts and a list of every task
                    (its labels and the judge's reason); beside it, <file name>-tasks/ holds one
                    trajectory page per task of each run (as \`smurfs show --html\` writes, every
                    method side by side), which the task ids link to: keep the folder with the report
  --judge <spec>    show only this judge's labels (default: every judge found)
  --json            print the rows (and the missing work) as JSON instead of the table
  -h, --help        show this help

exit codes: 0 shown, 2 bad usage, 3 bad input (a directory that is not a run, no tasks, an --html file
that cannot be written)`

/** The options of `smurfs compare`, in node:util parseArgs' shape. */
const OPTIONS = {
  html: { type: "string" },
  judge: { type: "string" },
  json: { type: "boolean" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "compare", help: HELP, options: OPTIONS, positionals: true } as const

export const run = (argv: Array<string>): Promise<number> => runCommand(COMMAND, argv, (parsed) => compare(parsed))

const compare = async (parsed: ParsedCommand<typeof OPTIONS>): Promise<number> => {
  if (parsed.positionals.length === 0)
    throw new UsageError("give at least one run directory or ToolEval results folder")
  let rows
  try {
    rows = collectRows(parsed.positionals)
  } catch (e) {
    // a directory that cannot be read as asked is bad input (CompareInputError says so); anything else is a bug
    return reportFailure(e, { command: "compare" })
  }
  const judge = parsed.values.judge
  if (judge !== undefined) {
    const wanted = slug(judge)
    rows = rows.filter((r) => r.judge === wanted || r.judge === judge || r.judge === "")
  }
  if (rows.length === 0) {
    console.error("smurfs compare: no tasks found in the given directories")
    return ExitCode.BadInput
  }
  const missing = missingWork(rows)
  if (parsed.values.json) console.log(JSON.stringify({ rows, missing }, null, 2))
  else {
    console.log(renderTable(rows))
    if (missing.length > 0) console.log(`\nMissing work:\n${missing.map((m) => `  ${m}`).join("\n")}`)
    const guarded = guardLines(rows)
    if (guarded.length > 0)
      console.log(
        `\nEnded by a guard of ours, not the method (docs/fidelity.md):\n${guarded.map((g) => `  ${g}`).join("\n")}`
      )
  }
  if (rows.every((r) => !r.pass))
    console.error("\nNo judge labels yet: run `smurfs eval --run <dir> --judge <spec>` to add pass and win rates.")
  if (parsed.values.html) {
    const file = parsed.values.html
    let pages
    try {
      pages = await writeTaskPages(file, parsed.positionals, judge)
    } catch (e) {
      return reportFailure(e, { command: "compare" })
    }
    if (pages.problem !== undefined) {
      console.error(`smurfs compare: ${pages.problem}; the report was not written`)
      return ExitCode.BadInput
    }
    const problem = await writeOutputFile(
      file,
      renderHtml(rows, { generatedAt: new Date().toISOString(), tasks: pages.tasks })
    )
    if (problem !== undefined) {
      console.error(`smurfs compare: ${file}: ${problem}; the previous file, if any, is kept as it was`)
      return ExitCode.BadInput
    }
    const linked = pages.tasks.filter((t) => t.href).length
    console.error(
      `wrote ${file}${linked > 0 ? ` and ${plural(new Set(pages.tasks.filter((t) => t.href).map((t) => t.href)).size, "trajectory page")} in ${pagesFolder(file)}` : ""}`
    )
  }
  return ExitCode.Ok
}
