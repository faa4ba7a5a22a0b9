// The results of a run task by task: each task's labels per judge run with the judge's reason, and its costs (`smurfs results`, the HTML report's task list).
import { z } from "zod"
import type { JudgeInput } from "../eval/judge-input.ts"
import { AnswerStatus, PassLabels, passLabelsPath, slug } from "../eval/labels.ts"
import { loadSource, sourceProfile } from "../eval/sources.ts"
import { readJsonChecked } from "../eval/store.ts"
import { runOf } from "../run-format.ts"
import { CompareInputError, judgesOf, ofProfile, refusingInvalid, resolveInput } from "./collect.ts"

/** One judge run's label of a task. */
export const TaskLabel = z.object({
  /** The judge's label folder (`smurfs eval --judge`'s spec as a folder name). */
  judge: z.string(),
  /** The judge run (0..K-1). */
  run: z.number(),
  label: AnswerStatus,
  reason: z.string()
})
export type TaskLabel = z.infer<typeof TaskLabel>

/** One task of a run: what it cost and how every judge run labelled it. */
export const TaskResult = z.object({
  method: z.string(),
  group: z.string(),
  taskId: z.string(),
  /** The agent run (`bench --runs N`: 0..N-1); absent in a run of one. */
  run: z.number().int().min(0).optional(),
  /** `answered` (an answer or a give-up: what a judge labels) or `error` (the model server failed; `smurfs bench --resume` redoes it). */
  status: z.enum(["answered", "error"]),
  finished: z.boolean(),
  query: z.string(),
  /** Every judge run's label, by judge then run; empty when no judge labelled the task. */
  labels: z.array(TaskLabel),
  modelCalls: z.number().optional(),
  toolCalls: z.number().optional(),
  /** Prompt and completion tokens. */
  tokens: z.number().optional(),
  wallMs: z.number().optional(),
  /** Tool calls nothing recorded or simulated (they failed); undefined when the source does not say. */
  missedToolCalls: z.number().optional()
})
export type TaskResult = z.infer<typeof TaskResult>

/** The label filter's values: a judge's label, or a task no judge labelled, or one the model server failed. */
export const LABEL_FILTERS = ["solved", "unsolved", "unsure", "unjudged", "error"] as const
export type LabelFilter = (typeof LABEL_FILTERS)[number]

export interface ResultsFilter {
  readonly methods?: ReadonlyArray<string> | undefined
  readonly groups?: ReadonlyArray<string> | undefined
  /** A task is kept when any judge run gave it one of these labels (`unjudged`: no label at all; `error`: not run through). */
  readonly labels?: ReadonlyArray<LabelFilter> | undefined
  /** Only this judge's labels (its spec or folder name). */
  readonly judge?: string | undefined
}

const sum = (a: number | undefined, b: number | undefined) =>
  a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0)

/** The labels of one task, every judge of the store, runs in order; with `profile`, only labels made from answers of that profile. */
const labelsOf = (
  store: string,
  judges: ReadonlyArray<string>,
  method: string,
  group: string,
  taskId: string,
  profile?: string,
  agentRun = 0
): Array<TaskLabel> =>
  judges.flatMap((judge) => {
    const stored = readJsonChecked(passLabelsPath(store, judge, method, group, taskId, agentRun), PassLabels)
    const runs = stored && ofProfile(stored.profile, profile) ? stored.runs : {}
    return Object.entries(runs)
      .map(([run, r]) => ({ judge, run: Number(run), label: r.label, reason: r.reason }))
      .sort((a, b) => a.run - b.run)
  })

/** Every judge's labels of one task (of one agent run) of a run (or of a label folder written by `smurfs eval --out`). */
export const taskLabels = (
  store: string,
  method: string,
  group: string,
  taskId: string,
  agentRun = 0
): Array<TaskLabel> => labelsOf(store, judgesOf(store), method, group, taskId, undefined, agentRun)

const resultOf = (store: string, judges: ReadonlyArray<string>, e: JudgeInput, profile: string): TaskResult => ({
  method: e.method,
  group: e.group,
  taskId: e.taskId,
  ...(e.run === undefined ? {} : { run: e.run }),
  status: "answered",
  finished: e.finished,
  query: e.query,
  labels: labelsOf(store, judges, e.method, e.group, e.taskId, profile, runOf(e)),
  modelCalls: e.cost.modelCalls,
  toolCalls: e.cost.toolCalls,
  tokens: sum(e.cost.promptTokens, e.cost.completionTokens),
  wallMs: e.cost.wallMs,
  missedToolCalls: e.cost.missedToolCalls
})

/** Whether a task passes the label filter. */
export const hasLabel = (t: TaskResult, wanted: ReadonlyArray<LabelFilter>): boolean =>
  wanted.some((w) =>
    w === "error"
      ? t.status === "error"
      : w === "unjudged"
        ? t.status === "answered" && t.labels.length === 0
        : t.labels.some((l) => l.label.toLowerCase() === w)
  )

/**
 * Every task of a run directory (or a converted-predictions folder, or a label folder written by
 * `smurfs eval --out`), sorted by method, group and id, with its labels; narrowed by the filter.
 */
export const collectResults = (input: string, filter: ResultsFilter = {}): Array<TaskResult> => {
  const { dir, store, kind } = resolveInput(input)
  if (!kind)
    throw new CompareInputError({
      message: `${input} holds ToolEval's published rates only, no tasks. Pass a run directory made by \`smurfs bench\`.`
    })
  const source = loadSource(dir)
  const judges = judgesOf(store).filter(
    (j) => filter.judge === undefined || j === filter.judge || j === slug(filter.judge)
  )
  const wantedMethod = (m: string) => !filter.methods || filter.methods.length === 0 || filter.methods.includes(m)
  const wantedGroup = (g: string) => !filter.groups || filter.groups.length === 0 || filter.groups.includes(g)
  const answered = source.entries.filter((e) => wantedMethod(e.method) && wantedGroup(e.group))
  // labels made from another profile's answers (a reused --out folder) are not this run's
  const profile = sourceProfile(dir)
  const results = refusingInvalid(() => answered.map((e) => resultOf(store, judges, e, profile)))
  for (const u of source.undone ?? [])
    if (wantedMethod(u.method) && wantedGroup(u.group))
      results.push({ ...u, status: "error", finished: false, query: "", labels: [] })
  const order = (a: TaskResult, b: TaskResult) =>
    a.method.localeCompare(b.method) ||
    a.group.localeCompare(b.group) ||
    a.taskId.localeCompare(b.taskId, undefined, { numeric: true }) ||
    runOf(a) - runOf(b)
  const sorted = results.sort(order)
  return filter.labels && filter.labels.length > 0 ? sorted.filter((t) => hasLabel(t, filter.labels!)) : sorted
}

/** A task's labels in a few characters per judge run: "S S U" (Solved, Solved, Unsolved), "?" for Unsure; judges named when several. */
export const labelSummary = (t: TaskResult): string => {
  if (t.status === "error") return "error"
  if (t.labels.length === 0) return "-"
  const judges = [...new Set(t.labels.map((l) => l.judge))]
  const short = (l: TaskLabel) => (l.label === "Solved" ? "S" : l.label === "Unsolved" ? "U" : "?")
  return judges
    .map(
      (j) =>
        `${judges.length > 1 ? `${j}: ` : ""}${t.labels
          .filter((l) => l.judge === j)
          .map(short)
          .join(" ")}`
    )
    .join("; ")
}

/** The reason worth reading first: the first run that did not say Solved, else the first run. */
export const leadingReason = (t: TaskResult): string =>
  (t.labels.find((l) => l.label !== "Solved") ?? t.labels[0])?.reason ?? ""
