// The trajectory pages `compare --html <file>` writes beside its report: one per task of each run (every method side by side), linked from the report's task list.
import { basename, dirname, extname, join } from "node:path"
import { resolveInput } from "../../bench/report/collect.ts"
import type { ReportTask } from "../../bench/report/html.ts"
import { collectResults, type TaskResult } from "../../bench/report/results.ts"
import { readRecord } from "../../bench/run-dir.ts"
import { taskRecordPath } from "../../bench/run-format.ts"
import { safeName } from "../trace/file-names.ts"
import { writeOutputFile } from "./output-file.ts"
import { renderTrajectoryPage, type TrajectoryView } from "./trajectory-page.ts"

/** The folder of a report's pages: `report.html` keeps them in `report-tasks/`, beside it. */
export const pagesFolder = (report: string): string =>
  join(dirname(report), `${basename(report, extname(report))}-tasks`)

/** A page's path below the pages folder: the input's number, then group and task id as the run names its files. */
const pagePath = (input: number, group: string, taskId: string) => [
  String(input + 1),
  safeName(group),
  `${safeName(taskId)}.html`
]

const viewOf = (dir: string, t: TaskResult): TrajectoryView | undefined => {
  // each agent run of a task (`bench --runs N`) is its own trajectory on the task's page
  const record =
    t.status === "answered" ? readRecord(taskRecordPath(dir, t.method, t.group, t.taskId, t.run ?? 0)) : undefined
  if (!record) return undefined
  return {
    label: `${t.method} ${t.group}/${t.taskId}${t.run === undefined ? "" : ` run ${t.run}`}`,
    method: t.method,
    query: record.query,
    events: record.events,
    finalAnswer: record.finalAnswer,
    finishType: record.finishType,
    totals: record.totals,
    labels: t.labels
  }
}

/**
 * Write one page per task of each run directory among `inputs` (a converted-predictions folder has no
 * trajectories: its tasks are listed without a link) and return the tasks with their links, relative to
 * the report; or what went wrong writing a page.
 */
export const writeTaskPages = async (
  report: string,
  inputs: ReadonlyArray<string>,
  judge: string | undefined
): Promise<{ tasks: Array<ReportTask>; problem?: string | undefined }> => {
  const folder = pagesFolder(report)
  const tasks: Array<ReportTask> = []
  for (const [i, input] of inputs.entries()) {
    const { dir, kind } = resolveInput(input)
    if (!kind) continue
    const results = collectResults(input, { judge })
    const source = basename(input)
    const byTask = new Map<string, Array<TaskResult>>()
    for (const t of results)
      byTask.set(`${t.group}\u0000${t.taskId}`, [...(byTask.get(`${t.group}\u0000${t.taskId}`) ?? []), t])
    for (const same of byTask.values()) {
      const { group, taskId } = same[0]!
      const views = kind === "run" ? same.flatMap((t) => viewOf(dir, t) ?? []) : []
      let href: string | undefined
      if (views.length > 0) {
        const parts = pagePath(i, group, taskId)
        // the report links up, the page links back; `%` in a file name is written %25 in a link
        const page = renderTrajectoryPage(views, {
          title: `${source}: ${group}/${taskId}`,
          back: `${"../".repeat(parts.length)}${encodeURIComponent(basename(report))}`
        })
        const problem = await writeOutputFile(join(folder, ...parts), page)
        if (problem !== undefined) return { tasks, problem: `${join(folder, ...parts)}: ${problem}` }
        href = [basename(folder), ...parts].map(encodeURIComponent).join("/")
      }
      for (const t of same) tasks.push({ ...t, source, href })
    }
  }
  return { tasks }
}
