// A comparison row's data task by task (each agent run's judge labels, win rounds and costs): what the statistics resample.
import type { JudgeCost } from "../eval/judge-input.ts"
import type { AnswerStatus } from "../eval/labels.ts"
import { labelScore } from "../eval/pass-rate.ts"
import type { CostRun, TaskRuns } from "./stats.ts"

/** One agent run of a task: its judge rounds' labels (index = round; undefined: that round is missing) and its cost. */
export interface SampleRun {
  /** The agent run (`bench --runs`: 0..N-1; 0 in a run of one). */
  readonly run: number
  /** Every judge round up to K; empty when no judge labelled this run. */
  readonly labels: ReadonlyArray<AnswerStatus | undefined>
  readonly cost?: JudgeCost | undefined
}

export interface SampleTask {
  readonly taskId: string
  /** Agent runs by run index. */
  readonly runs: ReadonlyArray<SampleRun>
}

/** One task's win rounds against the row's reference, per agent run: 1 a round the candidate won, 0 one the reference won. */
export interface WinSampleTask {
  readonly taskId: string
  readonly runs: ReadonlyArray<{ readonly run: number; readonly rounds: ReadonlyArray<number> }>
}

/** A row's data task by task: every answered task (judged or not), and its win rounds when the row has a reference. */
export interface RowSamples {
  /** Judge rounds asked for (K): a labelled run's missing rounds score 0, as in ToolEval. */
  readonly k: number
  readonly tasks: ReadonlyArray<SampleTask>
  readonly win?: ReadonlyArray<WinSampleTask> | undefined
}

/** Group items by task id and then agent run, tasks in first-seen order, runs by index. */
export const byTaskAndRun = <A>(
  items: ReadonlyArray<A>,
  taskIdOf: (a: A) => string,
  runOf: (a: A) => number
): Array<{ readonly taskId: string; readonly runs: Array<{ readonly run: number; readonly item: A }> }> => {
  const tasks = new Map<string, Array<{ run: number; item: A }>>()
  for (const item of items) {
    const id = taskIdOf(item)
    const runs = tasks.get(id) ?? []
    runs.push({ run: runOf(item), item })
    tasks.set(id, runs)
  }
  return [...tasks].map(([taskId, runs]) => ({ taskId, runs: runs.sort((a, b) => a.run - b.run) }))
}

/** The labels of one run padded to K rounds (a missing round is undefined); no labels at all stays empty. */
export const padRounds = (
  runs: Readonly<Record<string, { readonly label: AnswerStatus }>> | undefined,
  k: number
): Array<AnswerStatus | undefined> =>
  runs === undefined || Object.keys(runs).length === 0
    ? []
    : Array.from(
        { length: Math.max(k, ...Object.keys(runs).map((r) => Number(r) + 1)) },
        (_, r) => runs[String(r)]?.label
      )

/** The judged runs of a task (those with at least one label), as round scores; tasks with none are left out. */
export const passTasks = (samples: RowSamples): Array<{ readonly taskId: string; readonly runs: TaskRuns }> =>
  samples.tasks.flatMap((t) => {
    const runs = t.runs.filter((r) => r.labels.length > 0).map((r) => r.labels.map(labelScore))
    return runs.length === 0 ? [] : [{ taskId: t.taskId, runs }]
  })

/**
 * Costs of every judged run of every judged task (of every run when the row has no labels at all, for its cost per
 * task): `measures` lists, of the costs asked for, those every such run records, and each run's `costs` holds them
 * in that order.
 */
export const costTasks = (
  samples: RowSamples,
  costs: ReadonlyArray<(c: JudgeCost) => number | undefined>
): { readonly measures: Array<number>; readonly tasks: Array<ReadonlyArray<CostRun>> } => {
  const judged = samples.tasks.some((t) => t.runs.some((r) => r.labels.length > 0))
  const runs = samples.tasks
    .map((t) => t.runs.filter((r) => !judged || r.labels.length > 0))
    .filter((runs) => runs.length > 0)
  const values = runs.map((task) => task.map((r) => costs.map((of) => (r.cost === undefined ? undefined : of(r.cost)))))
  const measures = costs
    .map((_, m) => m)
    .filter((m) => values.length > 0 && values.every((task) => task.every((v) => v[m] !== undefined)))
  return {
    measures,
    tasks: runs.map((task, t) =>
      task.map((r, i) => ({ rounds: r.labels.map(labelScore), costs: measures.map((m) => values[t]![i]![m]!) }))
    )
  }
}

/** Win rounds per task as the statistics read them (the candidate won a round: 1). */
export const winTasks = (samples: RowSamples): Array<{ readonly taskId: string; readonly runs: TaskRuns }> =>
  (samples.win ?? []).flatMap((t) => {
    const runs = t.runs.filter((r) => r.rounds.length > 0).map((r) => r.rounds)
    return runs.length === 0 ? [] : [{ taskId: t.taskId, runs }]
  })

/** `candidate` rounds won by the candidate and `reference` by the reference, as a list of round values. */
export const winRounds = (candidate: number, reference: number): Array<number> => [
  ...Array.from({ length: candidate }, () => 1),
  ...Array.from({ length: reference }, () => 0)
]
