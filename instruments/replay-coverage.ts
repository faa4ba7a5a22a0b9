// Replay coverage: how many relevant APIs of the StableToolBench test queries have any recorded response.
// Usage: node instruments/replay-coverage.ts [toolbench dir] [responses.jsonl]
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import { makeReplayIndex } from "../src/tools/environments/recorded.ts"
import { loadResponsesJsonl } from "../src/tools/environments/replay.ts"
import { changeName, standardizeName } from "../src/tools/toolbench/names.ts"

interface Query {
  readonly query_id: number | string
  readonly "relevant APIs": ReadonlyArray<readonly [string, string]>
}

export interface GroupCoverage {
  readonly group: string
  readonly queries: number
  /** Relevant (tool, API) pairs, counted per query. */
  readonly relevant: number
  /** Of those, pairs with at least one recorded response. */
  readonly covered: number
  /** Queries whose every relevant API has a recorded response. */
  readonly queriesFullyCovered: number
  /** Pairs with at least one recorded response labelled as content (not an error or empty). */
  readonly withContent: number
  /** Queries whose every relevant API has a content response. */
  readonly queriesWithContent: number
}

/** A recording that carries content (responses.jsonl labels: content_structured, content_text). */
const isContent = (cls: string | undefined) => cls === undefined || cls.startsWith("content")

/** Coverage of each query group by the recordings in `responsesFile`, plus the distinct APIs over all groups. */
export const replayCoverage = (toolbenchDir: string, responsesFile: string) =>
  Effect.gen(function* () {
    const index = makeReplayIndex()
    const started = performance.now()
    const recordings = yield* loadResponsesJsonl(index, responsesFile)
    const loadMs = performance.now() - started
    const groups: GroupCoverage[] = []
    const distinct = new Map<string, boolean>()
    const queryDir = join(toolbenchDir, "queries")
    for (const file of readdirSync(queryDir)
      .filter((f) => f.endsWith(".json"))
      .sort()) {
      const queries = JSON.parse(readFileSync(join(queryDir, file), "utf8")) as Query[]
      let relevant = 0
      let covered = 0
      let full = 0
      let withContent = 0
      let queriesWithContent = 0
      for (const query of queries) {
        let all = true
        let allContent = true
        for (const [tool, api] of query["relevant APIs"]) {
          const stdTool = standardizeName(tool)
          const stdApi = changeName(standardizeName(api))
          const hit = index.hasApi(stdTool, stdApi)
          distinct.set(`${stdTool}/${stdApi}`, hit)
          relevant++
          if (hit) covered++
          else all = false
          if (index.examples(stdTool, stdApi, Number.POSITIVE_INFINITY).some((r) => isContent(r.cls))) withContent++
          else allContent = false
        }
        if (all) full++
        if (allContent) queriesWithContent++
      }
      groups.push({
        group: file.replace(/\.json$/, ""),
        queries: queries.length,
        relevant,
        covered,
        queriesFullyCovered: full,
        withContent,
        queriesWithContent
      })
    }
    return {
      recordings,
      loadMs,
      groups,
      distinctApis: distinct.size,
      distinctCovered: [...distinct.values()].filter(Boolean).length
    }
  })

const pct = (a: number, b: number) => (b === 0 ? "-" : `${((100 * a) / b).toFixed(1)}%`)

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = process.argv[2] ?? fileURLToPath(new URL("../../shared/toolbench/", import.meta.url))
  const responses = process.argv[3] ?? join(dir, "responses.jsonl")
  const report = await Effect.runPromise(replayCoverage(dir, responses))
  console.log(`${report.recordings} recordings loaded in ${report.loadMs.toFixed(0)} ms from ${responses}\n`)
  const row = (name: string, g: Omit<GroupCoverage, "group">) =>
    console.log(
      `${name.padEnd(16)} ${String(g.queries).padStart(7)} ${String(g.relevant).padStart(8)} ${`${g.covered} (${pct(g.covered, g.relevant)})`.padStart(14)} ${`${g.queriesFullyCovered} (${pct(g.queriesFullyCovered, g.queries)})`.padStart(14)} ${`${g.withContent} (${pct(g.withContent, g.relevant)})`.padStart(14)} ${`${g.queriesWithContent} (${pct(g.queriesWithContent, g.queries)})`.padStart(14)}`
    )
  console.log(
    "relevant = (tool, API) pairs of the queries' `relevant APIs`; covered = any recorded response; content = a response labelled content"
  )
  console.log(
    `${"group".padEnd(16)} ${"queries".padStart(7)} ${"relevant".padStart(8)} ${"covered".padStart(14)} ${"all covered".padStart(14)} ${"content".padStart(14)} ${"all content".padStart(14)}`
  )
  const total = { queries: 0, relevant: 0, covered: 0, queriesFullyCovered: 0, withContent: 0, queriesWithContent: 0 }
  for (const g of report.groups) {
    for (const key of Object.keys(total) as Array<keyof typeof total>) total[key] += g[key]
    row(g.group, g)
  }
  row("all", total)
  console.log(
    `\ndistinct relevant APIs: ${report.distinctApis}, with a recorded response: ${report.distinctCovered} (${pct(report.distinctCovered, report.distinctApis)})`
  )
}
