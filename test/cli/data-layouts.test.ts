// --data takes StableToolBench's data as it ships (issue 12 point 2): solvable_queries/ with test_instruction/ and test_query_ids/, and a tool_response_cache/ beside it.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { dataLayout } from "../../bench/datasets.ts"
import { FULL_DATA, lacks, skipNote } from "../data.ts"
import { smurfs } from "./spawn.ts"

vi.setConfig({ testTimeout: 300_000 })
const shared = FULL_DATA.path

/** StableToolBench's release layout: data/solvable_queries/{test_instruction,test_query_ids}, and server/tool_response_cache. */
const stableToolBenchCopy = () => {
  const root = mkdtempSync(join(tmpdir(), "smurfs-stb-"))
  const solvable = join(root, "data", "solvable_queries")
  mkdirSync(join(solvable, "test_instruction"), { recursive: true })
  cpSync(join(shared, "queries", "G1_instruction.json"), join(solvable, "test_instruction", "G1_instruction.json"))
  cpSync(join(shared, "query_ids"), join(solvable, "test_query_ids"), { recursive: true })
  // one recorded response, keyed by the Python repr of the arguments, as StableToolBench's server caches them
  const tool = join(root, "data", "tool_response_cache", "Data", "theclique_for_Data")
  mkdirSync(tool, { recursive: true })
  writeFileSync(
    join(tool, "transfermarkt_search.json"),
    JSON.stringify({
      "{'name': 'Lionel Messi'}": { error: "", response: "RECORDED-IN-THE-CACHE: Messi plays for Inter Miami." }
    })
  )
  return { root, solvable }
}

describe.skipIf(lacks(FULL_DATA))(`StableToolBench's own folders${skipNote(FULL_DATA)}`, () => {
  it("finds the query files, the id files and the tool cache", () => {
    const { root, solvable } = stableToolBenchCopy()
    for (const dir of [solvable, join(root, "data")])
      expect(dataLayout(dir)).toEqual({
        queries: join(solvable, "test_instruction"),
        queryIds: join(solvable, "test_query_ids"),
        toolResponseCache: join(root, "data", "tool_response_cache")
      })
    expect(dataLayout(shared)).toMatchObject({
      queries: join(shared, "queries"),
      queryIds: join(shared, "query_ids"),
      responses: join(shared, "responses.jsonl")
    })
  })

  it("smurfs bench --data solvable_queries runs a task and replays the tool_response_cache beside it", async () => {
    const { root, solvable } = stableToolBenchCopy()
    const out = join(root, "run")
    const r = await smurfs([
      "bench",
      "--data",
      solvable,
      "--group",
      "G1_instruction",
      "--ids",
      "588",
      "--env",
      "replay,offline",
      "--model",
      "sim",
      "--out",
      out
    ])
    expect(r.code, r.stderr).toBe(0)
    const record = JSON.parse(readFileSync(join(out, "tasks", "smurfs", "G1_instruction", "588.json"), "utf8"))
    const calls = record.events
      .filter((e: { type: string }) => e.type.endsWith("tool_call"))
      .map((e: { data: { tool: string; content: string } }) => e.data)
    expect(calls.find((c: { tool: string }) => c.tool === "transfermarkt_search_for_theclique")?.content).toContain(
      "RECORDED-IN-THE-CACHE"
    )
  })
})
