import { existsSync } from "node:fs"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { makeScriptedModel } from "../../src/llm/scripted.ts"
import { EVAL_DEFAULTS } from "./evaluate.ts"
import { passLabelsPath } from "./labels.ts"
import {
  evalSettings,
  InvalidEvalSettings,
  pickReferenceMethod,
  prepareEval,
  QUEUE_CONCURRENCY,
  ReferenceMethodError,
  runEval
} from "./run-eval.ts"
import { loadSource } from "./sources.ts"
import { writeFakeRun } from "./test-fixtures.ts"

describe("EvalSettings", () => {
  it("fills the defaults; the queue raises the tasks in flight", () => {
    const s = evalSettings({ run: "/r", judge: "ollama:j" })
    expect([s.k, s.seed, s.concurrency, s.winStatuses, s.fac, s.force]).toEqual([
      EVAL_DEFAULTS.k,
      EVAL_DEFAULTS.seed,
      EVAL_DEFAULTS.concurrency,
      "rejudge",
      false,
      false
    ])
    expect(evalSettings({ run: "/r", judge: "ollama:j", queue: "redis://127.0.0.1:6379" }).concurrency).toBe(
      QUEUE_CONCURRENCY
    )
    expect(
      evalSettings({ run: "/r", judge: "ollama:j", queue: "redis://127.0.0.1:6379", concurrency: 3 }).concurrency
    ).toBe(3)
  })

  it("refuses settings that do not go together, naming the fix", () => {
    expect(() => evalSettings({ run: "/r", judge: "j", k: 33 })).toThrow(/--k is at most 32 judge runs \(got 33\)/)
    expect(() => evalSettings({ run: "/r", judge: "j", fac: true })).toThrow(
      /--fac sends the prompt of StableToolBench's .*give --stb/
    )
    expect(() => evalSettings({ run: "/r", judge: "j", fac: true, stb: "/stb", queue: "redis://x" })).toThrow(
      /--fac is judged in this process/
    )
    // the judge's sampling on the queue is the workers': a setting here would be silently ignored there
    expect(() => evalSettings({ run: "/r", judge: "j", queue: "redis://x", temperature: 0.5 })).toThrow(
      /with --queue the workers' judge decides/
    )
    expect(() => evalSettings({ run: "/r", judge: "j", winStatuses: "coin" as never })).toThrow(InvalidEvalSettings)
  })
})

describe("runEval", () => {
  it("judges a run from settings alone and returns the rows as a value", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }, { taskId: "2", finishType: "give_up", finalAnswer: "" }])
    const judge = "test:solved"
    const scripted = makeScriptedModel({
      "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }],
      $cycle: true
    })
    const stages: Array<string> = []
    const outcome = await Effect.runPromise(
      runEval(prepareEval(evalSettings({ run: dir, judge, k: 2 })), {
        judgeLayer: Layer.succeed(LanguageModel, scripted),
        observer: { stage: (label) => (stages.push(label), { update: () => {}, stop: () => {} }) }
      })
    )
    expect(stages).toEqual([`pass (${judge})`])
    expect(existsSync(passLabelsPath(dir, judge, "smurfs", "G1_instruction", "1"))).toBe(true)
    expect(outcome.rows).toHaveLength(1)
    // task 1 Solved by the judge, task 2 gave up (Unsolved by rule), in both runs
    expect(outcome.rows[0]!.pass).toMatchObject({ mean: 50, std: 0, runs: 2 })
  })

  it("a reference with several methods and none of the judged one's name asks which", async () => {
    const ref = await writeFakeRun([
      { taskId: "1", method: "react" },
      { taskId: "1", method: "dfsdt" }
    ])
    const reference = loadSource(ref)
    expect(pickReferenceMethod(reference, "smurfs", "react")).toBe("react")
    expect(() => pickReferenceMethod(reference, "smurfs", undefined)).toThrow(ReferenceMethodError)
    expect(() => pickReferenceMethod(reference, "smurfs", "cot")).toThrow(
      /the reference has no method "cot" \(it has: dfsdt, react\)/
    )
  })
})
