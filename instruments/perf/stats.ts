// Summary statistics for the perf benchmarks: mean, percentiles, max.

/** The q-quantile (0..1) of the values by linear interpolation; NaN when there are none. */
export const quantile = (values: ReadonlyArray<number>, q: number): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const at = (sorted.length - 1) * q
  const lo = Math.floor(at)
  const hi = Math.ceil(at)
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo)
}

export const mean = (values: ReadonlyArray<number>): number =>
  values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length

export const sum = (values: ReadonlyArray<number>): number => values.reduce((a, b) => a + b, 0)

export const max = (values: ReadonlyArray<number>): number =>
  values.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY)

/** Median, p95, mean and max of a sample, rounded for printing and JSON. */
export const summary = (values: ReadonlyArray<number>, digits = 3) => {
  const round = (n: number) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : null)
  return {
    n: values.length,
    median: round(quantile(values, 0.5)),
    p95: round(quantile(values, 0.95)),
    mean: round(mean(values)),
    max: round(values.length ? max(values) : Number.NaN)
  }
}

/** The makespan of running tasks with these durations in order on `slots` slots, each taking the next task when free. */
export const listSchedule = (durations: ReadonlyArray<number>, slots: number): number => {
  const free = new Array<number>(Math.max(1, slots)).fill(0)
  for (const d of durations) {
    let i = 0
    for (let j = 1; j < free.length; j++) if (free[j]! < free[i]!) i = j
    free[i]! += d
  }
  return max(free)
}
