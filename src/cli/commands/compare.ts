import { slug } from "../../../bench/eval/labels.ts"
import { collectRows, type Row } from "../../../bench/report/collect.ts"
import { compareStatistics } from "../../../bench/report/comparison.ts"
import { environmentMismatches, markMismatchedRows, mismatchMessage } from "../../../bench/report/environments.ts"
import { parseGpuModel } from "../../../bench/report/gpu-model.ts"
import { guardLines } from "../../../bench/report/guards.ts"
import { renderHtml } from "../../../bench/report/html.ts"
import { missingWork } from "../../../bench/report/missing.ts"
import { reportStatisticsOf } from "../../../bench/report/statistics-html.ts"
import { renderStatistics } from "../../../bench/report/statistics-text.ts"
import { DEFAULT_RESAMPLES, DEFAULT_SEED } from "../../../bench/report/stats.ts"
import { renderTable } from "../../../bench/report/table.ts"
import { plural } from "../../plural.ts"
import { visibleText } from "../../trace/visible-text.ts"
import { ExitCode } from "../exit-codes.ts"
import { intOption, type ParsedCommand, runCommand, UsageError } from "../options.ts"
import { writeOutputFile } from "../output-file.ts"
import { reportFailure } from "../run-program.ts"
import { pagesFolder, writeTaskPages } from "../task-pages.ts"
import { COMMAND } from "./compare-help.ts"

export { COMMAND }

export const run = (argv: Array<string>): Promise<number> => runCommand(COMMAND, argv, (parsed) => compare(parsed))

/** A row as --json prints it: its task-by-task samples are what the statistics were computed from, not output. */
const withoutSamples = ({ samples: _, ...row }: Row) => row

/** The rows, when the runs' environments agree or a mismatch is allowed (its rows marked); undefined after refusing. */
const checkEnvironments = (rows: Array<Row>, inputs: ReadonlyArray<string>, allow: boolean | undefined) => {
  const mismatches = environmentMismatches(inputs)
  if (mismatches.length === 0) return rows
  if (allow) return markMismatchedRows(rows, mismatches)
  console.error(`smurfs compare: ${mismatchMessage(mismatches)}`)
  return undefined
}

const compare = async (parsed: ParsedCommand<typeof COMMAND.options>): Promise<number> => {
  if (parsed.positionals.length === 0)
    throw new UsageError("give at least one run directory or ToolEval results folder")
  const seed = intOption("seed", parsed.values.seed, 0) ?? DEFAULT_SEED
  const resamples = intOption("resamples", parsed.values.resamples, 100) ?? DEFAULT_RESAMPLES
  if (resamples > 100_000)
    throw new UsageError(`--resamples needs a whole number from 100 to 100000 (got ${resamples})`)
  const gpuText = parsed.values["gpu-model"]
  const gpu = gpuText === undefined ? undefined : parseGpuModel(gpuText)
  if (typeof gpu === "string") throw new UsageError(`--gpu-model: ${gpu}`)
  let rows
  try {
    rows = checkEnvironments(collectRows(parsed.positionals), parsed.positionals, parsed.values["allow-env-mismatch"])
    if (rows === undefined) return ExitCode.BadInput
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
  // a large comparison takes seconds: a terminal sees how far the statistics are (a pipe or a file never does)
  const tty = process.stderr.isTTY === true
  const statistics = compareStatistics(
    rows,
    { seed, resamples, gpu },
    tty
      ? (done, total) => process.stderr.write(`\rstatistics: ${done}/${total}${done === total ? "\r\x1b[K" : ""}`)
      : undefined
  )
  if (parsed.values.json) console.log(JSON.stringify({ rows: rows.map(withoutSamples), missing, statistics }, null, 2))
  else {
    // group, method and source names come from data: control characters are shown, never obeyed
    console.log(visibleText(renderTable(rows, statistics.rows)))
    const below = renderStatistics(rows, statistics)
    if (below !== "") console.log(visibleText(`\n${below}`))
    if (missing.length > 0) console.log(visibleText(`\nMissing work:\n${missing.map((m) => `  ${m}`).join("\n")}`))
    const guarded = guardLines(rows)
    if (guarded.length > 0)
      console.log(
        visibleText(
          `\nEnded by a guard of ours, not the method (docs/fidelity.md):\n${guarded.map((g) => `  ${g}`).join("\n")}`
        )
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
      renderHtml(rows, {
        generatedAt: new Date().toISOString(),
        tasks: pages.tasks,
        transcripts: pages.transcripts,
        statistics: reportStatisticsOf(rows, statistics)
      })
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
