import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { GenerateRequest } from "../../src/llm/language-model.ts"
import { type Script, scriptedLayer } from "../../src/llm/scripted.ts"
import { loadTemplate } from "../../src/text/prompt-template.ts"
import { STB_FILES, StbFilesError } from "../../src/text/stabletoolbench-files.ts"
import { lacks, STB_CHECKOUT, skipNote } from "../../test/data.ts"
import { evaluatePass, judgeSeed } from "./evaluate.ts"
import { judgeInputFromRecord } from "./judge-input.ts"
import { JUDGE_FUNCTIONS, judgePrompts } from "./judge-prompts.ts"
import { PassLabels, passLabelsPath } from "./labels.ts"
import { judgePass } from "./pass-rate.ts"
import { rngFor } from "./rng.ts"
import { loadSource } from "./sources.ts"
import { fakeRecord, writeFakeRun } from "./test-fixtures.ts"
import { judgeRound } from "./win-rate.ts"

const STB = STB_CHECKOUT.path
const template = lacks(STB_CHECKOUT) ? "" : readFileSync(`${STB}/${STB_FILES.toolevalTemplate}`, "utf8")
const config = lacks(STB_CHECKOUT) ? "" : readFileSync(`${STB}/${STB_FILES.toolevalConfig}`, "utf8")
/** A function's description in template.txt, cut out by hand (independently of the reader under test). */
const description = (name: string) =>
  template.split(`<name>${name}</name>\n<description>`)[1]!.split("</description>")[0]!

const input = judgeInputFromRecord(
  fakeRecord({
    taskId: "7",
    query: "Weather in Paris?",
    finalAnswer: "Sunny, 18 C.",
    calls: [{ tool: "weather_for_meteo", ok: true, content: "sunny" }]
  })
)
const other = judgeInputFromRecord(
  fakeRecord({ taskId: "7", method: "react", query: "Weather in Paris?", finalAnswer: "Rainy.", calls: [] })
)

const recordingJudge = (status: ReadonlyArray<string>) => {
  const seen: Array<GenerateRequest> = []
  let n = 0
  const script: Script = {
    "judge.check_answer_status": [
      (r: GenerateRequest) => (seen.push(r), { answer_status: status[n++ % status.length], reason: "r" })
    ],
    "judge.parse_answer_status": [(r: GenerateRequest) => (seen.push(r), { answer_status: "Unsure", reason: "r" })],
    "judge.select_better_answer": [(r: GenerateRequest) => (seen.push(r), { index: 1, reason: "r" })],
    $cycle: true
  }
  return { seen, layer: scriptedLayer(script) }
}

/** The answer statuses named by a rule list, in order: the rules' outcomes. */
const outcomes = (text: string) => [...text.matchAll(/"(Solved|Unsolved|Unsure)"/g)].map((m) => m[1])

describe("ToolEval's judge functions", () => {
  it.skipIf(lacks(STB_CHECKOUT))(
    `with --stb sends template.txt's texts, config.yaml's argument schemas and temperature, as one user message${skipNote(STB_CHECKOUT)}`,
    async () => {
      const prompts = judgePrompts(STB)
      const judge = recordingJudge(["Unsure"])
      await Effect.runPromise(judgePass(input, { prompts, seed: 5 }).pipe(Effect.provide(judge.layer)))
      await Effect.runPromise(
        judgeRound(
          {
            candidate: input,
            reference: other,
            candidateStatus: "Solved",
            referenceStatus: "Solved",
            rng: rngFor(0, "x")
          },
          { prompts, seed: 5 }
        ).pipe(Effect.provide(judge.layer))
      )
      const [check, parse, select] = judge.seen
      expect(check!.messages).toEqual([
        {
          role: "user",
          content: description("check_answer_status")
            .replace("{query}", input.query)
            .replace("{answer}", input.answer.final_answer)
        }
      ])
      expect(parse!.messages[0]!.content.startsWith(description("parse_answer_status").split("{query}")[0]!)).toBe(true)
      expect(select!.messages[0]!.content).toContain(description("select_better_answer").split("{answer_1}")[1]!)
      const temperature = Number(/temperature: ([\d.]+)/.exec(config)![1])
      for (const r of judge.seen) expect(r.options).toMatchObject({ temperature, seed: 5 })
      expect(check!.format).toMatchObject({
        properties: { answer_status: { enum: ["Unsure", "Unsolved", "Solved"] }, reason: { type: "string" } },
        required: ["answer_status", "reason"]
      })
      expect(select!.format).toMatchObject({
        properties: { index: { anyOf: [{ const: 0 }, { const: 1 }] } },
        required: ["index", "reason"]
      })
      expect(prompts.source).toBe(`stabletoolbench:${STB}`)
    }
  )

  it.skipIf(lacks(STB_CHECKOUT))(
    `without --stb sends our wording, with the same rules in the same order and the same outcomes${skipNote(STB_CHECKOUT)}`,
    async () => {
      const prompts = judgePrompts(undefined)
      expect(prompts.source).toBe("smurfs")
      const judge = recordingJudge(["Solved"])
      await Effect.runPromise(judgePass(input, { prompts }).pipe(Effect.provide(judge.layer)))
      expect(judge.seen[0]!.messages[0]!.content).not.toContain(description("check_answer_status").split("\n")[1]!)
      const ours = {
        check_answer_status: "judge-check-answer",
        parse_answer_status: "judge-parse-answer",
        select_better_answer: "judge-select-better"
      }
      for (const fn of JUDGE_FUNCTIONS) {
        const text = loadTemplate(ours[fn]).user
        // neither stricter nor looser: each numbered rule ends in the same status as ToolEval's
        expect(outcomes(text)).toEqual(outcomes(description(fn)))
        const numbered = (t: string) => t.match(/^\d+\.\d* /gm)
        expect(numbered(description(fn))!.length).toBeGreaterThanOrEqual(2)
        expect(numbered(text)).toEqual(numbered(description(fn)))
      }
    }
  )

  it("keeps Unsure: an answer that cannot be verified scores 0.5, not 0", async () => {
    const judge = recordingJudge(["Unsure"])
    const label = await Effect.runPromise(judgePass(input).pipe(Effect.provide(judge.layer)))
    expect(label).toMatchObject({ label: "Unsure", stage: "trajectory" })
  })

  it("gives each of K judge runs its own seed, recorded with its label", async () => {
    const run = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }])
    const judge = recordingJudge(["Solved", "Unsolved", "Solved"])
    await Effect.runPromise(
      evaluatePass(loadSource(run).entries, { store: run, judge: "scripted:j", k: 3, seed: 9 }).pipe(
        Effect.provide(judge.layer)
      )
    )
    const seeds = new Set(judge.seen.map((r) => r.options?.seed))
    expect(seeds).toEqual(new Set([0, 1, 2].map((r) => judgeSeed(9, r))))
    expect(seeds.size).toBe(3)
    const stored = PassLabels.parse(
      JSON.parse(readFileSync(passLabelsPath(run, "scripted:j", "smurfs", "G1_instruction", "1"), "utf8"))
    )
    expect(Object.values(stored.runs).map((r) => r.seed)).toEqual([0, 1, 2].map((r) => judgeSeed(9, r)))
    expect(judgeSeed(10, 0)).not.toBe(judgeSeed(9, 0))
  })

  it("refuses a checkout without ToolEval's files, naming the file", () => {
    expect(() => judgePrompts("/nonexistent/stb")).toThrow(StbFilesError)
    expect(() => judgePrompts("/nonexistent/stb")).toThrow(/template\.txt: not found/)
  })
})
