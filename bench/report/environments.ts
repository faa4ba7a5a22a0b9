// Whether the runs a comparison sets side by side had their tool calls served alike: another cache, simulator,
// environment chain or replay leniency changes what a pass rate measures, so compare refuses it unless told.
import { basename, resolve } from "node:path"
import { environmentDifferences, type RunEnvironment, runEnvironment } from "../ledger.ts"
import type { Row } from "./collect.ts"
import { resolveInput } from "./collect.ts"

/** A run of the comparison whose environment differs from the first run's, and how. */
export interface EnvironmentMismatch {
  /** The input as given. */
  readonly input: string
  /** Its rows' `source` (the directory's base name). */
  readonly source: string
  /** The run it is set against (the first run given). */
  readonly against: string
  readonly differences: ReadonlyArray<string>
}

/**
 * The runs among `inputs` (our run directories; other folders say nothing of their environment) whose tool
 * environment differs from the first run's; empty when all agree.
 */
export const environmentMismatches = (inputs: ReadonlyArray<string>): Array<EnvironmentMismatch> => {
  const runs: Array<{ input: string; source: string; environment: RunEnvironment }> = []
  for (const input of inputs) {
    const { dir, kind } = resolveInput(input)
    const environment = kind === "run" ? runEnvironment(dir) : undefined
    if (environment) runs.push({ input, source: basename(resolve(dir)), environment })
  }
  const [first, ...rest] = runs
  if (!first) return []
  return rest.flatMap((run) => {
    const differences = environmentDifferences(first.environment, run.environment)
    return differences.length === 0 ? [] : [{ input: run.input, source: run.source, against: first.input, differences }]
  })
}

/** compare's refusal: which runs differ and how, and what to do. */
export const mismatchMessage = (mismatches: ReadonlyArray<EnvironmentMismatch>): string =>
  [
    "the runs' tool calls were served by different environments, so their pass rates measure different things:",
    ...mismatches.map((m) => `  ${m.against} vs ${m.input}: ${m.differences.join("; ")}`),
    "Compare runs of one environment, or pass --allow-env-mismatch to set them side by side anyway (their rows are marked)."
  ].join("\n")

/** The rows of runs whose environment differs, marked: `env≠` after their source, and the differences in the JSON. */
export const markMismatchedRows = (
  rows: ReadonlyArray<Row>,
  mismatches: ReadonlyArray<EnvironmentMismatch>
): Array<Row> =>
  rows.map((row) => {
    const mismatch = mismatches.find((m) => m.source === row.source)
    return mismatch === undefined
      ? row
      : { ...row, source: `${row.source} (env≠)`, environmentMismatch: mismatch.differences }
  })
