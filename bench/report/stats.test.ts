import { describe, expect, it } from "vitest"
import { makeRng } from "../eval/rng.ts"
import { cohenKappa, krippendorffAlpha } from "./agreement.ts"
import {
  binomialHalfCdf,
  bootstrapCost,
  bootstrapMean,
  concordance,
  exactResampling,
  mcnemarExact,
  noiseFloor,
  pairedDifference,
  passAtK,
  passHatK,
  passKs,
  quantileSorted,
  resampleTaskByDraws,
  runValue,
  type TaskRuns,
  taskValue,
  Z_95,
  Z_POWER_80
} from "./stats.ts"

// Reference values below were printed by Debian bookworm's python3 with scipy 1.10.1, statsmodels 0.13.5,
// scikit-learn 1.2.1 and numpy; the call that produced each is in the comment beside it.

const opts = (key: string, resamples = 2000, seed = 7) => ({ key, resamples, seed })
const single = (value: number): TaskRuns => [[value]]

describe("task values", () => {
  it("average judge rounds within a run and runs within a task (Solved 1, Unsure 0.5, Unsolved 0)", () => {
    expect(runValue([1, 0.5, 0], "mean")).toBe(0.5)
    // a win is the candidate winning more than half the rounds: 2 of 3 is a win, 1 of 2 is not
    expect(runValue([1, 1, 0], "majority")).toBe(1)
    expect(runValue([1, 0], "majority")).toBe(0)
    // runs (1 + 1 + 0.5) / 3, (0) / 1 -> (0.8333 + 0) / 2
    expect(taskValue([[1, 1, 0.5], [0]], "mean")).toBeCloseTo(0.416667, 6)
  })

  it("quantiles as numpy's default (linear, type 7)", () => {
    // numpy.quantile([0.1, 0.4, 0.2, 0.9, 0.5], 0.025) -> 0.11000000000000001; (..., 0.975) -> 0.86
    const sorted = [0.1, 0.2, 0.4, 0.5, 0.9]
    expect(quantileSorted(sorted, 0.025)).toBeCloseTo(0.11, 12)
    expect(quantileSorted(sorted, 0.975)).toBeCloseTo(0.86, 12)
    expect(quantileSorted([1, Number.POSITIVE_INFINITY], 0.975)).toBe(Number.POSITIVE_INFINITY)
  })
})

describe("bootstrap intervals", () => {
  it("give the same bytes for the same seed and labels, and other bytes for another seed", () => {
    const tasks: Array<TaskRuns> = Array.from({ length: 30 }, (_, i) => [
      [i % 2, (i * 7) % 3 === 0 ? 1 : 0.5],
      [i % 3 === 0 ? 1 : 0, 0]
    ])
    const once = JSON.stringify(bootstrapMean(tasks, "mean", opts("row")))
    expect(JSON.stringify(bootstrapMean(tasks, "mean", opts("row")))).toBe(once)
    expect(JSON.stringify(bootstrapMean(tasks, "mean", opts("row", 2000, 8)))).not.toBe(once)
  })

  it("collapse to the value when every task has the same single label", () => {
    const interval = bootstrapMean([single(1), single(1), single(1)], "mean", opts("same"))
    expect(interval).toEqual({ estimate: 1, low: 1, high: 1 })
  })

  it("resample runs and judge rounds within a task, not only tasks", () => {
    // one task, runs [1] and [0]: a resample draws two runs, (1,1) 1/4, mixed 1/2, (0,0) 1/4 -> the interval is [0, 1];
    // resampling tasks only would give [0.5, 0.5]
    expect(bootstrapMean([[[1], [0]]], "mean", opts("within"))).toEqual({ estimate: 0.5, low: 0, high: 1 })
    // one run with rounds Solved, Unsolved: the same within the judge rounds
    expect(bootstrapMean([[[1, 0]]], "mean", opts("rounds"))).toEqual({ estimate: 0.5, low: 0, high: 1 })
  })

  it("match the normal interval of a proportion on a large sample", () => {
    // 400 tasks, 200 solved: p = 0.5 +- 1.96 * sqrt(0.25 / 400) = [0.451, 0.549]
    const tasks = Array.from({ length: 400 }, (_, i) => single(i % 2))
    const interval = bootstrapMean(tasks, "mean", opts("normal", 4000))
    expect(interval.estimate).toBe(0.5)
    expect(interval.low).toBeCloseTo(0.451, 2)
    expect(interval.high).toBeCloseTo(0.549, 2)
  })

  it("cover the true pass rate about 95% of the time (200 simulated benchmarks of 80 tasks)", () => {
    const truth = 0.3
    const rng = makeRng(12345)
    let covered = 0
    const trials = 200
    for (let t = 0; t < trials; t++) {
      // each task: 2 runs of 1 judge round, solved with probability `truth`
      const tasks = Array.from({ length: 80 }, () => [[rng() < truth ? 1 : 0], [rng() < truth ? 1 : 0]])
      const i = bootstrapMean(tasks, "mean", opts(`trial ${t}`, 500))
      if (i.low <= truth && truth <= i.high) covered++
    }
    // a percentile bootstrap slightly under-covers on small samples, the within-task draws slightly over-cover
    expect(covered / trials).toBeGreaterThanOrEqual(0.9)
    expect(covered / trials).toBeLessThanOrEqual(0.99)
  })
})

describe("a task resampled within", () => {
  it("has the exact distribution its draws have: runs [1] and [0] give 0, 0.5, 1 with 1/4, 1/2, 1/4", () => {
    expect(exactResampling([[1], [0]], "mean")).toEqual([
      { value: 0, p: 0.25 },
      { value: 0.5, p: 0.5 },
      { value: 1, p: 0.25 }
    ])
    // a win task of one run with rounds won, lost, won: 3 draws win by majority with 1 - P(at most one win)
    // = 1 - (1/3)^3 - 3 * (2/3) * (1/3)^2 = 20/27
    const win = exactResampling([[1, 0, 1]], "majority")!
    expect(win.map((w) => w.value)).toEqual([0, 1])
    expect(win[1]!.p).toBeCloseTo(20 / 27, 12)
  })

  it("draws from the exact distribution with the moments of draw-by-draw resampling", () => {
    const task = [
      [1, 0.5, 0],
      [1, 1, 0],
      [0, 0, 0.5]
    ]
    const exact = exactResampling(task, "mean")!
    const mean = exact.reduce((a, x) => a + x.value * x.p, 0)
    const variance = exact.reduce((a, x) => a + (x.value - mean) ** 2 * x.p, 0)
    expect(exact.reduce((a, x) => a + x.p, 0)).toBeCloseTo(1, 12)
    // the resampled value is unbiased: its mean is the task's value (0.5 + 0.6667 + 0.1667) / 3
    expect(mean).toBeCloseTo(4 / 9, 12)
    const rng = makeRng(3)
    const draws = Array.from({ length: 40_000 }, () => resampleTaskByDraws(task, "mean", rng))
    const m = draws.reduce((a, b) => a + b, 0) / draws.length
    const v = draws.reduce((a, b) => a + (b - m) ** 2, 0) / draws.length
    expect(m).toBeCloseTo(mean, 2)
    expect(v).toBeCloseTo(variance, 3)
  })
})

describe("paired differences", () => {
  it("are tied with an interval of [0, 1] when half the tasks differ by 1 among two tasks", () => {
    // differences 1 and 0: a resample of two tasks has mean 0 (1/4), 0.5 (1/2) or 1 (1/4)
    const d = pairedDifference([single(1), single(0)], [single(0), single(0)], "mean", opts("pair"))
    expect(d).toEqual({ estimate: 0.5, low: 0, high: 1, verdict: "tied" })
  })

  it("name the side ahead when the interval excludes 0, either way", () => {
    const a = Array.from({ length: 40 }, (_, i) => single(i < 30 ? 1 : 0))
    const b = Array.from({ length: 40 }, (_, i) => single(i < 10 ? 1 : 0))
    const ab = pairedDifference(a, b, "mean", opts("ab"))
    expect(ab.estimate).toBe(0.5)
    expect(ab.verdict).toBe("a")
    expect(pairedDifference(b, a, "mean", opts("ab")).verdict).toBe("b")
  })

  it("are exactly 0 for two identical rows of single labels", () => {
    const a = Array.from({ length: 10 }, (_, i) => single(i % 2))
    expect(pairedDifference(a, a, "mean", opts("same"))).toEqual({ estimate: 0, low: 0, high: 0, verdict: "tied" })
  })

  it("refuse samples of different lengths", () => {
    expect(() => pairedDifference([single(1)], [], "mean", opts("x"))).toThrow(/differ in length/)
  })
})

describe("McNemar's exact test", () => {
  it("matches statsmodels' mcnemar(exact=True)", () => {
    // from statsmodels.stats.contingency_tables import mcnemar
    // mcnemar([[5, b], [c, 9]], exact=True).pvalue, equal to scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue
    expect(mcnemarExact(1, 5)).toBeCloseTo(0.21875, 14)
    expect(mcnemarExact(10, 3)).toBeCloseTo(0.09228515625, 14)
    expect(mcnemarExact(0, 4)).toBeCloseTo(0.125, 14)
    expect(mcnemarExact(40, 60)).toBeCloseTo(0.05688793364098088, 12)
    expect(mcnemarExact(700, 800)).toBeCloseTo(0.01055925546671162, 12)
    expect(mcnemarExact(7, 7)).toBe(1)
    expect(mcnemarExact(0, 0)).toBe(1)
  })

  it("sums the binomial tail by hand on a small case", () => {
    // P(X <= 1), X ~ Bin(6, 1/2) = (1 + 6) / 64
    expect(binomialHalfCdf(1, 6)).toBeCloseTo(7 / 64, 15)
  })

  it("reads the per-task majority: a task solved in 2 of 3 runs is solved, 1 of 2 is not", () => {
    const a: Array<TaskRuns> = [[[1], [1], [0]], [[1], [0]], [[1]], [[0]]]
    const b: Array<TaskRuns> = [[[0], [0], [0]], [[1], [1]], [[1]], [[0]]]
    expect(concordance(a, b, "mean")).toEqual({ both: 1, onlyA: 1, onlyB: 1, neither: 1 })
  })
})

describe("noise floor", () => {
  it("is the 80%-power sample size of the paired differences", () => {
    // z values: scipy.stats.norm.ppf(0.975) -> 1.959963984540054, norm.ppf(0.8) -> 0.8416212335729143
    expect(Z_95).toBe(1.959963984540054)
    expect(Z_POWER_80).toBe(0.8416212335729143)
    // differences 1, 0, 0, 0: d = 0.25, sd = 0.5 (numpy.std([1, 0, 0, 0], ddof=1) -> 0.5)
    // statsmodels.stats.power.NormalIndPower().solve_power(effect_size=0.5, alpha=0.05, power=0.8, ratio=0)
    //   -> 31.395442038122635, so 32 tasks
    const floor = noiseFloor([1, 0, 0, 0])
    expect(floor.sd).toBe(0.5)
    expect(floor.tasksNeeded).toBe(32)
    // (1.96 + 0.8416) * 0.5 / sqrt(4)
    expect(floor.detectable).toBeCloseTo(0.700396, 6)
    expect(noiseFloor([0.5, -0.5]).tasksNeeded).toBeUndefined()
  })
})

describe("pass@k and pass^k", () => {
  it("match Chen et al.'s estimator and C(c, k) / C(n, k)", () => {
    // pass@k: 1 - numpy.prod(1.0 - k / numpy.arange(n - c + 1, n + 1)); pass^k: scipy.special.comb(c, k) / comb(n, k)
    const cases: Array<[number, number, number, number, number]> = [
      [5, 2, 1, 0.4, 0.4],
      [5, 2, 2, 0.7, 0.1],
      [5, 2, 3, 0.9, 0],
      [10, 3, 4, 0.8333333333333334, 0],
      [3, 3, 3, 1, 1],
      [3, 0, 1, 0, 0]
    ]
    for (const [n, c, k, at, hat] of cases) {
      expect(passAtK(n, c, k)).toBeCloseTo(at, 12)
      expect(passHatK(n, c, k)).toBeCloseTo(hat, 12)
    }
    expect(() => passAtK(2, 1, 3)).toThrow(RangeError)
  })

  it("average over tasks up to the fewest runs, a run solved by its judge rounds' majority", () => {
    // task 1: runs S, S, U (c = 2 of 3); task 2: runs U, U, (S, U -> 0.5, not over half) (c = 0)
    const tasks: Array<TaskRuns> = [
      [[1], [1], [0]],
      [[0], [0], [1, 0]]
    ]
    const ks = passKs(tasks, opts("k"))
    expect(ks.map((p) => p.k)).toEqual([1, 2, 3])
    // pass^2: (C(2,2)/C(3,2) + 0) / 2 = (1/3) / 2; pass@2: (1 + 0) / 2
    expect(ks[1]!.passHat.estimate).toBeCloseTo(1 / 6, 12)
    expect(ks[1]!.passAt.estimate).toBeCloseTo(0.5, 12)
    expect(ks[2]!.passHat.estimate).toBe(0)
  })
})

describe("cost per task and per solved task", () => {
  it("is total cost over solved tasks, with an open upper end when a resample can solve nothing", () => {
    // costs 10 and 30, solved 1 and 0: 20 per task, 40 per solved task; both draws of the second task (1/4) solve nothing
    const c = bootstrapCost([[{ rounds: [1], cost: 10 }], [{ rounds: [0], cost: 30 }]], opts("cost"))
    expect(c.perTask).toEqual({ estimate: 20, low: 10, high: 30 })
    expect(c.perSolved!.estimate).toBe(40)
    expect(c.perSolved!.low).toBe(10)
    expect(c.perSolved!.high).toBe(Number.POSITIVE_INFINITY)
    expect(bootstrapCost([[{ rounds: [0], cost: 5 }]], opts("none")).perSolved).toBeUndefined()
  })

  it("counts an Unsure run as half solved", () => {
    const c = bootstrapCost([[{ rounds: [0.5], cost: 8 }]], opts("half"))
    expect(c.perSolved).toEqual({ estimate: 16, low: 16, high: 16 })
  })
})

describe("agreement", () => {
  it("Cohen's kappa matches scikit-learn", () => {
    // sklearn.metrics.cohen_kappa_score(a, b) -> 0.49152542372881347
    const a = ["S", "S", "U", "U", "S", "?", "U", "S", "S", "U"]
    const b = ["S", "U", "U", "U", "S", "S", "U", "S", "?", "U"]
    const k = cohenKappa(a.map((x, i) => [x, b[i]] as const))
    expect(k.kappa).toBeCloseTo(0.49152542372881347, 12)
    expect(k.observed).toBe(0.7)
    expect(k.n).toBe(10)
  })

  it("Cohen's kappa leaves out items only one rater labelled, and is undefined when chance agreement is 1", () => {
    // by hand: pairs (S,S) (U,U) (S,U) (U,S): p_o = 0.5, p_e = 0.5 * 0.5 + 0.5 * 0.5 = 0.5 -> kappa 0
    const k = cohenKappa([
      ["S", "S"],
      ["U", "U"],
      ["S", "U"],
      ["U", "S"],
      ["S", undefined]
    ])
    expect(k).toEqual({ kappa: 0, observed: 0.5, n: 4 })
    expect(
      cohenKappa([
        ["S", "S"],
        ["S", "S"]
      ]).kappa
    ).toBeUndefined()
  })

  it("Krippendorff's alpha gives the published value of Krippendorff's own nominal example", () => {
    // Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", C: 4 observers, 12 units, nominal alpha = 0.743
    // (a direct coincidence-matrix computation in Python gives 0.743421052631579, n = 40)
    const observers: Array<Array<number | undefined>> = [
      [1, 2, 3, 3, 2, 1, 4, 1, 2, undefined, undefined, undefined],
      [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, undefined, 3],
      [undefined, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, undefined],
      [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, undefined]
    ]
    const units = Array.from({ length: 12 }, (_, u) =>
      observers.map((o) => (o[u] === undefined ? undefined : String(o[u])))
    )
    const a = krippendorffAlpha(units)
    expect(a.alpha).toBeCloseTo(0.743421052631579, 12)
    expect(a.values).toBe(40)
    expect(a.units).toBe(11)
  })

  it("Krippendorff's alpha by hand on two raters, and undefined with one label throughout", () => {
    // units (S,S) (U,U) (S,U): o_SU = o_US = 1, n_S = n_U = 3, n = 6 -> alpha = 1 - 5 * 2 / (2 * 3 * 3) = 4/9
    expect(
      krippendorffAlpha([
        ["S", "S"],
        ["U", "U"],
        ["S", "U"]
      ]).alpha
    ).toBeCloseTo(4 / 9, 14)
    expect(krippendorffAlpha([["S", "S"], ["S", "S", "S"], ["S"]]).alpha).toBeUndefined()
  })
})
