import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { DatasetError, GROUPS, loadQueries, toolDocsOf } from "../bench/datasets.ts"
import { FULL_DATA, lacks, MINI_DATA, skipNote } from "./data.ts"

const DATA = MINI_DATA.path
const load = (o: Parameters<typeof loadQueries>[0]) => Effect.runPromise(loadQueries(o))
const failure = async (o: Parameters<typeof loadQueries>[0]) => {
  const exit = await Effect.runPromiseExit(loadQueries(o))
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const error = (exit.cause as unknown as { reasons: Array<{ error: unknown }> }).reasons[0]!.error
  expect(error).toBeInstanceOf(DatasetError)
  return error as DatasetError
}

describe("StableToolBench datasets", () => {
  const scratch = mkdtempSync(join(tmpdir(), "smurfs-data-"))
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))

  it.skipIf(lacks(FULL_DATA))(
    `loads all six groups, 765 test queries, with their tool docs${skipNote(FULL_DATA)}`,
    async () => {
      const all = await load({ dir: FULL_DATA.path })
      expect(all).toHaveLength(765)
      expect(new Set(all.map((q) => q.group))).toEqual(new Set(GROUPS))
      expect(all.filter((q) => q.group === "G1_instruction")).toHaveLength(163)
      expect(new Set(all.map((q) => `${q.group}/${q.id}`)).size).toBe(765)
      expect(all.every((q) => q.apiList.length > 0 && q.query.length > 0)).toBe(true)
    }
  )

  it("filters by group, ids and a per-group limit", async () => {
    expect(
      (await load({ dir: DATA, groups: ["G3_instruction", "G2_category"], limit: 2 })).map((q) => q.group)
    ).toEqual(["G3_instruction", "G3_instruction", "G2_category", "G2_category"])
    const byId = await load({ dir: DATA, groups: ["G1_instruction"], ids: ["1073", "608"] })
    expect(byId.map((q) => q.id).sort()).toEqual(["1073", "608"])
  })

  it("restricts a task's tools to its relevant APIs with --toolset relevant", async () => {
    const [q] = await load({ dir: DATA, groups: ["G1_instruction"], ids: ["588"] })
    const relevant = toolDocsOf(q!, "relevant")
    expect(relevant.length).toBeGreaterThan(0)
    expect(relevant.length).toBeLessThan(q!.apiList.length)
    for (const doc of relevant)
      expect(q!.relevant.some(([tool, api]) => tool === doc.tool_name && api === doc.api_name)).toBe(true)
    expect(toolDocsOf(q!, "all")).toBe(q!.apiList)
  })

  it("explains a missing directory, a missing group and a malformed file", async () => {
    const missing = await failure({ dir: join(scratch, "nowhere") })
    expect(missing.message).toContain("--data")
    const unknownGroup = await failure({ dir: DATA, groups: ["G9_nothing"] })
    expect(unknownGroup.message).toContain("G1_instruction")
    mkdirSync(join(scratch, "bad", "queries"), { recursive: true })
    writeFileSync(join(scratch, "bad", "queries", "G1_tool.json"), "[{")
    const broken = await failure({ dir: join(scratch, "bad"), groups: ["G1_tool"] })
    expect(broken.path).toContain("G1_tool.json")
    expect(broken.message).toContain("valid JSON")
    writeFileSync(join(scratch, "bad", "queries", "G1_tool.json"), JSON.stringify([{ query: "q" }]))
    const wrongShape = await failure({ dir: join(scratch, "bad"), groups: ["G1_tool"] })
    expect(wrongShape.message).toContain("api_list")
  })
})
