// Where the tests find ToolBench data: the full StableToolBench data and checkout when this machine has them (SMURFS_DATA /
// SMURFS_STB, else ../shared/toolbench beside the repository), and always the small fixture of test/fixtures/toolbench-mini.
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

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

interface MiniBundle {
  readonly queries: Record<string, ReadonlyArray<unknown>>
  readonly queryIds: Record<string, Record<string, unknown>>
  readonly responses: ReadonlyArray<unknown>
}

/**
 * The fixture written out in the data layout (queries/<group>.json, query_ids/<group>.json, responses.jsonl) once per
 * content, in the temp folder, so that every test file and every spawned CLI reads the same folder. The repository keeps
 * one JSON bundle rather than files under the data's own names.
 */
const writeMini = (): string => {
  const text = readFileSync(new URL("./fixtures/toolbench-mini/toolbench-mini.json", import.meta.url), "utf8")
  const dir = join(tmpdir(), `smurfs-toolbench-mini-${createHash("sha256").update(text).digest("hex").slice(0, 12)}`)
  if (existsSync(join(dir, "responses.jsonl"))) return dir
  const bundle = JSON.parse(text) as MiniBundle
  const staging = mkdtempSync(`${dir}.tmp-`)
  mkdirSync(join(staging, "queries"))
  mkdirSync(join(staging, "query_ids"))
  for (const [group, queries] of Object.entries(bundle.queries))
    writeFileSync(join(staging, "queries", `${group}.json`), JSON.stringify(queries, null, 2))
  for (const [group, ids] of Object.entries(bundle.queryIds))
    writeFileSync(join(staging, "query_ids", `${group}.json`), JSON.stringify(ids, null, 2))
  writeFileSync(join(staging, "responses.jsonl"), `${bundle.responses.map((r) => JSON.stringify(r)).join("\n")}\n`)
  try {
    renameSync(staging, dir)
  } catch {
    // another test file wrote the same content first
    rmSync(staging, { recursive: true, force: true })
  }
  return dir
}

/**
 * A few queries of each group with their tool docs and recorded responses (test/fixtures/toolbench-mini): always there,
 * for tests that need some ToolBench data but not all of it. G1_instruction starts with the data example's 588, 608 and
 * 1073, in the full data's order.
 */
export const MINI_DATA: DataSource = { path: writeMini(), missing: undefined }

/** The full data when this machine has it, else the fixture: for a property of every query, which the fixture checks on a few. */
export const ANY_DATA: DataSource = lacks(FULL_DATA) ? MINI_DATA : FULL_DATA
