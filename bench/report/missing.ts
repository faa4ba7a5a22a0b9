// What a comparison does not cover yet, said in words: unjudged tasks and judge runs, missing win rounds, runs
// no judge has seen, tasks the model server failed, tasks not run.

import { plural } from "../../src/plural.ts"
import { judgeTextsLabel, type Row } from "./collect.ts"

/** Task ids as a short list: every one is named (they are what `smurfs eval` would decide). */
const ids = (list: ReadonlyArray<string>) => list.join(", ")

/** Tasks grouped by how many runs or rounds they have: "task 1 has 1 of 3; tasks 2, 4 have 2 of 3". */
const byCount = (tasks: ReadonlyArray<{ readonly taskId: string; readonly count: number }>, k: number) =>
  [...new Set(tasks.map((t) => t.count))]
    .sort((a, b) => a - b)
    .map((count) => {
      const named = tasks.filter((t) => t.count === count).map((t) => t.taskId)
      return `${named.length === 1 ? "task" : "tasks"} ${ids(named)} ${named.length === 1 ? "has" : "have"} ${count} of ${k}`
    })
    .join("; ")

/** What a win rate lacks, in a few words for its table cell; empty when it is complete. */
export const winIncompleteNote = (row: Row): string => {
  const missing = row.win?.incomplete
  if (!missing) return ""
  const parts: Array<string> = []
  if (missing.partial.length > 0)
    parts.push(`${plural(missing.partial.length, "task")} with fewer than ${missing.k} rounds`)
  if (missing.unjudged.length > 0) parts.push(`${plural(missing.unjudged.length, "task")} unjudged`)
  return `incomplete: ${parts.join(", ")}`
}

/** One line per row with missing work, saying what counts and what to run; empty when every task is in. */
export const missingWork = (rows: ReadonlyArray<Row>): Array<string> => {
  const judges = [...new Set(rows.map((r) => r.judge).filter((j) => j !== ""))].sort()
  return rows.flatMap((r) => {
    const texts = r.judgeTexts ? `, ${judgeTextsLabel(r.judgeTexts)}` : ""
    const method = r.profile ? `${r.method} (${r.profile})` : r.method
    const name = `${r.source} ${method} ${r.group}${r.judge ? ` (judge ${r.judge}${texts})` : ""}`
    const parts: Array<string> = []
    if (r.judge && r.judged < r.n)
      parts.push(
        `${r.n - r.judged} of ${r.n} answered tasks not judged yet${r.unjudgedTasks ? ` (${ids(r.unjudgedTasks)})` : ""} (the pass rate is over the ${r.judged} judged; \`smurfs eval\` judges the rest)`
      )
    if (r.partialPass)
      parts.push(
        `judge runs missing: ${byCount(
          r.partialPass.tasks.map((t) => ({ taskId: t.taskId, count: t.runs })),
          r.partialPass.k
        )} (a missing run scores 0; \`smurfs eval\` with the same settings adds them)`
      )
    const win = r.win?.incomplete
    if (win && win.partial.length > 0)
      parts.push(
        `win rounds vs ${r.win!.reference} missing: ${byCount(
          win.partial.map((t) => ({ taskId: t.taskId, count: t.rounds })),
          win.k
        )} (each counts in the win rate as if complete; \`smurfs eval --reference\` with the same settings adds them)`
      )
    if (win && win.unjudged.length > 0)
      parts.push(
        `${plural(win.unjudged.length, "answered task has", "answered tasks have")} no win round vs ${r.win!.reference} (${ids(win.unjudged)}; not in the win rate's N; \`smurfs eval --reference\` judges them)`
      )
    // a run beside judged ones that no judge has seen
    if (!r.judge && judges.length > 0 && r.n > 0)
      parts.push(
        `${plural(r.n, "answered task")} not judged at all, while other rows are (judge ${judges.join(", ")}; \`smurfs eval --run <dir> --judge <spec>\` judges them)`
      )
    if (r.errors > 0)
      parts.push(`${r.errors} failed because of the model server (\`smurfs bench --resume\` redoes them)`)
    const notRun = r.total - r.n - r.errors
    if (notRun > 0) parts.push(`${notRun} not run yet (\`smurfs bench --resume\`)`)
    return parts.length > 0 ? [`${name}: ${parts.join("; ")}.`] : []
  })
}
