// Where the tests find ToolBench data: the full StableToolBench data and checkout when this machine has them (SMURFS_DATA /
// SMURFS_STB, else ../shared/toolbench beside the repository), and always the sample shipped with the package (data/sample).
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { sampleDataDir } from "../bench/sample-data.ts"

/** A folder some tests need, and why it is missing when it is (then those tests skip, saying so). */
export interface DataSource {
  /** The folder (its default place when missing), without a trailing slash. */
  readonly path: string
  /** Undefined when the folder is there; else what the tests that need it are skipped for, and how to give it. */
  readonly missing: string | undefined
}

const beside = fileURLToPath(new URL("../../shared/toolbench", import.meta.url))
const nonEmpty = (value: string | undefined) =>
  value === undefined || value.trim() === "" ? undefined : resolve(value)

const source = (path: string, present: (path: string) => boolean, missing: string): DataSource => ({
  path,
  missing: present(path) ? undefined : `${missing} (looked in ${path})`
})

/** StableToolBench's full data in this repository's layout: the 765 queries, their ids, responses.jsonl and the data example. */
export const FULL_DATA: DataSource = source(
  nonEmpty(process.env["SMURFS_DATA"]) ?? beside,
  (path) => existsSync(join(path, "queries", "G1_instruction.json")) && existsSync(join(path, "responses.jsonl")),
  "needs StableToolBench's full data: set SMURFS_DATA or put it at ../shared/toolbench"
)

/** The data where the CLI and the simulated model look when given none: ../shared/toolbench beside the repository. */
export const DEFAULT_DATA: DataSource = source(
  beside,
  (path) => existsSync(join(path, "queries", "G1_instruction.json")) && existsSync(join(path, "responses.jsonl")),
  "needs StableToolBench's full data at ../shared/toolbench, where the CLI and `--model sim` look by default"
)

/** StableToolBench's data example (answers of ChatGPT CoT and DFSDT, converted, with ToolEval's results), in the full data. */
export const DATA_EXAMPLE: DataSource = source(
  join(FULL_DATA.path, "example", "data_example"),
  (path) => existsSync(join(path, "model_predictions_converted")),
  "needs StableToolBench's data example: set SMURFS_DATA or put the data at ../shared/toolbench"
)

/** A StableToolBench checkout (its own prompt files), as `--stb` takes it. */
export const STB_CHECKOUT: DataSource = source(
  nonEmpty(process.env["SMURFS_STB"]) ??
    (existsSync(join(FULL_DATA.path, "stabletoolbench"))
      ? join(FULL_DATA.path, "stabletoolbench")
      : join(beside, "stabletoolbench")),
  (path) => existsSync(join(path, "toolbench")),
  "needs a StableToolBench checkout: set SMURFS_STB or put one at ../shared/toolbench/stabletoolbench"
)

const noted = new Set<string>()

/** " (skipped: <why>)" for a describe/it title when a source is missing (and, once per reason, a note on stderr), else "". */
export const skipNote = (...sources: ReadonlyArray<DataSource>): string => {
  const missing = sources.find((s) => s.missing !== undefined)?.missing
  if (missing === undefined) return ""
  if (!noted.has(missing)) console.warn(`skipped: ${missing}`)
  noted.add(missing)
  return ` (skipped: ${missing})`
}

/** Whether any of the sources is missing: the condition of `describe.skipIf` / `it.skipIf`. */
export const lacks = (...sources: ReadonlyArray<DataSource>): boolean => sources.some((s) => s.missing !== undefined)

/**
 * A few queries of each group with their tool docs and recorded responses (data/sample, the sample `--data sample` names):
 * always there, for tests that need some ToolBench data but not all of it. G1_instruction starts with the data example's
 * 588, 608 and 1073, in the full data's order. Read only: a test writes its runs and caches elsewhere.
 */
export const MINI_DATA: DataSource = { path: sampleDataDir(), missing: undefined }

/** The full data when this machine has it, else the fixture: for a property of every query, which the fixture checks on a few. */
export const ANY_DATA: DataSource = lacks(FULL_DATA) ? MINI_DATA : FULL_DATA

/** τ²-bench's data as it ships (data/tau2/domains/retail/...): SMURFS_TAU2, else ../shared/tau2 beside the repository. */
export const TAU2_CHECKOUT: DataSource = source(
  nonEmpty(process.env["SMURFS_TAU2"]) ?? fileURLToPath(new URL("../../shared/tau2", import.meta.url)),
  (path) => existsSync(join(path, "data", "tau2", "domains", "retail", "tasks.json")),
  "needs τ²-bench's retail data: set SMURFS_TAU2 or put a checkout at ../shared/tau2"
)
