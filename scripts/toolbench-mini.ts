// Rebuilds data/sample (the sample shipped with the package, `--data sample`, and the tests' fixture) from a full
// StableToolBench data directory: `node scripts/toolbench-mini.ts [data dir]`. The first few queries of each group (file
// order, so `--limit k` picks the same tasks as on the full data) with their tool docs, their query ids and every
// recorded response of their APIs, as one bundle (data/sample/toolbench-sample.json).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { GROUPS } from "../bench/datasets.ts"
import { stdApiName, stdToolName } from "../src/tools/toolbench/names.ts"

/** How many queries of each group the fixture keeps: G1_instruction holds the data example's three (588, 608, 1073) and the three after them. */
const PER_GROUP: Record<(typeof GROUPS)[number], number> = {
  G1_instruction: 6,
  G1_category: 2,
  G1_tool: 2,
  G2_instruction: 2,
  G2_category: 2,
  G3_instruction: 2
}

const dir = resolve(process.argv[2] ?? fileURLToPath(new URL("../../shared/toolbench", import.meta.url)))
const out = fileURLToPath(new URL("../data/sample", import.meta.url))
const json = (path: string) => JSON.parse(readFileSync(path, "utf8")) as unknown

const queries: Record<
  string,
  Array<{ query_id: number | string; api_list: Array<{ tool_name: string; api_name: string }> }>
> = {}
const queryIds: Record<string, Record<string, unknown>> = {}
for (const group of GROUPS) {
  const all = json(join(dir, "queries", `${group}.json`)) as (typeof queries)[string]
  queries[group] = all.slice(0, PER_GROUP[group])
  const ids = json(join(dir, "query_ids", `${group}.json`)) as Record<string, unknown>
  queryIds[group] = Object.fromEntries(queries[group]!.map((q) => [String(q.query_id), ids[String(q.query_id)] ?? 0]))
}
const apis = new Set(
  Object.values(queries).flatMap((qs) => qs.flatMap((q) => q.api_list.map((a) => `${stdToolName(a)}/${stdApiName(a)}`)))
)
const responses = readFileSync(join(dir, "responses.jsonl"), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as { tool: string; api: string })
  .filter((r) => apis.has(`${r.tool}/${r.api}`))

mkdirSync(out, { recursive: true })
// one bundle, not files under the data's own names: bench/sample-data.ts writes the layout out on first use
writeFileSync(join(out, "toolbench-sample.json"), `${JSON.stringify({ queries, queryIds, responses })}\n`)
console.log(`${out}: ${Object.values(queries).flat().length} queries, ${responses.length} responses`)
