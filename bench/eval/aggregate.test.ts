import { describe, expect, it } from "vitest"
import { DATA_EXAMPLE, lacks, skipNote } from "../../test/data.ts"
import { passRate } from "./aggregate.ts"
import { readToolEvalResults } from "./tooleval-results.ts"

const EXAMPLE = DATA_EXAMPLE.path

describe("passRate", () => {
  it("scores Solved 1, Unsure 0.5, Unsolved and missing 0, and reports mean ± population std over runs", () => {
    // run 0: (1 + 0.5 + 0) / 3 = 0.5; run 1: (1 + 1 + 0) / 3 = 0.6667; run 2: (0 + 0 + 0) / 3 = 0 (missing labels)
    // mean = (0.5 + 0.6667 + 0) / 3 = 0.38889 -> 38.889
    // population variance = (0.11111^2 + 0.27778^2 + 0.38889^2) / 3 = (0.012346 + 0.077160 + 0.151235) / 3
    //                     = 0.080247 -> std = sqrt(0.080247) = 0.28328 -> 28.328
    const rate = passRate(
      [
        ["Solved", "Solved"],
        ["Unsure", "Solved", undefined],
        ["Unsolved", "Unsolved"]
      ],
      3
    )
    expect(rate.perRun.map((r) => Number(r.toFixed(4)))).toEqual([0.5, 0.6667, 0])
    expect(rate.mean).toBeCloseTo(38.889, 3)
    expect(rate.std).toBeCloseTo(28.328, 3)
  })
})

describe.skipIf(lacks(DATA_EXAMPLE))(`ToolEval's own outputs in data_example${skipNote(DATA_EXAMPLE)}`, () => {
  const { pass, preference } = lacks(DATA_EXAMPLE) ? { pass: [], preference: [] } : readToolEvalResults(EXAMPLE)

  it("gives the pass rates its labels imply", () => {
    const byMethod = Object.fromEntries(
      pass.map((p) => [p.method, { ...passRate([...p.labels.values()], p.runs), group: p.group }])
    )
    // virtual_chatgpt_cot: in each of runs 0, 1, 2 task 588 is Unsolved, 608 and 1073 Solved:
    // SoPR_r = (0 + 1 + 1) / 3 = 0.6667 for every r -> 100 * mean = 66.67, std = 0
    expect(byMethod["virtual_chatgpt_cot"]!.group).toBe("G1_instruction")
    expect(byMethod["virtual_chatgpt_cot"]!.runs).toBe(3)
    expect(byMethod["virtual_chatgpt_cot"]!.n).toBe(3)
    expect(byMethod["virtual_chatgpt_cot"]!.mean).toBeCloseTo(66.667, 3)
    expect(byMethod["virtual_chatgpt_cot"]!.std).toBeCloseTo(0, 10)
    // virtual_chatgpt_dfs: all three tasks Solved in all three runs: (1 + 1 + 1) / 3 = 1 -> 100 ± 0
    expect(byMethod["virtual_chatgpt_dfs"]!.mean).toBeCloseTo(100, 10)
    expect(byMethod["virtual_chatgpt_dfs"]!.std).toBeCloseTo(0, 10)
  })

  it("gives the win rate its preference counts imply", () => {
    expect(preference).toHaveLength(1)
    const p = preference[0]!
    // file G1_instruction_virtual_chatgpt_cot_virtual_chatgpt_dfs.json: reference cot, candidate dfs
    expect(p).toMatchObject({
      group: "G1_instruction",
      reference: "virtual_chatgpt_cot",
      candidate: "virtual_chatgpt_dfs"
    })
    // rounds won (dfs vs cot): 588 3-0, 608 3-0, 1073 2-1 -> 3 wins of 3 tasks -> SoWR = 100 * 3 / 3 = 100
    expect(Object.fromEntries(p.tasks)).toEqual({
      "588": { candidate: 3, reference: 0 },
      "608": { candidate: 3, reference: 0 },
      "1073": { candidate: 2, reference: 1 }
    })
  })
})
