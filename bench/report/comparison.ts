// The statistics of a comparison: each row's intervals, pass@k / pass^k and cost per solved task; each pair of rows on
// the same tasks with its paired difference, verdict, McNemar's p and noise floor; the judges' agreement.
import type { JudgeCost } from "../eval/judge-input.ts"
import type { AnswerStatus } from "../eval/labels.ts"
import { labelScore } from "../eval/pass-rate.ts"
import { type Alpha, cohenKappa, type Kappa, krippendorffAlpha, type Rating } from "./agreement.ts"
import { judgeTextsLabel, type Row } from "./collect.ts"
import { type GpuModel, gpuSeconds } from "./gpu-model.ts"
import { costTasks, passTasks, winTasks } from "./samples.ts"
import {
  type BootstrapOptions,
  bootstrapCosts,
  bootstrapMean,
  type CostIntervals,
  concordance,
  DEFAULT_RESAMPLES,
  DEFAULT_SEED,
  type Interval,
  mcnemarExact,
  type NoiseFloor,
  noiseFloor,
  type PassK,
  pairedDifference,
  passKs,
  type RoundRule,
  type TaskRuns,
  taskValue,
  type Verdict
} from "./stats.ts"

export interface StatisticsOptions {
  readonly seed: number
  readonly resamples: number
  /** With a modelled server (`--gpu-model`), GPU seconds are one more cost. */
  readonly gpu?: GpuModel | undefined
}

export const DEFAULT_STATISTICS: StatisticsOptions = { seed: DEFAULT_SEED, resamples: DEFAULT_RESAMPLES }

/** The costs a row reports, each per task and per solved task; GPU seconds only with a modelled server. */
export const COST_MEASURES = [
  { name: "modelCalls", label: "model calls" },
  { name: "promptTokens", label: "prompt tok" },
  { name: "completionTokens", label: "compl tok" },
  { name: "toolCalls", label: "tool calls" },
  { name: "wallSeconds", label: "wall s" },
  { name: "gpuSeconds", label: "GPU s" }
] as const
export type CostMeasure = (typeof COST_MEASURES)[number]["name"]

/** A cost of one run, when its source records it. */
const costOf = (measure: CostMeasure, c: JudgeCost, gpu: GpuModel | undefined): number | undefined => {
  switch (measure) {
    case "wallSeconds":
      return c.wallMs === undefined ? undefined : c.wallMs / 1000
    case "gpuSeconds":
      return gpu === undefined ? undefined : gpuSeconds(gpu, c)
    default:
      return c[measure]
  }
}

export interface RowStatistics {
  /** The row's index in `rows`. */
  readonly row: number
  readonly name: string
  /** Judged tasks the pass statistics are over, the most agent runs any has, and judge rounds (K). */
  readonly tasks: number
  readonly runs: number
  readonly rounds: number
  /** Pass rate in points with its 95% interval (cluster bootstrap), and the judge's std over rounds (ToolEval's). */
  readonly pass?: (Interval & { readonly judgeStd: number | undefined }) | undefined
  /** pass@k and pass^k in points for k = 1..runs, when the tasks have more than one agent run. */
  readonly passK?: ReadonlyArray<PassK> | undefined
  /** Win rate in points against `reference`, with its 95% interval. */
  readonly win?: (Interval & { readonly reference: string; readonly tasks: number }) | undefined
  /** Each cost per task and per solved task, when every judged run records it. */
  readonly cost: Partial<Record<CostMeasure, CostIntervals>>
}

export interface PairStatistics {
  /** `pass` (pass rates) or `win` (win rates against the same reference). */
  readonly kind: "pass" | "win"
  readonly reference?: string | undefined
  readonly group: string
  readonly judge: string
  /** Rows' indices and names: the difference is A - B. */
  readonly a: number
  readonly b: number
  readonly nameA: string
  readonly nameB: string
  /** Tasks both rows have (the paired sample). */
  readonly tasks: number
  /** Tasks only one side has, left out of the pair. */
  readonly unpaired: number
  /** A - B in points, with its 95% paired-bootstrap interval. */
  readonly difference: Interval
  readonly verdict: Verdict
  /** "A ahead", "B ahead" or "tied (the interval covers 0)", with the rows' names. */
  readonly verdictText: string
  /** McNemar's exact test on the per-task majority (solved, or won). */
  readonly mcnemar: {
    readonly both: number
    readonly onlyA: number
    readonly onlyB: number
    readonly neither: number
    readonly p: number
  }
  /** In points: the paired differences' sd, the difference 80% power resolves at these tasks, tasks needed for this one. */
  readonly noiseFloor: NoiseFloor
}

export interface RoundsAgreement {
  readonly judge: string
  /** Judge rounds (raters). */
  readonly rounds: number
  /** Answers with at least two rounds. */
  readonly answers: number
  readonly alpha: number | undefined
  /** Cohen's kappa of rounds 0 and 1, when K is 2. */
  readonly kappa?: number | undefined
}

export interface JudgePairAgreement {
  readonly a: string
  readonly b: string
  /** Answers both judges labelled. */
  readonly answers: number
  readonly kappa: number | undefined
  /** Share of those answers with the same label. */
  readonly observed: number
}

export interface Agreement {
  /** Each judge's rounds against each other (a judge with one round is left out). */
  readonly rounds: ReadonlyArray<RoundsAgreement>
  /** Each pair of judges over the answers both labelled, each judge's label being its rounds' majority. */
  readonly judges: ReadonlyArray<JudgePairAgreement>
  /** Every judge at once, when three or more labelled the same answers. */
  readonly all?: (Alpha & { readonly judges: ReadonlyArray<string> }) | undefined
}

export interface Statistics {
  readonly seed: number
  readonly resamples: number
  /** The modelled server GPU seconds were computed with, when asked for. */
  readonly gpu?: GpuModel | undefined
  readonly rows: ReadonlyArray<RowStatistics>
  readonly pairs: ReadonlyArray<PairStatistics>
  readonly agreement: Agreement
}

const points = (i: Interval): Interval => ({ estimate: 100 * i.estimate, low: 100 * i.low, high: 100 * i.high })

/** A row's name where the group and judge go without saying: its source and method (with a profile that is not ours). */
export const rowName = (row: Row): string => `${row.source}/${row.method}${row.profile ? ` (${row.profile})` : ""}`

/** A judge as a rater: its label folder, and the judge texts when a row says which. */
const raterOf = (row: Row): string => `${row.judge}${row.judgeTexts ? ` (${judgeTextsLabel(row.judgeTexts)})` : ""}`

/** Rows with the same pass labels (a row per win reference repeats them): the first of each is kept for pass figures. */
const passKey = (row: Row) =>
  [row.source, row.method, row.profile ?? "", row.group, row.judge, row.judgeTexts ?? ""].join("\u0000")

const rowStatistics = (row: Row, index: number, options: StatisticsOptions): RowStatistics => {
  const samples = row.samples
  const boot = (part: string): BootstrapOptions => ({ ...options, key: `${passKey(row)}\u0000${part}` })
  const tasks = samples ? passTasks(samples) : []
  const runs = Math.max(0, ...tasks.map((t) => t.runs.length))
  const fewest = Math.min(...tasks.map((t) => t.runs.length))
  const pass =
    tasks.length === 0
      ? undefined
      : {
          ...points(
            bootstrapMean(
              tasks.map((t) => t.runs),
              "mean",
              boot("pass")
            )
          ),
          judgeStd: row.pass?.std
        }
  const passK =
    tasks.length > 0 && fewest > 1
      ? passKs(
          tasks.map((t) => t.runs),
          boot("passk")
        ).map((p) => ({ k: p.k, passAt: points(p.passAt), passHat: points(p.passHat) }))
      : undefined
  const wins = samples ? winTasks(samples) : []
  const win =
    row.win && wins.length > 0
      ? {
          ...points(
            bootstrapMean(
              wins.map((t) => t.runs),
              "majority",
              boot(`win\u0000${row.win.reference}`)
            )
          ),
          reference: row.win.reference,
          tasks: wins.length
        }
      : undefined
  const cost: Partial<Record<CostMeasure, CostIntervals>> = {}
  if (samples) {
    const { measures, tasks: costed } = costTasks(
      samples,
      COST_MEASURES.map((m) => (c: JudgeCost) => costOf(m.name, c, options.gpu))
    )
    const intervals = bootstrapCosts(costed, measures.length, boot("cost"))
    measures.forEach((m, i) => {
      cost[COST_MEASURES[m]!.name] = intervals[i]!
    })
  }
  return {
    row: index,
    name: rowName(row),
    tasks: tasks.length,
    runs,
    rounds: samples?.k ?? 0,
    ...(pass ? { pass } : {}),
    ...(passK ? { passK } : {}),
    ...(win ? { win } : {}),
    cost
  }
}

/** The paired statistics of two rows' task values over the tasks both have. */
const pairOf = (
  kind: "pass" | "win",
  rule: RoundRule,
  a: { readonly index: number; readonly row: Row; readonly tasks: ReadonlyArray<{ taskId: string; runs: TaskRuns }> },
  b: { readonly index: number; readonly row: Row; readonly tasks: ReadonlyArray<{ taskId: string; runs: TaskRuns }> },
  options: StatisticsOptions
): PairStatistics | undefined => {
  const byId = new Map(b.tasks.map((t) => [t.taskId, t.runs]))
  const common = a.tasks.filter((t) => byId.has(t.taskId))
  if (common.length === 0) return undefined
  const left = common.map((t) => t.runs)
  const right = common.map((t) => byId.get(t.taskId)!)
  const key = [kind, a.row.win?.reference ?? "", passKey(a.row), passKey(b.row)].join("\u0001")
  const d = pairedDifference(left, right, rule, { ...options, key })
  const table = concordance(left, right, rule)
  const floor = noiseFloor(left.map((t, i) => taskValue(t, rule) - taskValue(right[i]!, rule)))
  const nameA = rowName(a.row)
  const nameB = rowName(b.row)
  return {
    kind,
    ...(kind === "win" ? { reference: a.row.win?.reference } : {}),
    group: a.row.group,
    judge: raterOf(a.row),
    a: a.index,
    b: b.index,
    nameA,
    nameB,
    tasks: common.length,
    unpaired: a.tasks.length + b.tasks.length - 2 * common.length,
    difference: points(d),
    verdict: d.verdict,
    verdictText:
      d.verdict === "a" ? `${nameA} ahead` : d.verdict === "b" ? `${nameB} ahead` : "tied (the interval covers 0)",
    mcnemar: { ...table, p: mcnemarExact(table.onlyA, table.onlyB) },
    noiseFloor: { ...floor, sd: 100 * floor.sd, detectable: 100 * floor.detectable }
  }
}

/** Every pair of rows of one group and judge (and, for win rates, one reference), to be computed one by one. */
const pairsOf = (rows: ReadonlyArray<Row>, options: StatisticsOptions): Array<() => PairStatistics | undefined> => {
  const seen = new Set<string>()
  const pass: Array<{ index: number; row: Row; tasks: Array<{ taskId: string; runs: TaskRuns }> }> = []
  const win: typeof pass = []
  rows.forEach((row, index) => {
    if (!row.samples || row.judge === "") return
    const key = passKey(row)
    if (!seen.has(key)) {
      seen.add(key)
      const tasks = passTasks(row.samples)
      if (tasks.length > 0) pass.push({ index, row, tasks })
    }
    const wins = winTasks(row.samples)
    if (row.win && wins.length > 0) win.push({ index, row, tasks: wins })
  })
  const out: Array<() => PairStatistics | undefined> = []
  const together = (a: Row, b: Row) =>
    a.group === b.group && a.judge === b.judge && (a.judgeTexts ?? "") === (b.judgeTexts ?? "")
  for (const [list, kind, rule] of [
    [pass, "pass", "mean"],
    [win, "win", "majority"]
  ] as const)
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i]!
        const b = list[j]!
        if (!together(a.row, b.row)) continue
        if (kind === "win" && a.row.win?.reference !== b.row.win?.reference) continue
        out.push(() => pairOf(kind, rule, a, b, options))
      }
  return out
}

/** A judge's label of an answer from its rounds: Solved when their mean score is over 0.5, Unsolved under, else Unsure. */
export const majorityLabel = (labels: ReadonlyArray<AnswerStatus | undefined>): AnswerStatus | undefined => {
  const present = labels.filter((l): l is AnswerStatus => l !== undefined)
  if (present.length === 0) return undefined
  const score = present.reduce((s, l) => s + labelScore(l), 0) / present.length
  return score > 0.5 ? "Solved" : score < 0.5 ? "Unsolved" : "Unsure"
}

/** Agreement of each judge's rounds, of each pair of judges on the same answers, and of all judges together. */
export const agreementOf = (rows: ReadonlyArray<Row>): Agreement => {
  // answers (source, method, profile, group, task, agent run) -> rater -> labels by round
  const answers = new Map<string, Map<string, ReadonlyArray<AnswerStatus | undefined>>>()
  const seen = new Set<string>()
  for (const row of rows) {
    if (!row.samples || row.judge === "" || seen.has(passKey(row))) continue
    seen.add(passKey(row))
    const rater = raterOf(row)
    for (const t of row.samples.tasks)
      for (const r of t.runs) {
        if (r.labels.length === 0) continue
        const key = [row.source, row.method, row.profile ?? "", row.group, t.taskId, r.run].join("\u0000")
        const byRater = answers.get(key) ?? new Map()
        byRater.set(rater, r.labels)
        answers.set(key, byRater)
      }
  }
  const raters = [...new Set([...answers.values()].flatMap((m) => [...m.keys()]))].sort()
  const rounds = raters.flatMap((rater): Array<RoundsAgreement> => {
    const units = [...answers.values()].flatMap((m) => (m.has(rater) ? [m.get(rater)! as ReadonlyArray<Rating>] : []))
    const k = Math.max(0, ...units.map((u) => u.length))
    if (k < 2) return []
    const alpha = krippendorffAlpha(units)
    const kappa: Kappa | undefined = k === 2 ? cohenKappa(units.map((u) => [u[0], u[1]] as const)) : undefined
    return [
      { judge: rater, rounds: k, answers: alpha.units, alpha: alpha.alpha, ...(kappa ? { kappa: kappa.kappa } : {}) }
    ]
  })
  const judges: Array<JudgePairAgreement> = []
  for (let i = 0; i < raters.length; i++)
    for (let j = i + 1; j < raters.length; j++) {
      const pairs = [...answers.values()].flatMap((m) =>
        m.has(raters[i]!) && m.has(raters[j]!)
          ? [[majorityLabel(m.get(raters[i]!)!), majorityLabel(m.get(raters[j]!)!)] as const]
          : []
      )
      const k = cohenKappa(pairs)
      if (k.n > 0) judges.push({ a: raters[i]!, b: raters[j]!, answers: k.n, kappa: k.kappa, observed: k.observed })
    }
  let all: Agreement["all"]
  if (raters.length >= 3) {
    const units = [...answers.values()].map((m) => raters.map((r) => (m.has(r) ? majorityLabel(m.get(r)!) : undefined)))
    const alpha = krippendorffAlpha(units)
    if (alpha.units > 0) all = { ...alpha, judges: raters }
  }
  return { rounds, judges, ...(all ? { all } : {}) }
}

/**
 * Every statistic of a comparison; the same rows, seed and resamples always give the same numbers. `progress` hears
 * of each row and pair done (a large comparison takes seconds).
 */
export const compareStatistics = (
  rows: ReadonlyArray<Row>,
  options: StatisticsOptions = DEFAULT_STATISTICS,
  progress?: (done: number, total: number) => void
): Statistics => {
  const pending = pairsOf(rows, options)
  const total = rows.length + pending.length
  let done = 0
  const step = <A>(a: A): A => (progress?.(++done, total), a)
  const perRow = rows.map((row, i) => step(rowStatistics(row, i, options)))
  const pairs = pending.flatMap((pair) => {
    const p = step(pair())
    return p ? [p] : []
  })
  return {
    seed: options.seed,
    resamples: options.resamples,
    ...(options.gpu ? { gpu: options.gpu } : {}),
    rows: perRow,
    pairs,
    agreement: agreementOf(rows)
  }
}
