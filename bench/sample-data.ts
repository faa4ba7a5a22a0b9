// The sample shipped with the package: a few of StableToolBench's tasks per group with their recorded responses
// (data/sample, Apache-2.0, see its NOTICE), which `--data sample` names, so that `smurfs bench` runs right after install.
import { fileURLToPath } from "node:url"
import { packageRoot } from "../src/package-root.ts"

/** The name `--data` (and SMURFS_DATA, smurfs.config.json's data) takes for the shipped sample. */
export const SAMPLE_DATA_NAME = "sample"

/** The shipped sample's folder, in the data layout `--data` reads (queries/, query_ids/, responses.jsonl). */
export const SAMPLE_DATA_DIR: string = fileURLToPath(new URL("data/sample", packageRoot))

/** A `--data` value as a folder: the name `sample` is the shipped sample (a folder of that name is `./sample`). */
export const dataDirOf = (value: string): string => (value === SAMPLE_DATA_NAME ? SAMPLE_DATA_DIR : value)
