// The sample shipped with the package: a few of StableToolBench's tasks per group with their recorded responses
// (data/sample, Apache-2.0, see its NOTICE), which `--data sample` names, so that `smurfs bench` runs right after install.
// The package keeps it as one JSON bundle, not as files under the data's own names; the data layout is written out
// once per content in the temp folder, where every command and test reads the same folder.
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { packageRoot } from "../src/package-root.ts"

/** The name `--data` (and SMURFS_DATA, smurfs.config.json's data) takes for the shipped sample. */
export const SAMPLE_DATA_NAME = "sample"

/** The shipped bundle: `{ queries: {group: [...]}, queryIds: {group: {...}}, responses: [...] }`. */
export const SAMPLE_BUNDLE: string = fileURLToPath(new URL("data/sample/toolbench-sample.json", packageRoot))

interface SampleBundle {
  readonly queries: Record<string, unknown>
  readonly queryIds: Record<string, unknown>
  readonly responses: ReadonlyArray<unknown>
}

/** The shipped sample in the data layout `--data` reads (queries/, query_ids/, responses.jsonl), written on first use. */
export const sampleDataDir = (): string => {
  const text = readFileSync(SAMPLE_BUNDLE, "utf8")
  const dir = join(tmpdir(), `smurfs-sample-${createHash("sha256").update(text).digest("hex").slice(0, 12)}`)
  if (existsSync(join(dir, "responses.jsonl"))) return dir
  const bundle = JSON.parse(text) as SampleBundle
  mkdirSync(tmpdir(), { recursive: true })
  const staging = mkdtempSync(`${dir}.tmp-`)
  mkdirSync(join(staging, "queries"))
  mkdirSync(join(staging, "query_ids"))
  for (const [group, queries] of Object.entries(bundle.queries))
    writeFileSync(join(staging, "queries", `${group}.json`), `${JSON.stringify(queries)}\n`)
  for (const [group, ids] of Object.entries(bundle.queryIds))
    writeFileSync(join(staging, "query_ids", `${group}.json`), `${JSON.stringify(ids)}\n`)
  writeFileSync(join(staging, "responses.jsonl"), `${bundle.responses.map((r) => JSON.stringify(r)).join("\n")}\n`)
  try {
    renameSync(staging, dir)
  } catch {
    // another process wrote the same content first
    rmSync(staging, { recursive: true, force: true })
  }
  return dir
}

/** A `--data` value as a folder: the name `sample` is the shipped sample (a folder of that name is `./sample`). */
export const dataDirOf = (value: string): string => (value === SAMPLE_DATA_NAME ? sampleDataDir() : value)
