// Estimators for comparisons a paper can stand on: bootstrap intervals over tasks, paired differences, McNemar's exact
// test, a noise floor, pass@k and pass^k. Pure functions of the labels and a seed: the same input gives the same bytes.
import { rngFor } from "../eval/rng.ts"

/**
 * One task of a row: its agent runs, each the list of its judge rounds' values in [0, 1] (a pass label:
 * Solved 1, Unsure 0.5, Unsolved or missing 0; a win round: 1 the candidate won, 0 the reference won).
 */
export type TaskRuns = ReadonlyArray<ReadonlyArray<number>>

/**
 * How a run's rounds make the run's value: `mean` (a pass score, ToolEval's SoPR) or `majority` (1 when more
 * than half the rounds say 1, else 0: ToolEval's win, "the candidate won more rounds than the reference").
 */
export type RoundRule = "mean" | "majority"

/** A point estimate with its 95% interval (percentile bootstrap), all on the estimate's scale. */
export interface Interval {
  readonly estimate: number
  readonly low: number
  readonly high: number
}

export interface BootstrapOptions {
  /** Bootstrap resamples (B). */
  readonly resamples: number
  /** The seed; each estimate also keys its generator by `key`, so one row's interval never depends on the others. */
  readonly seed: number
  readonly key: string
}

/** The default number of resamples: enough for a percentile interval's ends to settle to about 0.5 points. */
export const DEFAULT_RESAMPLES = 2000
/** The default seed of `smurfs compare --seed`. */
export const DEFAULT_SEED = 20_240_531
/** z for a two-sided 95% interval. */
export const Z_95 = 1.959963984540054
/** z for 80% power (one-sided 0.8 quantile of the normal). */
export const Z_POWER_80 = 0.8416212335729143

const mean = (values: ReadonlyArray<number>): number =>
  values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length

/** A run's value from its rounds (no rounds: 0, a missing judgement as ToolEval scores it). */
export const runValue = (rounds: ReadonlyArray<number>, rule: RoundRule): number => {
  const m = mean(rounds)
  return rule === "mean" ? m : m > 0.5 ? 1 : 0
}

/** A task's value: the mean of its runs' values. */
export const taskValue = (runs: TaskRuns, rule: RoundRule): number => mean(runs.map((r) => runValue(r, rule)))

/** Whether a task is solved by majority (its value over 0.5): what McNemar's test compares. */
export const solvedByMajority = (runs: TaskRuns, rule: RoundRule): boolean => taskValue(runs, rule) > 0.5

/** The q-quantile of sorted values, linear between order statistics (numpy's default, Hyndman-Fan type 7). */
export const quantileSorted = (sorted: ReadonlyArray<number>, q: number): number => {
  if (sorted.length === 0) return Number.NaN
  const at = (sorted.length - 1) * q
  const lo = Math.floor(at)
  const hi = Math.ceil(at)
  const a = sorted[lo]!
  const b = sorted[hi]!
  // (Infinity - Infinity would be NaN: an end at infinity stays there)
  return lo === hi || a === b ? a : a + (b - a) * (at - lo)
}

/** The 2.5% and 97.5% percentiles of the replicates (sorted in place). */
const percentileInterval = (estimate: number, replicates: Array<number>): Interval => {
  replicates.sort((a, b) => a - b)
  return { estimate, low: quantileSorted(replicates, 0.025), high: quantileSorted(replicates, 0.975) }
}

const draw = (rng: () => number, n: number): number => (n === 1 ? 0 : Math.floor(rng() * n))

/** A run ready to resample: its rounds, and its value when every round says the same (no draw changes it). */
interface PreparedRun {
  readonly rounds: ReadonlyArray<number>
  readonly fixed: number | undefined
}

/** A task ready to resample: its runs, and its value when no draw can change it (every run fixed at one value). */
interface PreparedTask {
  readonly runs: ReadonlyArray<PreparedRun>
  readonly fixed: number | undefined
  /**
   * The exact distribution of the resampled task value, when the labels allow it: `values[i]` with cumulative
   * probability `cdf[i]`; one uniform draw then resamples the task as its m + m*K draws would.
   */
  readonly exact?: { readonly values: ReadonlyArray<number>; readonly cdf: ReadonlyArray<number> } | undefined
}

const prepareRun = (rounds: ReadonlyArray<number>, rule: RoundRule): PreparedRun => ({
  rounds,
  fixed: rounds.length === 0 || rounds.every((r) => r === rounds[0]) ? runValue(rounds, rule) : undefined
})

/** The distribution of a sum of independent draws: the convolution of two probability vectors. */
const convolve = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): Array<number> => {
  const out = new Array<number>(a.length + b.length - 1).fill(0)
  for (let i = 0; i < a.length; i++) if (a[i]! > 0) for (let j = 0; j < b.length; j++) out[i + j]! += a[i]! * b[j]!
  return out
}

/** The n-fold convolution of a probability vector with itself (the sum of n draws). */
const convolvePower = (p: ReadonlyArray<number>, n: number): Array<number> => {
  let out: Array<number> = [1]
  for (let i = 0; i < n; i++) out = convolve(out, p)
  return out
}

/** Largest support (units) of an exact task distribution; beyond it the task is resampled draw by draw. */
const MAX_EXACT_SUPPORT = 4096

/**
 * The exact distribution of a task's resampled value, when every run has the same K rounds and every round value is
 * a multiple of 1/2 (pass labels, win rounds): a run's resampled rounds sum to 0..2K half-points (the K-fold
 * convolution of its rounds' frequencies); a drawn run is any run with probability 1/m; the task sums m drawn runs.
 */
const exactOf = (runs: TaskRuns, rule: RoundRule): PreparedTask["exact"] => {
  const m = runs.length
  const k = runs[0]?.length ?? 0
  if (
    m === 0 ||
    k === 0 ||
    runs.some((r) => r.length !== k || r.some((v) => !Number.isInteger(2 * v) || v < 0 || v > 1))
  )
    return undefined
  // a drawn run's value in units: half-points of the round sum (mean), or 0/1 (majority)
  const units = rule === "mean" ? 2 * k : 1
  if (m * units > MAX_EXACT_SUPPORT) return undefined
  const mixture = new Array<number>(units + 1).fill(0)
  for (const rounds of runs) {
    const round = [0, 0, 0]
    for (const v of rounds) round[2 * v]! += 1 / k
    const sum = convolvePower(round, k) // half-points 0..2k
    // majority: the run is 1 when its mean u / 2k is over 0.5
    sum.forEach((p, u) => {
      mixture[rule === "mean" ? u : u > k ? 1 : 0]! += p / m
    })
  }
  const total = convolvePower(mixture, m)
  const values: Array<number> = []
  const cdf: Array<number> = []
  let c = 0
  total.forEach((p, u) => {
    if (p <= 0) return
    c += p
    values.push(u / (units * m))
    cdf.push(c)
  })
  cdf[cdf.length - 1] = 1
  return { values, cdf }
}

/** Skip the draws that cannot change a value (most tasks' judges agree; many tasks are solved in every run), and
 * draw the others from their exact distribution where the labels allow. */
const prepareTask = (runs: TaskRuns, rule: RoundRule): PreparedTask => {
  const prepared = runs.map((r) => prepareRun(r, rule))
  const first = prepared[0]?.fixed
  const fixed =
    prepared.length === 0 ? 0 : prepared.every((r) => r.fixed !== undefined && r.fixed === first) ? first : undefined
  return { runs: prepared, fixed, ...(fixed === undefined ? { exact: exactOf(runs, rule) } : {}) }
}

/** One run's rounds drawn with replacement, as the run's value. */
const resampleRun = (run: PreparedRun, rule: RoundRule, rng: () => number): number => {
  if (run.fixed !== undefined) return run.fixed
  const k = run.rounds.length
  let s = 0
  for (let j = 0; j < k; j++) s += run.rounds[draw(rng, k)]!
  const v = s / k
  return rule === "mean" ? v : v > 0.5 ? 1 : 0
}

/** One task resampled within: its runs drawn with replacement, and each drawn run's rounds drawn with replacement. */
const resamplePrepared = (task: PreparedTask, rule: RoundRule, rng: () => number): number => {
  if (task.fixed !== undefined) return task.fixed
  if (task.exact !== undefined) {
    const { values, cdf } = task.exact
    const u = rng()
    let lo = 0,
      hi = cdf.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cdf[mid]! > u) hi = mid
      else lo = mid + 1
    }
    return values[lo]!
  }
  const m = task.runs.length
  let total = 0
  for (let i = 0; i < m; i++) total += resampleRun(task.runs[draw(rng, m)]!, rule, rng)
  return total / m
}

/** A task's exact resampling distribution (values and probabilities), when its labels allow one; for tests. */
export const exactResampling = (runs: TaskRuns, rule: RoundRule) => {
  const exact = exactOf(runs, rule)
  return exact?.values.map((value, i) => ({ value, p: exact.cdf[i]! - (i === 0 ? 0 : exact.cdf[i - 1]!) }))
}

/** One task resampled within, draw by draw (runs, then rounds), as `bootstrapMean` describes; for tests. */
export const resampleTaskByDraws = (runs: TaskRuns, rule: RoundRule, rng: () => number): number => {
  const prepared = runs.map((r) => prepareRun(r, rule))
  return resamplePrepared({ runs: prepared, fixed: prepared.length === 0 ? 0 : undefined }, rule, rng)
}

/** One task resampled within (see `bootstrapMean`). */
export const resampleTask = (runs: TaskRuns, rule: RoundRule, rng: () => number): number =>
  resamplePrepared(prepareTask(runs, rule), rule, rng)

/**
 * The mean task value with a 95% cluster-bootstrap interval: each resample draws tasks with replacement (tasks
 * are the clusters), then runs within each drawn task and judge rounds within each drawn run. Resampling within
 * as well as between makes the interval slightly conservative (wider), never narrower.
 */
export const bootstrapMean = (tasks: ReadonlyArray<TaskRuns>, rule: RoundRule, options: BootstrapOptions): Interval => {
  const n = tasks.length
  const estimate = mean(tasks.map((t) => taskValue(t, rule)))
  if (n === 0) return { estimate: Number.NaN, low: Number.NaN, high: Number.NaN }
  const prepared = tasks.map((t) => prepareTask(t, rule))
  const rng = rngFor(options.seed, "mean", options.key)
  const replicates = new Array<number>(options.resamples)
  for (let b = 0; b < options.resamples; b++) {
    let s = 0
    for (let i = 0; i < n; i++) s += resamplePrepared(prepared[draw(rng, n)]!, rule, rng)
    replicates[b] = s / n
  }
  return percentileInterval(estimate, replicates)
}

/** The mean of fixed per-task values with a 95% bootstrap interval over tasks (nothing to resample within). */
export const bootstrapValues = (values: ReadonlyArray<number>, options: BootstrapOptions): Interval =>
  bootstrapMean(
    values.map((v) => [[v]]),
    "mean",
    options
  )

/** Which side a paired difference favours: its interval above 0 (`a`), below 0 (`b`), or covering 0 (`tied`). */
export type Verdict = "a" | "b" | "tied"

export const verdictOf = (interval: Interval): Verdict => (interval.low > 0 ? "a" : interval.high < 0 ? "b" : "tied")

/**
 * The paired difference A - B of mean task values over the same tasks (`a[i]` and `b[i]` are one task), with a
 * 95% paired-bootstrap interval: each resample draws task indices with replacement, and within each drawn task
 * resamples A's runs and rounds and B's independently.
 */
export const pairedDifference = (
  a: ReadonlyArray<TaskRuns>,
  b: ReadonlyArray<TaskRuns>,
  rule: RoundRule,
  options: BootstrapOptions
): Interval & { readonly verdict: Verdict } => {
  if (a.length !== b.length) throw new RangeError(`paired samples differ in length (${a.length} and ${b.length})`)
  const n = a.length
  const estimate = mean(a.map((t, i) => taskValue(t, rule) - taskValue(b[i]!, rule)))
  if (n === 0) return { estimate: Number.NaN, low: Number.NaN, high: Number.NaN, verdict: "tied" }
  const left = a.map((t) => prepareTask(t, rule))
  const right = b.map((t) => prepareTask(t, rule))
  const rng = rngFor(options.seed, "paired", options.key)
  const replicates = new Array<number>(options.resamples)
  for (let r = 0; r < options.resamples; r++) {
    let s = 0
    for (let i = 0; i < n; i++) {
      const j = draw(rng, n)
      s += resamplePrepared(left[j]!, rule, rng) - resamplePrepared(right[j]!, rule, rng)
    }
    replicates[r] = s / n
  }
  const interval = percentileInterval(estimate, replicates)
  return { ...interval, verdict: verdictOf(interval) }
}

/** P(X <= k) for X ~ Binomial(n, 1/2). */
export const binomialHalfCdf = (k: number, n: number): number => {
  if (k < 0) return 0
  if (k >= n) return 1
  let logTerm = -n * Math.LN2 // C(n, 0) / 2^n
  let total = 0
  for (let i = 0; i <= k; i++) {
    total += Math.exp(logTerm)
    logTerm += Math.log(n - i) - Math.log(i + 1)
  }
  return Math.min(1, total)
}

/**
 * McNemar's exact test: the two-sided binomial test of the discordant pairs, `onlyA` tasks only A solved and
 * `onlyB` tasks only B solved, against p = 1/2 (statsmodels' `mcnemar(exact=True)`); 1 when there are none.
 */
export const mcnemarExact = (onlyA: number, onlyB: number): number => {
  const n = onlyA + onlyB
  if (n === 0) return 1
  return Math.min(1, 2 * binomialHalfCdf(Math.min(onlyA, onlyB), n))
}

/** The 2x2 table McNemar's test reads: tasks solved (by majority) by both, by A only, by B only, by neither. */
export interface Concordance {
  readonly both: number
  readonly onlyA: number
  readonly onlyB: number
  readonly neither: number
}

export const concordance = (a: ReadonlyArray<TaskRuns>, b: ReadonlyArray<TaskRuns>, rule: RoundRule): Concordance => {
  let both = 0,
    onlyA = 0,
    onlyB = 0,
    neither = 0
  a.forEach((t, i) => {
    const sa = solvedByMajority(t, rule)
    const sb = solvedByMajority(b[i]!, rule)
    if (sa && sb) both++
    else if (sa) onlyA++
    else if (sb) onlyB++
    else neither++
  })
  return { both, onlyA, onlyB, neither }
}

/** The sample standard deviation (n - 1); 0 for fewer than two values. */
export const sampleStd = (values: ReadonlyArray<number>): number => {
  if (values.length < 2) return 0
  const m = mean(values)
  return Math.sqrt(values.reduce((a, v) => a + (v - m) ** 2, 0) / (values.length - 1))
}

/**
 * The noise floor of a paired comparison at this run's variance, from the per-task differences d_i (their mean d,
 * sample std sd, n tasks), for a two-sided 5% test with 80% power (z = 1.96 + 0.84 = 2.80):
 * - `detectable`: the smallest true difference these n tasks resolve 80% of the time, 2.80 * sd / sqrt(n);
 * - `tasksNeeded`: the tasks a true difference of the observed size needs, ceil((2.80 * sd / d)^2);
 *   undefined when d is 0 (nothing to resolve).
 */
export interface NoiseFloor {
  readonly n: number
  readonly sd: number
  readonly detectable: number
  readonly tasksNeeded: number | undefined
}

export const noiseFloor = (differences: ReadonlyArray<number>): NoiseFloor => {
  const n = differences.length
  const sd = sampleStd(differences)
  const d = Math.abs(mean(differences))
  const z = Z_95 + Z_POWER_80
  const detectable = n === 0 ? Number.NaN : (z * sd) / Math.sqrt(n)
  const tasksNeeded = d === 0 ? undefined : Math.max(1, Math.ceil(((z * sd) / d) ** 2))
  return { n, sd, detectable, tasksNeeded }
}

/** Chen et al. (2021)'s unbiased pass@k of one task with n runs of which c succeeded: 1 - C(n-c, k) / C(n, k). */
export const passAtK = (n: number, c: number, k: number): number => {
  if (k > n || k < 1) throw new RangeError(`pass@k needs 1 <= k <= n (k = ${k}, n = ${n})`)
  if (n - c < k) return 1
  // 1 - prod_{i = n-c+1}^{n} (1 - k / i), their numerically stable form
  let p = 1
  for (let i = n - c + 1; i <= n; i++) p *= 1 - k / i
  return 1 - p
}

/** τ-bench's pass^k of one task: C(c, k) / C(n, k), the chance that k runs drawn without replacement all succeeded. */
export const passHatK = (n: number, c: number, k: number): number => {
  if (k > n || k < 1) throw new RangeError(`pass^k needs 1 <= k <= n (k = ${k}, n = ${n})`)
  if (c < k) return 0
  let p = 1
  for (let i = 0; i < k; i++) p *= (c - i) / (n - i)
  return p
}

/** pass@k and pass^k of a row at one k, each averaged over its tasks with a 95% bootstrap interval over tasks. */
export interface PassK {
  readonly k: number
  readonly passAt: Interval
  readonly passHat: Interval
}

/**
 * pass@k and pass^k for k = 1..(the fewest runs any task has), a run counting as a success when its rounds say
 * so by majority (value over 0.5). Intervals resample tasks only: both estimators are already exact over the runs.
 */
export const passKs = (tasks: ReadonlyArray<TaskRuns>, options: BootstrapOptions): Array<PassK> => {
  if (tasks.length === 0) return []
  const counts = tasks.map((runs) => ({ n: runs.length, c: runs.filter((r) => runValue(r, "mean") > 0.5).length }))
  const most = Math.min(...counts.map((t) => t.n))
  const out: Array<PassK> = []
  for (let k = 1; k <= most; k++) {
    const at = counts.map((t) => passAtK(t.n, t.c, k))
    const hat = counts.map((t) => passHatK(t.n, t.c, k))
    out.push({
      k,
      passAt: bootstrapValues(at, { ...options, key: `${options.key}\u0000pass@${k}` }),
      passHat: bootstrapValues(hat, { ...options, key: `${options.key}\u0000pass^${k}` })
    })
  }
  return out
}

/** One run's costs (one value per measure, in a fixed order) and judge rounds, for cost per task and per solved task. */
export interface CostRun {
  readonly rounds: ReadonlyArray<number>
  readonly costs: ReadonlyArray<number>
}

export interface CostIntervals {
  readonly perTask: Interval
  /** Total cost / solved tasks (a Solved run counts 1, Unsure 0.5); undefined when nothing was solved. */
  readonly perSolved: Interval | undefined
}

/**
 * Mean cost per task and cost per solved task (sum of costs / sum of pass values: a ratio estimator) of each of
 * `measures` costs, with 95% cluster-bootstrap intervals drawn as `bootstrapMean` draws (tasks, then runs, then
 * judge rounds; one resample serves every measure); a resample that solved nothing has no finite cost per solved
 * task and counts as +Infinity (an open upper end).
 */
export const bootstrapCosts = (
  tasks: ReadonlyArray<ReadonlyArray<CostRun>>,
  measures: number,
  options: BootstrapOptions
): Array<CostIntervals> => {
  const n = tasks.length
  if (n === 0)
    return Array.from({ length: measures }, () => ({
      perTask: { estimate: Number.NaN, low: Number.NaN, high: Number.NaN },
      perSolved: undefined
    }))
  // each run as a task of one run: fixed, or drawn from its exact distribution in one draw
  const prepared = tasks.map((runs) => runs.map((r) => ({ task: prepareTask([r.rounds], "mean"), costs: r.costs })))
  const taskPass = tasks.map((runs) => mean(runs.map((r) => runValue(r.rounds, "mean"))))
  const passSum = taskPass.reduce((a, b) => a + b, 0)
  const costSums = Array.from({ length: measures }, (_, m) =>
    tasks.reduce((total, runs) => total + mean(runs.map((r) => r.costs[m]!)), 0)
  )
  const rng = rngFor(options.seed, "cost", options.key)
  const perTask = Array.from({ length: measures }, () => new Array<number>(options.resamples))
  const perSolved = Array.from({ length: measures }, () => new Array<number>(options.resamples))
  const cost = new Array<number>(measures)
  const c = new Array<number>(measures)
  for (let b = 0; b < options.resamples; b++) {
    cost.fill(0)
    let pass = 0
    for (let i = 0; i < n; i++) {
      const runs = prepared[draw(rng, n)]!
      const m = runs.length
      c.fill(0)
      let p = 0
      for (let j = 0; j < m; j++) {
        const run = runs[draw(rng, m)]!
        for (let k = 0; k < measures; k++) c[k] = c[k]! + run.costs[k]!
        p += resamplePrepared(run.task, "mean", rng)
      }
      if (m === 0) continue
      for (let k = 0; k < measures; k++) cost[k] = cost[k]! + c[k]! / m
      pass += p / m
    }
    for (let k = 0; k < measures; k++) {
      perTask[k]![b] = cost[k]! / n
      perSolved[k]![b] = pass === 0 ? Number.POSITIVE_INFINITY : cost[k]! / pass
    }
  }
  return costSums.map((sum, k) => ({
    perTask: percentileInterval(sum / n, perTask[k]!),
    perSolved: passSum === 0 ? undefined : percentileInterval(sum / passSum, perSolved[k]!)
  }))
}

/** One cost's intervals (`bootstrapCosts` of a single measure). */
export const bootstrapCost = (
  tasks: ReadonlyArray<ReadonlyArray<{ readonly rounds: ReadonlyArray<number>; readonly cost: number }>>,
  options: BootstrapOptions
): CostIntervals =>
  bootstrapCosts(
    tasks.map((runs) => runs.map((r) => ({ rounds: r.rounds, costs: [r.cost] }))),
    1,
    options
  )[0]!
