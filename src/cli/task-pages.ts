// A report's tasks with their transcripts: one trajectory page per task of each run (every method side by side, labels and win rounds), which `compare --html <file>` writes beside its report and `smurfs view` serves; the same columns go into the report itself.
import { basename, dirname, extname, join } from "node:path"
import { conversationHtml } from "../../bench/benchmarks/tau2/transcript-html.ts"
import { slug } from "../../bench/eval/labels.ts"
import { refusingInvalid, resolveInput } from "../../bench/report/collect.ts"
import type { ReportTask } from "../../bench/report/html.ts"
import { collectResults, type TaskResult } from "../../bench/report/results.ts"
import { taskVerdicts } from "../../bench/report/verdicts.ts"
import { readRecord } from "../../bench/run-dir.ts"
import { taskRecordPath } from "../../bench/run-format.ts"
import { safeName } from "../trace/file-names.ts"
import { writeOutputFile } from "./output-file.ts"
import { renderTrajectoryColumns, renderTrajectoryPage, type TrajectoryView } from "./trajectory-page.ts"

/** The folder of a report's pages: `report.html` keeps them in `report-tasks/`, beside it. */
export const pagesFolder = (report: string): string =>
  join(dirname(report), `${basename(report, extname(report))}-tasks`)

/** A page's path below the pages folder: the input's number, then group and task id as the run names its files. */
const pagePath = (input: number, group: string, taskId: string) => [
  String(input + 1),
  safeName(group),
  `${safeName(taskId)}.html`
]

/** The record of an answered task, when the source is a run directory; each agent run (`bench --runs N`) its own. */
const recordOf = (dir: string, t: TaskResult) =>
  t.status === "answered" ? readRecord(taskRecordPath(dir, t.method, t.group, t.taskId, t.run ?? 0)) : undefined

const viewOf = (
  record: NonNullable<ReturnType<typeof recordOf>>,
  t: TaskResult,
  verdicts: TrajectoryView["verdicts"]
): TrajectoryView => ({
  label: `${t.method} ${t.group}/${t.taskId}${t.run === undefined ? "" : ` run ${t.run}`}`,
  method: t.method,
  query: record.query,
  events: record.events,
  finalAnswer: record.finalAnswer,
  finishType: record.finishType,
  totals: record.totals,
  labels: t.labels,
  verdicts,
  benchmarkHtml: conversationHtml(record)
})

/** How a task ended, for the report's filter: the record's finish type, else what the source says. */
const finishOf = (t: TaskResult, record: ReturnType<typeof recordOf>): string =>
  t.status === "error" ? "error" : (record?.finishType ?? (t.finished ? "give_answer" : "give_up"))

/** One trajectory page: its path below the pages folder and its HTML. */
export interface TaskPage {
  readonly path: ReadonlyArray<string>
  readonly html: string
}

/** The report's tasks (with links to their pages), the pages, and each task's columns for the report itself (by `ReportTask.transcript`). */
export interface TaskPages {
  readonly tasks: Array<ReportTask>
  readonly pages: Array<TaskPage>
  readonly transcripts: Map<string, string>
}

/**
 * The tasks of each input with their labels, win rounds and finish types, and one page per task of each
 * run directory among `inputs` (a converted-predictions folder has no trajectories: its tasks come without
 * a page or a transcript). Links are relative to a report named `report` (a file name).
 */
export const buildTaskPages = (report: string, inputs: ReadonlyArray<string>, judge: string | undefined): TaskPages => {
  const folder = basename(pagesFolder(report))
  const tasks: Array<ReportTask> = []
  const pages: Array<TaskPage> = []
  const transcripts = new Map<string, string>()
  for (const [i, input] of inputs.entries()) {
    const { dir, store, kind } = resolveInput(input)
    if (!kind) continue
    const results = collectResults(input, { judge })
    const source = basename(input)
    const byTask = new Map<string, Array<TaskResult>>()
    for (const t of results)
      byTask.set(`${t.group}\u0000${t.taskId}`, [...(byTask.get(`${t.group}\u0000${t.taskId}`) ?? []), t])
    for (const same of byTask.values()) {
      const { group, taskId } = same[0]!
      const read = same.map((t) => {
        const verdicts = refusingInvalid(() => taskVerdicts(store, t.method, t.group, t.taskId)).filter(
          (v) => judge === undefined || v.judge === judge || v.judge === slug(judge)
        )
        return { t, verdicts, record: kind === "run" ? recordOf(dir, t) : undefined }
      })
      const views = read.flatMap(({ t, verdicts, record }) => (record ? [viewOf(record, t, verdicts)] : []))
      let href: string | undefined
      let transcript: string | undefined
      if (views.length > 0) {
        const parts = pagePath(i, group, taskId)
        // the report links up, the page links back; `%` in a file name is written %25 in a link
        pages.push({
          path: parts,
          html: renderTrajectoryPage(views, {
            title: `${source}: ${group}/${taskId}`,
            back: `${"../".repeat(parts.length)}${encodeURIComponent(basename(report))}`
          })
        })
        href = [folder, ...parts].map(encodeURIComponent).join("/")
        transcript = `t${transcripts.size}`
        transcripts.set(transcript, renderTrajectoryColumns(views))
      }
      for (const { t, verdicts, record } of read)
        tasks.push({ ...t, source, href, transcript, verdicts, finish: finishOf(t, record) })
    }
  }
  return { tasks, pages, transcripts }
}

/**
 * Write one page per task of each run directory among `inputs` beside the report and return the tasks
 * with their links (relative to the report) and transcripts; or what went wrong writing a page.
 */
export const writeTaskPages = async (
  report: string,
  inputs: ReadonlyArray<string>,
  judge: string | undefined
): Promise<{ tasks: Array<ReportTask>; transcripts: Map<string, string>; problem?: string | undefined }> => {
  const { tasks, pages, transcripts } = buildTaskPages(basename(report), inputs, judge)
  const folder = pagesFolder(report)
  for (const page of pages) {
    const problem = await writeOutputFile(join(folder, ...page.path), page.html)
    if (problem !== undefined) return { tasks, transcripts, problem: `${join(folder, ...page.path)}: ${problem}` }
  }
  return { tasks, transcripts }
}
