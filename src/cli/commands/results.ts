// `smurfs results`: list a run's tasks one per row with their labels, the judge's reason and their costs, filtered by method, group and label.

import * as Effect from "effect/Effect"
import type { CompareInputError } from "../../../bench/report/collect.ts"
import {
  collectResults,
  LABEL_FILTERS,
  type LabelFilter,
  labelSummary,
  leadingReason,
  type TaskResult
} from "../../../bench/report/results.ts"
import { plural } from "../../plural.ts"
import { visibleText } from "../../trace/visible-text.ts"
import { ExitCode } from "../exit-codes.ts"
import { type ParsedCommand, runCommand, splitList, UsageError } from "../options.ts"
import { runProgram } from "../run-program.ts"
import { COMMAND } from "./results-help.ts"

export { COMMAND }

/** The longest reason a table row shows (`--json` has it whole). */
const REASON_CHARS = 120

const oneLine = (text: string, max: number) => {
  const flat = visibleText(text).replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** The tasks as an aligned table, one row each (one per agent run, with a `run` column, when a run has several); every value from data goes through visibleText. */
export const renderResults = (tasks: ReadonlyArray<TaskResult>): string => {
  const runs = tasks.some((t) => t.run !== undefined)
  const header = [
    "method",
    "group",
    "id",
    ...(runs ? ["run"] : []),
    "labels",
    "calls",
    "tokens",
    "wall s",
    "misses",
    "reason"
  ]
  const rows = tasks.map((t) => [
    visibleText(t.method),
    visibleText(t.group),
    visibleText(t.taskId),
    ...(runs ? [String(t.run ?? 0)] : []),
    visibleText(labelSummary(t)),
    t.status === "error" ? "-" : `${t.modelCalls ?? "-"}/${t.toolCalls ?? "-"}`,
    t.tokens === undefined ? "-" : String(t.tokens),
    t.wallMs === undefined ? "-" : (t.wallMs / 1000).toFixed(1),
    t.missedToolCalls === undefined ? "-" : String(t.missedToolCalls),
    oneLine(leadingReason(t), REASON_CHARS)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const numeric = new Set(runs ? [3, 5, 6, 7, 8] : [4, 5, 6, 7])
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : numeric.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

const labelFilters = (values: ReadonlyArray<string> | undefined): Array<LabelFilter> | undefined => {
  if (values === undefined) return undefined
  return splitList(values).map((v) => {
    const l = v.toLowerCase()
    if (!(LABEL_FILTERS as ReadonlyArray<string>).includes(l))
      throw new UsageError(`--label ${v}: give one of ${LABEL_FILTERS.join(", ")}`)
    return l as LabelFilter
  })
}

export const run = (argv: Array<string>): Promise<number> => runCommand(COMMAND, argv, (parsed) => results(parsed))

const results = (parsed: ParsedCommand<typeof COMMAND.options>): Promise<number> => {
  if (parsed.positionals.length !== 1)
    throw new UsageError("give one run directory (made by `smurfs bench`, judged with `smurfs eval`)")
  const { values } = parsed
  const filter = {
    methods: values.method && splitList(values.method),
    groups: values.group && splitList(values.group),
    labels: labelFilters(values.label),
    judge: values.judge
  }
  const program = Effect.try({
    try: () => collectResults(parsed.positionals[0]!, filter),
    catch: (e) => e as CompareInputError
  }).pipe(
    Effect.map((tasks) => {
      if (values.json) console.log(JSON.stringify({ tasks }, null, 2))
      else if (tasks.length > 0) console.log(renderResults(tasks))
      const labelled = tasks.filter((t) => t.labels.length > 0).length
      console.error(`${plural(tasks.length, "task")}${tasks.length > 0 ? `, ${labelled} judged` : " match"}`)
      return ExitCode.Ok
    })
  )
  return runProgram(program, { command: "results" })
}
