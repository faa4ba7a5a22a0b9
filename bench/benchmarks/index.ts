// The benchmarks, in one list: a new one is its folder and one line here (bench/benchmarks/benchmark.ts says what it supplies).
import type { Benchmark } from "./benchmark.ts"
import { stableToolBench } from "./stabletoolbench/index.ts"
import { tau2Benchmark } from "./tau2/benchmark.ts"

/** Every benchmark; the first whose `selects` takes a run's settings runs it (StableToolBench takes what is left). */
export const BENCHMARKS: ReadonlyArray<Benchmark> = [tau2Benchmark(), stableToolBench]

/** The benchmark a run's settings ask for. */
export const benchmarkFor = (
  settings: Parameters<Benchmark["selects"]>[0],
  benchmarks: ReadonlyArray<Benchmark> = BENCHMARKS
): Benchmark => benchmarks.find((b) => b.selects(settings)) ?? stableToolBench
