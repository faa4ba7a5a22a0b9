// What a benchmark supplies to the bench: one interface, one folder per benchmark (bench/benchmarks/<name>/), one line in
// the registry (bench/benchmarks/index.ts), as providers and methods are. The runner, the run directory, progress,
// resume and the reports are the bench's; a benchmark says which tasks there are, what a task runs on, how a record is
// made and scored, and what comes after a run.
import type * as Effect from "effect/Effect"
import type { Failure } from "../../src/failure.ts"
import type { BenchOutcome } from "../app.ts"
import type { BenchQuery } from "../datasets.ts"
import type { Progress } from "../progress.ts"
import type { BenchSettings } from "../settings.ts"

export interface Benchmark {
  /** The registry name (run.json's `options.benchmark`; StableToolBench's runs from before it say nothing). */
  readonly name: string
  /** How help and reports name it. */
  readonly label: string
  /** Whether a run's settings ask for this benchmark (`--tau2 <dir>` for τ²; StableToolBench otherwise). */
  readonly selects: (settings: BenchSettings) => boolean
  /** The methods (or conversing agents) it runs, as `--method` names them. */
  readonly methods: ReadonlyArray<string>
  /**
   * How a record is scored: `judge` (a model labels it later: `smurfs eval`, ToolEval's pass and win rates) or
   * `record` (the benchmark scores it as it is written: τ²'s reward, stored as the labels of the judge `scoreJudge`).
   */
  readonly scoredBy: "judge" | "record"
  /** With `scoredBy: "record"`: the judge name its scores are stored under, which compare and results read. */
  readonly scoreJudge?: string | undefined
  /** Whether it writes StableToolBench's converted predictions (converted/<method>/<group>.json, ToolEval's input). */
  readonly converted: boolean
  /** Reads what the run's settings name (checkouts, prompt texts) before anything runs; throws what is wrong. */
  readonly check: (settings: BenchSettings) => void
  /** The run's tasks with their ids (group and id name a record), as the run would take them. */
  readonly tasks: (settings: BenchSettings) => Effect.Effect<ReadonlyArray<BenchQuery>, Failure>
  /**
   * The whole run into its run directory: each task's tool environment (StableToolBench: its api_list on the replay
   * chain; τ²: a fresh database and the domain's tools per conversation), its record, its score, and run.json.
   */
  readonly run: (settings: BenchSettings, progress: Progress) => Effect.Effect<BenchOutcome, Failure>
}
