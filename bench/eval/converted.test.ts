import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { DATA_EXAMPLE, lacks, skipNote } from "../../test/data.ts"
import { judgeInputFromConverted, readConvertedFile } from "./converted.ts"
import { answerSteps } from "./judge-input.ts"
import { ruleLabel } from "./pass-rate.ts"
import { loadSource } from "./sources.ts"

const EXAMPLE = DATA_EXAMPLE.path

describe.skipIf(lacks(DATA_EXAMPLE))(`StableToolBench converted predictions${skipNote(DATA_EXAMPLE)}`, () => {
  const cot = lacks(DATA_EXAMPLE)
    ? {}
    : readConvertedFile(`${EXAMPLE}/model_predictions_converted/virtual_chatgpt_cot/G1_instruction.json`)

  it("walks the first branch like ToolEval's get_steps", () => {
    const steps = answerSteps(cot["588"]!.answer)
    expect(steps.map((s) => s.name)).toEqual([
      "transfermarkt_search_for_theclique",
      "transfermarkt_details_for_theclique",
      "songkick_search_artist_for_theclique",
      "get_artist_overview_for_theclique",
      "songkick_artist_for_theclique",
      "list_artist_concerts_for_theclique"
    ])
  })

  it("marks an answer whose last step is not Finish as unfinished, so the rule labels it Unsolved", () => {
    const input = judgeInputFromConverted("588", "virtual_chatgpt_cot", "G1_instruction", cot["588"]!)
    expect(input.finished).toBe(false)
    expect(input.finalAnswer).toBe("")
    expect(ruleLabel(input)?.label).toBe("Unsolved")
  })

  it("keeps Finish out of the tool steps of a finished answer and reads each call's success", () => {
    const input = judgeInputFromConverted("1073", "virtual_chatgpt_cot", "G1_instruction", cot["1073"]!)
    expect(input.finished).toBe(true)
    expect(input.finalAnswer.length).toBeGreaterThan(0)
    expect(input.steps.some((s) => s.name === "Finish")).toBe(false)
    expect(input.cost.toolCalls).toBe(input.steps.length)
    expect(input.steps.every((s) => typeof s.ok === "boolean")).toBe(true)
    expect(ruleLabel(input)).toBeUndefined()
  })

  it("loads a StableToolBench folder as a source of judge inputs", () => {
    const source = loadSource(EXAMPLE)
    expect(source.kind).toBe("converted")
    expect(source.entries.map((e) => `${e.method}/${e.taskId}`)).toEqual([
      "virtual_chatgpt_cot/588",
      "virtual_chatgpt_cot/608",
      "virtual_chatgpt_cot/1073",
      "virtual_chatgpt_dfs/588",
      "virtual_chatgpt_dfs/608",
      "virtual_chatgpt_dfs/1073"
    ])
  })

  it("rejects a file that is not in the converted format with the file's name", () => {
    expect(() =>
      readConvertedFile(`${EXAMPLE}/preference_results/G1_instruction_virtual_chatgpt_cot_virtual_chatgpt_dfs.json`)
    ).toThrow(/not a StableToolBench converted predictions file/)
  })
})

describe.skipIf(lacks(DATA_EXAMPLE))(`StableToolBench's raw answers as a source${skipNote(DATA_EXAMPLE)}`, () => {
  it("reads answer/<model>/<group>/<qid>_<method>.json as the same judge inputs as their converted file", () => {
    const example = `${EXAMPLE}/`
    const dir = mkdtempSync(join(tmpdir(), "smurfs-answers-"))
    symlinkSync(join(example, "answer"), join(dir, "answer"))
    const raw = loadSource(dir)
    expect(raw.kind).toBe("answers")
    const converted = loadSource(example)
    expect(raw.entries.map((e) => [e.method, e.group, e.taskId, e.answer])).toEqual(
      converted.entries.map((e) => [e.method, e.group, e.taskId, e.answer])
    )
    // a broken file is skipped and named, never a crash
    const broken = mkdtempSync(join(tmpdir(), "smurfs-answers-bad-"))
    mkdirSync(join(broken, "answer", "m", "G1_instruction"), { recursive: true })
    writeFileSync(join(broken, "answer", "m", "G1_instruction", "1_CoT@1.json"), "{}")
    expect(loadSource(broken).invalid[0]).toMatch(/1_CoT@1\.json is not a StableToolBench answer file/)
  })
})
