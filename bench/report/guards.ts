// The tasks a guard of ours (Smurfs' model-call budget, the reference planner's attempts), not the method, ended:
// one line per row of `compare`, so that a method's numbers are read knowing which bounds the references lack.
import type { Row } from "./collect.ts"

/** One line per row with guarded tasks ("smurfs (reference) · G1_instruction · run: 2 of 10 tasks (...)"); empty when none. */
export const guardLines = (rows: ReadonlyArray<Row>): Array<string> => {
  const seen = new Set<string>()
  const lines: Array<string> = []
  for (const row of rows) {
    if (row.guarded === undefined) continue
    const method = row.profile ? `${row.method} (${row.profile})` : row.method
    const line = `${row.source} · ${method} · ${row.group}: ${row.guarded.tasks} of ${row.total} tasks (${Object.entries(
      row.guarded.byGuard
    )
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([g, n]) => `${g} ${n}`)
      .join(", ")})`
    // a row per judge repeats the same tasks
    if (!seen.has(line)) lines.push(line)
    seen.add(line)
  }
  return lines
}
