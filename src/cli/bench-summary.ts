// What `smurfs bench` prints when a run ends: the endpoints' and the run's summary on stderr, the converted files (or
// the JSON summary) on stdout, and the exit code of the outcome.
import { type BenchOutcome, summaryValue } from "../../bench/app.ts"
import { formatDuration, wrapToWidth } from "../../bench/progress.ts"
import type { BenchSettings } from "../../bench/settings.ts"
import { plural } from "../plural.ts"
import { redactText } from "../trace/redact.ts"
import { ExitCode } from "./exit-codes.ts"

/** The summary lines on stderr, the converted files (or the JSON summary) on stdout; the exit code of the outcome. */
/** A failure of the tool simulator (the records' `error` says so), whose server doctor should check instead of the model's. */
const simulatorFailed = (error: string | undefined) => error?.startsWith("the tool simulator failed") === true

export const reportBench = (settings: BenchSettings, json: boolean, outcome: BenchOutcome): number => {
  if (outcome.kind === "no-queries") {
    console.error("smurfs bench: no query matched the given --group/--ids/--limit; nothing to run.")
    return ExitCode.BadInput
  }
  const { summary, totals, endpoints, misses, next } = outcome
  for (const e of endpoints)
    console.error(
      `  endpoint ${e.endpoint}: ${e.calls} calls, ${e.errors} errors, mean ${e.meanLatencyMs} ms${e.ejections > 0 ? `, taken out ${e.ejections}x` : ""}${e.healthy ? "" : " (out now)"}`
    )
  // on a terminal the summary is wrapped at spaces: a narrow one never breaks it mid-number
  const columns = process.stderr.isTTY ? process.stderr.columns : undefined
  console.error(
    wrapToWidth(
      `smurfs bench: ${plural(summary.recorded, "task")} recorded now (${summary.answered} ${settings.tau2 === undefined ? "answered, not yet judged" : "ended by the user or the agent, scored"}), ${summary.skipped} already done, ` +
        `${summary.errors} failed because of the model server, ${summary.notRecorded} left undone, of ${summary.total}.` +
        (totals
          ? ` ${plural(totals.modelCalls, "model call")}, ${plural(totals.tokens, "token")}, ${formatDuration(totals.wallMs)}.`
          : "") +
        ` Run directory: ${settings.out}`,
      columns
    )
  )
  if (misses.missedToolCalls > 0)
    console.error(
      wrapToWidth(
        `smurfs bench: ${plural(misses.missedToolCalls, "tool call")} of ${misses.toolCalls} (${plural(misses.tasksWithMisses, "task")}) had no recorded response and no simulator: ` +
          "they failed, and the pass rates of this run count them as failures.",
        columns
      )
    )
  if (json) console.log(JSON.stringify(summaryValue(settings, outcome), null, 2))
  else for (const file of summary.convertedFiles) console.log(file)
  if (summary.errors === 0 && summary.notRecorded === 0)
    console.error(
      settings.tau2 === undefined
        ? `Next: judge the answers with \`${next}\``
        : `Next: see the rewards and pass^k with \`${next}\``
    )
  if (summary.errors > 0 && summary.recorded === 0) {
    // nothing got through: the server (or its address, or the model name) is the problem, not the tasks
    console.error(
      redactText(`smurfs bench: every task run failed because of the model server (${summary.lastServerError}).`)
    )
    console.error(
      `Check the server and the model with \`smurfs doctor --model ${simulatorFailed(summary.lastServerError) && settings.simulator ? settings.simulator : settings.model}\`, then rerun the same command with --resume.`
    )
    return ExitCode.ModelUnavailable
  }
  if (summary.errors > 0 || summary.notRecorded > 0) {
    if (summary.errors > 0) console.error(redactText(`The last model server failure: ${summary.lastServerError}`))
    console.error(
      `Rerun the same command with --resume to retry the ${summary.errors + summary.notRecorded} undone tasks.`
    )
    return ExitCode.Failure
  }
  return ExitCode.Ok
}
