// What a comparison does not cover yet, said in words: unjudged tasks, tasks the model server failed, tasks not run.
import type { Row } from "./collect.ts"

/** One line per row with missing work, saying what counts and what to run; empty when every task is in. */
export const missingWork = (rows: ReadonlyArray<Row>): Array<string> =>
  rows.flatMap((r) => {
    const name = `${r.source} ${r.method} ${r.group}${r.judge ? ` (judge ${r.judge})` : ""}`
    const parts: Array<string> = []
    if (r.judge && r.judged < r.n)
      parts.push(
        `${r.n - r.judged} of ${r.n} answered tasks not judged yet (the pass rate is over the ${r.judged} judged; \`smurfs eval\` judges the rest)`
      )
    if (r.errors > 0)
      parts.push(`${r.errors} failed because of the model server (\`smurfs bench --resume\` redoes them)`)
    const notRun = r.total - r.n - r.errors
    if (notRun > 0) parts.push(`${notRun} not run yet (\`smurfs bench --resume\`)`)
    return parts.length > 0 ? [`${name}: ${parts.join("; ")}.`] : []
  })
