// The win round's `index`: the JSON Schema sent to the judge allows only 0 and 1 (a grammar-constrained judge cannot
// write 4.8), with our wording and with ToolEval's config read from a checkout, whose texts stay as they are.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import type { GenerateRequest } from "../../src/llm/language-model.ts"
import { type Script, scriptedLayer } from "../../src/llm/scripted.ts"
import { STB_FILES } from "../../src/text/stabletoolbench-files.ts"
import { judgeInputFromRecord } from "./judge-input.ts"
import { type JudgePrompts, judgePrompts } from "./judge-prompts.ts"
import { rngFor } from "./rng.ts"
import { fakeRecord } from "./test-fixtures.ts"
import { judgeRound } from "./win-rate.ts"

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A checkout with an evaluator in ToolEval's layout: our own short texts, their config's shape (index: number). */
const checkout = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "smurfs-judge-index-"))
  dirs.push(dir)
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    writeFileSync(join(dir, file), text)
  }
  const fn = (name: string, body: string) =>
    `<function>\n<name>${name}</name>\n<description>${body}</description>\n</function>\n`
  write(
    STB_FILES.toolevalTemplate,
    fn("check_answer_status", "Q {query} A {answer}") +
      fn("parse_answer_status", "Q {query} A {answer}") +
      fn("select_better_answer", "Q {query} A0 {answer_0} A1 {answer_1}")
  )
  const status = `        properties:\n          answer_status:\n            type: "string"\n            enum: ["Unsure", "Unsolved", "Solved"]\n        required: ["answer_status"]\n`
  write(
    STB_FILES.toolevalConfig,
    `completions_kwargs:\n  temperature: 0.2\n  functions:\n` +
      `    - name: "check_answer_status"\n      parameters:\n        type: "object"\n${status}` +
      `    - name: "parse_answer_status"\n      parameters:\n        type: "object"\n${status}` +
      `    - name: "select_better_answer"\n      parameters:\n        type: "object"\n        properties:\n          index:\n            type: "number"\n            description: "The index of the better answer."\n        required: ["index"]\n`
  )
  return dir
}

const answer = (method: string, text: string) =>
  judgeInputFromRecord(fakeRecord({ taskId: "7", method, query: "Weather in Paris?", finalAnswer: text, calls: [] }))

/** One win round that reaches the judge (both answers Solved, different), the judge replying `replies` in order. */
const round = async (prompts: JudgePrompts, replies: ReadonlyArray<{ index: number; reason: string }>) => {
  const seen: Array<GenerateRequest> = []
  let n = 0
  const script: Script = {
    "judge.select_better_answer": [(r: GenerateRequest) => (seen.push(r), replies[Math.min(n++, replies.length - 1)]!)],
    $cycle: true
  }
  const verdict = await Effect.runPromise(
    judgeRound(
      {
        candidate: answer("smurfs", "Sunny, 18 C."),
        reference: answer("react", "Rainy."),
        candidateStatus: "Solved",
        referenceStatus: "Solved",
        rng: rngFor(0, "x")
      },
      { prompts, seed: 5 }
    ).pipe(Effect.provide(scriptedLayer(script)))
  )
  return { seen, verdict }
}

/** The values the schema sent allows for `index`, whether written as `enum` or as `anyOf` of `const`s. */
const allowed = (format: Record<string, unknown> | undefined): unknown => {
  const index = (format?.["properties"] as Record<string, Record<string, unknown>> | undefined)?.["index"]
  if (Array.isArray(index?.["enum"])) return index["enum"]
  if (Array.isArray(index?.["anyOf"])) return (index["anyOf"] as Array<{ const?: unknown }>).map((a) => a.const)
  return index
}

describe("the win round's index", () => {
  for (const [name, prompts] of [
    ["our wording", () => judgePrompts(undefined)],
    ["ToolEval's config from a checkout", () => judgePrompts(checkout())]
  ] as const)
    it(`is sent as 0 or 1 only (${name}); 4.8 is a schema error reflected to the judge, 1 is taken`, async () => {
      const { seen, verdict } = await round(prompts(), [
        { index: 4.8, reason: "between the two" },
        { index: 1, reason: "the second is better" }
      ])
      expect(allowed(seen[0]!.format)).toEqual([0, 1])
      // the reply outside the schema was not taken: the judge was asked again
      expect(seen).toHaveLength(2)
      expect(verdict.reason).toBe("the second is better")
    })

  it("keeps ToolEval's own description of index when narrowing it", async () => {
    const { seen } = await round(judgePrompts(checkout()), [{ index: 0, reason: "r" }])
    const index = (seen[0]!.format!["properties"] as Record<string, Record<string, unknown>>)["index"]!
    expect(index["description"]).toBe("The index of the better answer.")
    expect(seen[0]!.messages[0]!.content).toContain("Q Weather in Paris? A0")
  })
})
