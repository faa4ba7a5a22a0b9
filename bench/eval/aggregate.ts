// Aggregation exactly as ToolEval: per judge run, the mean score over the N tasks; mean ± population std over runs.
import type { AnswerStatus } from "./labels.ts"
import { labelScore } from "./pass-rate.ts"

export interface PassRate {
  /** 100 * mean over runs of SoPR_r. */
  readonly mean: number
  /** 100 * population standard deviation over runs. */
  readonly std: number
  /** SoPR_r per run, as fractions. */
  readonly perRun: ReadonlyArray<number>
  readonly n: number
  readonly runs: number
}

/**
 * SoPR from labels per task (index = run). A task without a label for a run scores 0 in that run,
 * as in ToolEval's `eval_pass_rate.py`; N is the number of tasks given.
 */
export const passRate = (labels: ReadonlyArray<ReadonlyArray<AnswerStatus | undefined>>, runs: number): PassRate => {
  const n = labels.length
  const perRun = Array.from({ length: runs }, (_, r) =>
    n === 0 ? 0 : labels.reduce((sum, task) => sum + labelScore(task[r]), 0) / n
  )
  const mean = perRun.length === 0 ? 0 : perRun.reduce((a, b) => a + b, 0) / perRun.length
  const variance = perRun.length === 0 ? 0 : perRun.reduce((a, b) => a + (b - mean) ** 2, 0) / perRun.length
  return { mean: 100 * mean, std: 100 * Math.sqrt(variance), perRun, n, runs }
}

export interface WinRate {
  /** 100 * wins / N. */
  readonly rate: number
  readonly wins: number
  readonly ties: number
  readonly losses: number
  readonly n: number
}

/** SoWR from rounds won per task: a task is a win when the candidate won more rounds than the reference. */
export const winRate = (tasks: ReadonlyArray<{ readonly candidate: number; readonly reference: number }>): WinRate => {
  let wins = 0,
    ties = 0,
    losses = 0
  for (const t of tasks) {
    if (t.candidate > t.reference) wins++
    else if (t.candidate < t.reference) losses++
    else ties++
  }
  const n = tasks.length
  return { rate: n === 0 ? 0 : (100 * wins) / n, wins, ties, losses, n }
}
