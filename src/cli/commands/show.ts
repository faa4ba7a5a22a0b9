// `smurfs show`: print a recorded trajectory (a run directory's task, or `smurfs run --json` output) as the live view showed it, or as one HTML page.
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { findInRun, isDir, type Recorded, readRecorded } from "../../../bench/report/recorded.ts"
import { plural } from "../../plural.ts"
import { kindOf } from "../../trace/events.ts"
import { visibleText } from "../../trace/visible-text.ts"
import { ExitCode } from "../exit-codes.ts"
import { liveView } from "../live-view.ts"
import { BadInput, runCommand, splitList, UsageError } from "../options.ts"
import { writeOutputFile } from "../output-file.ts"
import { renderTrajectoryPage } from "../trajectory-page.ts"
import { COMMAND } from "./show-help.ts"

export { COMMAND }

/** The lines of a recorded trajectory, as the live view printed them, then its answer and totals. */
export const renderRecorded = (recorded: Recorded, full = false): Array<string> => {
  const lines: Array<string> = []
  const view = liveView((line) => lines.push(line), { maxChars: full ? Number.MAX_SAFE_INTEGER : undefined })
  // ReAct and DFSDT emit no task_started: their query comes from the record
  if (recorded.query !== undefined && !recorded.events.some((e) => kindOf(e) === "task_started"))
    lines.push(`Query: ${visibleText(recorded.query)}`)
  for (const event of recorded.events) view(event)
  // a benchmark's own view (τ²: the conversation, the reward and the database against the gold state)
  const own = full ? recorded.benchmarkLines?.full : recorded.benchmarkLines?.short
  if (own && own.length > 0) lines.push("", ...own.map((l) => visibleText(l)))
  lines.push("")
  if (
    recorded.finishType === "give_answer" ||
    (recorded.finalAnswer && !recorded.events.some((e) => kindOf(e) === "give_up"))
  )
    lines.push(`Answer: ${visibleText(recorded.finalAnswer ?? "")}`)
  else if (recorded.finishType) lines.push(`Finished: ${recorded.finishType}`)
  const t = recorded.totals
  if (t)
    lines.push(
      `${plural(t["modelCalls"] ?? 0, "model call")}, ${plural((t["promptTokens"] ?? 0) + (t["completionTokens"] ?? 0), "token")}, ${plural(t["toolCalls"] ?? 0, "tool call")}, ${plural(t["backtracks"] ?? 0, "backtrack")}, ${((t["wallMs"] ?? 0) / 1000).toFixed(1)} s`
    )
  for (const l of recorded.labels ?? [])
    lines.push(
      `${visibleText(l.judge)} run ${l.run}: ${l.label}${l.reason ? ` (${visibleText(l.reason).replace(/\s+/g, " ").trim()})` : ""}`
    )
  return lines
}

export const run = (argv: string[]): Promise<number> =>
  runCommand(COMMAND, argv, async ({ values, positionals }) => {
    if (positionals.length === 0 || positionals.length > 2)
      throw new UsageError("give a run directory and a task id, or a trajectory file")
    const [target, taskId] = positionals as [string, string | undefined]
    const path = resolve(target)
    if (!existsSync(path))
      throw new BadInput(
        `${target} does not exist; give a run directory made by \`smurfs bench\` and a task id, or a trajectory file`
      )
    let recorded: Array<Recorded>
    if (isDir(path)) {
      if (taskId === undefined)
        throw new UsageError(`${target} is a run directory: give the task id too (smurfs show ${target} <task id>)`)
      recorded = findInRun(
        path,
        taskId,
        values.method === undefined ? undefined : splitList([values.method]),
        values.group
      )
    } else {
      if (taskId !== undefined) throw new UsageError(`${target} is a file: a task id goes with a run directory`)
      recorded = [readRecorded(path, target)]
    }
    // scripts read the record, never the view: one JSON value on stdout
    // (a benchmark's views are renderings of the record's own data, not more of it)
    if (values.json === true)
      console.log(
        JSON.stringify({ tasks: recorded.map(({ benchmarkHtml: _h, benchmarkLines: _l, ...r }) => r) }, null, 2)
      )
    const views =
      values.json === true
        ? []
        : recorded.map((r) => ({ label: r.label, lines: renderRecorded(r, values.full === true) }))
    for (const [i, view] of views.entries()) {
      if (views.length > 1) console.log(`${i > 0 ? "\n" : ""}== ${visibleText(view.label)} ==`)
      console.log(view.lines.join("\n"))
    }
    if (values.html !== undefined) {
      const page = renderTrajectoryPage(recorded, {
        title: taskId === undefined ? target : `${taskId}: ${recorded.map((r) => r.method ?? r.label).join(" vs ")}`
      })
      const problem = await writeOutputFile(values.html, page)
      if (problem !== undefined)
        throw new BadInput(`${values.html}: ${problem}; the previous file, if any, is kept as it was`)
      console.error(`wrote ${values.html}`)
    }
    return ExitCode.Ok
  })
