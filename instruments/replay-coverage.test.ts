import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { FULL_DATA, lacks, skipNote } from "../test/data.ts"
import { replayCoverage } from "./replay-coverage.ts"

const TOOLBENCH = `${FULL_DATA.path}/`

describe.skipIf(lacks(FULL_DATA))(`replay coverage${skipNote(FULL_DATA)}`, () => {
  it("matches the coverage the data README states (1,657 of 1,799 relevant APIs, 639 of 765 queries)", async () => {
    const report = await Effect.runPromise(replayCoverage(TOOLBENCH, `${TOOLBENCH}responses.jsonl`))
    const sum = (key: "queries" | "relevant" | "withContent" | "queriesWithContent" | "covered") =>
      report.groups.reduce((n, g) => n + g[key], 0)
    expect(report.recordings).toBe(2705)
    expect(report.groups).toHaveLength(6)
    expect(sum("queries")).toBe(765)
    expect(sum("relevant")).toBe(1799)
    expect(sum("withContent")).toBe(1657)
    expect(sum("queriesWithContent")).toBe(639)
    expect(sum("covered")).toBeGreaterThanOrEqual(sum("withContent"))
  })
})
