import { readdirSync, readFileSync, rmSync } from "node:fs"
import { dirname } from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { GenerateRequest } from "../../src/llm/language-model.ts"
import { type Script, scriptedLayer } from "../../src/llm/scripted.ts"
import { jsonDumps } from "../../src/tools/environments/json-dumps.ts"
import { finishAnswerText } from "../../src/trace/converters/stabletoolbench.ts"
import { lacks, STB_CHECKOUT, skipNote } from "../../test/data.ts"
import { storedPassRate, storedWinRates } from "../report/collect.ts"
import { evaluatePass, evaluateWin } from "./evaluate.ts"
import { judgePrompts } from "./judge-prompts.ts"
import { passLabelsPath, winVerdictsPath } from "./labels.ts"
import { loadSource } from "./sources.ts"
import { writeFakeRun } from "./test-fixtures.ts"

const JUDGE = "scripted:judge"

/** A judge that answers Solved to every answer-only check and counts its calls. */
const countingJudge = (label: "Solved" | "Unsolved" = "Solved") => {
  const calls: Array<string> = []
  const script: Script = {
    "judge.check_answer_status": [(r: GenerateRequest) => (calls.push(r.role), { answer_status: label, reason: "ok" })],
    "judge.select_better_answer": [(r: GenerateRequest) => (calls.push(r.role), { index: 0, reason: "A" })],
    $cycle: true
  }
  return { calls, layer: scriptedLayer(script) }
}

const tasks = [{ taskId: "1" }, { taskId: "2" }, { taskId: "3", finishType: "give_up" as const, finalAnswer: "" }]

describe("evaluatePass", () => {
  it("stores K labels per task and does not re-judge existing labels on resume", async () => {
    const run = await writeFakeRun(tasks)
    const entries = loadSource(run).entries
    const first = countingJudge()
    const s1 = await Effect.runPromise(
      evaluatePass(entries, { store: run, judge: JUDGE, k: 3 }).pipe(Effect.provide(first.layer))
    )
    // tasks 1 and 2 need the judge in 3 runs each; task 3 is Unsolved by rule, no call
    expect(first.calls).toHaveLength(6)
    expect(s1).toMatchObject({ judged: 9, kept: 0, failed: [] })
    const stored = JSON.parse(readFileSync(passLabelsPath(run, JUDGE, "smurfs", "G1_instruction", "3"), "utf8"))
    expect(stored.runs["2"]).toMatchObject({ label: "Unsolved", stage: "rule" })

    const second = countingJudge()
    const s2 = await Effect.runPromise(
      evaluatePass(entries, { store: run, judge: JUDGE, k: 3 }).pipe(Effect.provide(second.layer))
    )
    expect(second.calls).toHaveLength(0)
    expect(s2).toMatchObject({ judged: 0, kept: 9 })

    // a lost label file is judged again, and only that one
    rmSync(passLabelsPath(run, JUDGE, "smurfs", "G1_instruction", "2"))
    const third = countingJudge()
    await Effect.runPromise(evaluatePass(entries, { store: run, judge: JUDGE, k: 3 }).pipe(Effect.provide(third.layer)))
    expect(third.calls).toHaveLength(3)

    // (1 + 1 + 0) / 3 in each run -> 66.67 ± 0
    const rate = storedPassRate(run, JUDGE.replace(":", "-"), entries)!
    expect(rate.mean).toBeCloseTo(66.667, 3)
    expect(rate.std).toBe(0)
  })

  it("stores a judge's reason redacted when it echoes a key", async () => {
    const run = await writeFakeRun([{ taskId: "1" }])
    const entries = loadSource(run).entries
    const leaky = scriptedLayer({
      "judge.check_answer_status": [
        { answer_status: "Solved", reason: "checked with api_key=sk-live-0123456789abcdef" }
      ],
      $cycle: true
    })
    await Effect.runPromise(evaluatePass(entries, { store: run, judge: JUDGE, k: 1 }).pipe(Effect.provide(leaky)))
    const text = readFileSync(passLabelsPath(run, JUDGE, "smurfs", "G1_instruction", "1"), "utf8")
    expect(text).not.toContain("0123456789abcdef")
    expect(JSON.parse(text).runs["0"]).toMatchObject({ label: "Solved", reason: expect.stringContaining("[REDACTED]") })
  })

  it("records a malformed judge reply as a failure and leaves that label to a later run", async () => {
    const run = await writeFakeRun([{ taskId: "1" }])
    const entries = loadSource(run).entries
    const bad = scriptedLayer({ "judge.check_answer_status": ["not json"], $cycle: true })
    const s = await Effect.runPromise(
      evaluatePass(entries, { store: run, judge: JUDGE, k: 1 }).pipe(Effect.provide(bad))
    )
    expect(s.failed).toHaveLength(1)
    expect(s.judged).toBe(0)
  })
})

describe("stored labels keyed by the settings that decide them", () => {
  it.skipIf(lacks(STB_CHECKOUT))(
    `makes new labels when the texts, the seed or K change, sets the old ones aside, and redoes them with force${skipNote(STB_CHECKOUT)}`,
    async () => {
      const run = await writeFakeRun([{ taskId: "1" }])
      const entries = loadSource(run).entries
      const path = passLabelsPath(run, JUDGE, "smurfs", "G1_instruction", "1")
      const judged = async (options: {
        seed?: number
        k?: number
        force?: boolean
        prompts?: ReturnType<typeof judgePrompts>
      }) => {
        const judge = countingJudge()
        const s = await Effect.runPromise(
          evaluatePass(entries, { store: run, judge: JUDGE, k: options.k ?? 2, ...options }).pipe(
            Effect.provide(judge.layer)
          )
        )
        return { calls: judge.calls.length, summary: s }
      }
      expect((await judged({})).calls).toBe(2)
      expect((await judged({})).summary).toMatchObject({ judged: 0, kept: 2 })
      // another seed: new labels, never mixed with the old ones, which stay beside
      expect((await judged({ seed: 5 })).calls).toBe(2)
      expect(readdirSync(dirname(path)).filter((f) => f.startsWith("1.json.before-"))).toHaveLength(1)
      expect(JSON.parse(readFileSync(path, "utf8")).runs["0"].seed).not.toBe(undefined)
      // another K, other texts: new labels again
      expect((await judged({ seed: 5, k: 3 })).calls).toBe(3)
      const stb = STB_CHECKOUT.path
      expect((await judged({ seed: 5, k: 3, prompts: judgePrompts(stb) })).calls).toBe(3)
      expect(JSON.parse(readFileSync(path, "utf8")).prompts).toBe(`stabletoolbench:${stb}`)
      // the same settings are kept, unless forced
      expect((await judged({ seed: 5, k: 3, prompts: judgePrompts(stb) })).calls).toBe(0)
      expect((await judged({ seed: 5, k: 3, prompts: judgePrompts(stb), force: true })).calls).toBe(3)
      expect(readdirSync(dirname(path)).filter((f) => f.startsWith("1.json.before-"))).toHaveLength(4)
    }
  )
})

describe("stored labels keyed by the profile of the judged run", () => {
  it("makes new pass labels and win rounds when the candidate's or the reference's profile changes, never mixing them", async () => {
    const run = await writeFakeRun([{ taskId: "1" }])
    const ref = await writeFakeRun([{ taskId: "1", method: "react", finishType: "give_up", finalAnswer: "" }])
    const candidates = loadSource(run).entries
    const references = loadSource(ref).entries
    const path = passLabelsPath(run, JUDGE, "smurfs", "G1_instruction", "1")
    const roundsPath = winVerdictsPath(run, JUDGE, "ref-react", "smurfs", "G1_instruction", "1")
    const judged = async (profile: string | undefined, referenceProfile: string | undefined) => {
      const judge = countingJudge()
      const options = {
        store: run,
        judge: JUDGE,
        k: 2,
        profile,
        referenceProfile,
        referenceName: "ref-react",
        referenceSource: ref,
        referenceMethod: "react"
      }
      const s = await Effect.runPromise(
        Effect.gen(function* () {
          const pass = yield* evaluatePass(candidates, options)
          const win = yield* evaluateWin(candidates, references, options)
          return { pass, win }
        }).pipe(Effect.provide(judge.layer))
      )
      return { pass: s.pass.judged, win: s.win.judged }
    }
    expect(await judged(undefined, undefined)).toEqual({ pass: 2, win: 2 })
    // "improved" is the default: the same labels
    expect(await judged("improved", undefined)).toEqual({ pass: 0, win: 0 })
    expect(JSON.parse(readFileSync(path, "utf8")).profile).toBe(undefined)
    // the run's answers came from another profile: new labels and rounds, the old ones set aside
    expect(await judged("reference", undefined)).toEqual({ pass: 2, win: 2 })
    expect(JSON.parse(readFileSync(path, "utf8")).profile).toBe("reference")
    expect(JSON.parse(readFileSync(roundsPath, "utf8")).profile).toBe("reference")
    expect(readdirSync(dirname(path)).filter((f) => f.startsWith("1.json.before-"))).toHaveLength(1)
    // the reference's profile changed: new rounds (and reference labels), the candidate's pass labels kept
    expect(await judged("reference", "reference")).toEqual({ pass: 0, win: 2 })
    expect(JSON.parse(readFileSync(roundsPath, "utf8")).reference.profile).toBe("reference")
    expect(readdirSync(dirname(roundsPath)).filter((f) => f.startsWith("1.json.before-"))).toHaveLength(2)
  })
})

describe("evaluateWin", () => {
  it("judges rounds against a reference, is resumable, and aggregates to SoWR", async () => {
    const run = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }, { taskId: "3" }])
    const ref = await writeFakeRun([
      { taskId: "1", method: "react", finishType: "give_up", finalAnswer: "" },
      { taskId: "2", method: "react", finalAnswer: "another answer" }
    ])
    const candidates = loadSource(run).entries
    const references = loadSource(ref).entries
    const judge = countingJudge()
    const options = {
      store: run,
      judge: JUDGE,
      k: 3,
      referenceName: "ref-react",
      referenceSource: ref,
      referenceMethod: "react",
      seed: 1,
      statuses: "pass-labels" as const
    }
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* evaluatePass(candidates, { store: run, judge: JUDGE, k: 3 })
        yield* evaluateWin(candidates, references, options)
      }).pipe(Effect.provide(judge.layer))
    )
    // task 1: only the candidate is Solved in every run, so only its pass label is passed -> 3 rounds won without the judge
    // task 2: both Solved -> the judge picks "A" (the first shown) in each of 3 rounds
    // task 3: the reference has no answer -> the candidate wins without the judge
    expect(judge.calls.filter((c) => c === "judge.select_better_answer")).toHaveLength(3)
    const v2 = JSON.parse(
      readFileSync(winVerdictsPath(run, JUDGE, "ref-react", "smurfs", "G1_instruction", "2"), "utf8")
    )
    for (const r of ["0", "1", "2"]) expect(v2.rounds[r].winner).toBe(v2.rounds[r].order[0])
    const v1 = JSON.parse(
      readFileSync(winVerdictsPath(run, JUDGE, "ref-react", "smurfs", "G1_instruction", "1"), "utf8")
    )
    expect(Object.values(v1.rounds).map((r) => (r as { stage: string }).stage)).toEqual(["passed", "passed", "passed"])

    const again = countingJudge()
    const s = await Effect.runPromise(evaluateWin(candidates, references, options).pipe(Effect.provide(again.layer)))
    expect(again.calls).toHaveLength(0)
    expect(s.judged).toBe(0)

    const [win] = storedWinRates(run, "scripted-judge", "smurfs", "G1_instruction")
    // over the tasks both sides have (task 3 has no reference answer, so it is not a comparison):
    // wins: task 1 (3-0), task 2 depends on the seeded order; N = 2
    const expectedWins =
      1 + (Object.values(v2.rounds).filter((r) => (r as { winner: string }).winner === "candidate").length >= 2 ? 1 : 0)
    expect(win).toMatchObject({ n: 2, wins: expectedWins, reference: "ref-react" })
    expect(win!.rate).toBeCloseTo((100 * expectedWins) / 2, 10)
  })

  it("shares the pass labels of a reference method in the same run instead of judging them again", async () => {
    const run = await writeFakeRun([{ taskId: "1" }, { taskId: "1", method: "react", finalAnswer: "other" }])
    const entries = loadSource(run).entries
    const judge = countingJudge()
    await Effect.runPromise(evaluatePass(entries, { store: run, judge: JUDGE, k: 2 }).pipe(Effect.provide(judge.layer)))
    expect(judge.calls).toEqual([
      "judge.check_answer_status",
      "judge.check_answer_status",
      "judge.check_answer_status",
      "judge.check_answer_status"
    ])
    const win = countingJudge()
    await Effect.runPromise(
      evaluateWin(
        entries.filter((e) => e.method === "smurfs"),
        entries.filter((e) => e.method === "react"),
        {
          store: run,
          judge: JUDGE,
          k: 2,
          referenceName: "self-react",
          referenceSource: run,
          referenceMethod: "react",
          referenceInStore: true,
          statuses: "pass-labels"
        }
      ).pipe(Effect.provide(win.layer))
    )
    // both Solved in both rounds: only the comparisons reach the judge
    expect(win.calls).toEqual(["judge.select_better_answer", "judge.select_better_answer"])
  })

  it("re-judges both answers with check_is_solved in every round by default, showing what process_answer leaves", async () => {
    const long = "L".repeat(1500)
    const run = await writeFakeRun([{ taskId: "1", finalAnswer: long }])
    const ref = await writeFakeRun([{ taskId: "1", method: "react", finalAnswer: "another answer" }])
    const seen: Array<GenerateRequest> = []
    const judge = scriptedLayer({
      "judge.check_answer_status": [(r: GenerateRequest) => (seen.push(r), { answer_status: "Solved", reason: "ok" })],
      "judge.select_better_answer": [(r: GenerateRequest) => (seen.push(r), { index: 0, reason: "A" })],
      $cycle: true
    })
    await Effect.runPromise(
      evaluateWin(loadSource(run).entries, loadSource(ref).entries, {
        store: run,
        judge: JUDGE,
        k: 2,
        referenceName: "ref",
        referenceSource: ref,
        referenceMethod: "react",
        seed: 3
      }).pipe(Effect.provide(judge))
    )
    // the reference's two pass labels (its pass rate), then each round asks check_answer_status for both answers and compares them
    expect(seen.map((r) => r.role)).toEqual([
      "judge.check_answer_status",
      "judge.check_answer_status",
      "judge.check_answer_status",
      "judge.check_answer_status",
      "judge.select_better_answer",
      "judge.check_answer_status",
      "judge.check_answer_status",
      "judge.select_better_answer"
    ])
    // the converted final answer (the Finish arguments' text) cut to its first 1,000 characters, as process_answer does
    const cut = finishAnswerText(long).slice(0, 1000)
    for (const request of seen) {
      const text = request.messages.map((m) => m.content).join("\n")
      expect(text).not.toMatch(/"method"|smurfs|CoT@1|DFS_woFilter/)
      if (request.role === "judge.check_answer_status" && text.includes("LLL")) {
        expect(text).toContain(cut)
        expect(text).not.toContain(finishAnswerText(long).slice(0, 1001))
      }
    }
    // select_better_answer shows the cut final_answer (the Finish call inside answer_details stays whole, as in ToolEval)
    expect(seen.find((r) => r.role === "judge.select_better_answer")!.messages[0]!.content).toContain(
      `"final_answer": ${jsonDumps(cut)}`
    )
    const v = JSON.parse(readFileSync(winVerdictsPath(run, JUDGE, "ref", "smurfs", "G1_instruction", "1"), "utf8"))
    expect(v.statuses).toBe("rejudge")
    expect(v.rounds["0"]).toMatchObject({ stage: "judge", statuses: { candidate: "Solved", reference: "Solved" } })
  })

  it("with statuses: stabletoolbench, lets differing pass labels decide first, then re-judges (their eval_preference.py with its pass-rate CSVs)", async () => {
    const run = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }])
    const ref = await writeFakeRun([
      { taskId: "1", method: "react", finishType: "give_up", finalAnswer: "" },
      { taskId: "2", method: "react", finalAnswer: "another answer" }
    ])
    const candidates = loadSource(run).entries
    const judge = countingJudge()
    const options = {
      store: run,
      judge: JUDGE,
      k: 1,
      referenceName: "ref-stb",
      referenceSource: ref,
      referenceMethod: "react",
      statuses: "stabletoolbench" as const
    }
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* evaluatePass(candidates, { store: run, judge: JUDGE, k: 1 })
        judge.calls.length = 0
        yield* evaluateWin(candidates, loadSource(ref).entries, options)
      }).pipe(Effect.provide(judge.layer))
    )
    const v1 = JSON.parse(readFileSync(winVerdictsPath(run, JUDGE, "ref-stb", "smurfs", "G1_instruction", "1"), "utf8"))
    expect(v1.rounds["0"]).toMatchObject({ stage: "passed" })
    const v2 = JSON.parse(readFileSync(winVerdictsPath(run, JUDGE, "ref-stb", "smurfs", "G1_instruction", "2"), "utf8"))
    expect(v2).toMatchObject({
      statuses: "stabletoolbench",
      rounds: { "0": { stage: "judge", statuses: { candidate: "Solved", reference: "Solved" } } }
    })
    // the reference's pass label (1 call for task 2), then the round's re-judge of both answers and the comparison
    expect(judge.calls).toEqual([
      "judge.check_answer_status",
      "judge.check_answer_status",
      "judge.check_answer_status",
      "judge.select_better_answer"
    ])
  })
})
