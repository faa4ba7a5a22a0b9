import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { GenerateRequest } from "../../src/llm/language-model.ts"
import { scriptedLayer } from "../../src/llm/scripted.ts"
import { winRate } from "./aggregate.ts"
import { judgeInputFromRecord } from "./judge-input.ts"
import type { AnswerStatus } from "./labels.ts"
import { rngFor, shuffle } from "./rng.ts"
import { fakeRecord } from "./test-fixtures.ts"
import { judgeRound, passLabel } from "./win-rate.ts"

const candidate = judgeInputFromRecord(
  fakeRecord({
    taskId: "1",
    method: "smurfs",
    finalAnswer: "CANDIDATE answer",
    calls: [{ tool: "a_for_x", ok: true, content: "x" }]
  })
)
const reference = judgeInputFromRecord(
  fakeRecord({ taskId: "1", method: "react", finalAnswer: "REFERENCE answer", calls: [] })
)

const round = (
  statuses: [AnswerStatus | undefined, AnswerStatus | undefined],
  script: ReadonlyArray<object>,
  r = 0,
  inputs = { candidate, reference }
) => {
  const seen: Array<GenerateRequest> = []
  const layer = scriptedLayer({
    "judge.select_better_answer": script.map((reply) => (req: GenerateRequest) => (seen.push(req), reply))
  })
  return Effect.runPromise(
    judgeRound({
      ...inputs,
      candidateStatus: statuses[0],
      referenceStatus: statuses[1],
      rng: rngFor(7, "smurfs", "G1", "1", r)
    }).pipe(Effect.provide(layer))
  ).then((verdict) => ({ verdict, seen }))
}

describe("seeded shuffling", () => {
  it("gives the same order for the same seed and key, and both orders across rounds", () => {
    const orders = Array.from({ length: 16 }, (_, r) =>
      shuffle(["candidate", "reference"], rngFor(7, "smurfs", "G1", "1", r)).join(",")
    )
    const again = Array.from({ length: 16 }, (_, r) =>
      shuffle(["candidate", "reference"], rngFor(7, "smurfs", "G1", "1", r)).join(",")
    )
    expect(again).toEqual(orders)
    expect(new Set(orders)).toEqual(new Set(["candidate,reference", "reference,candidate"]))
  })
})

describe("judgeRound", () => {
  it("gives the round to the only Solved answer without asking the judge", async () => {
    expect((await round(["Solved", "Unsolved"], [])).verdict).toMatchObject({ winner: "candidate", stage: "solved" })
    expect((await round(["Unsure", "Solved"], [])).verdict).toMatchObject({ winner: "reference", stage: "solved" })
  })

  it("gives the round to the answer whose pass label is passed when the other's is failed (eval_preference.py), before any status rule", async () => {
    const layer = scriptedLayer({})
    const decide = (candidatePassed: boolean, referencePassed: boolean) =>
      Effect.runPromise(
        judgeRound({
          candidate,
          reference,
          candidateStatus: "Unsure",
          referenceStatus: "Solved",
          rng: rngFor(1, "x"),
          candidatePassed,
          referencePassed
        }).pipe(Effect.provide(layer))
      )
    expect(await decide(true, false)).toMatchObject({ winner: "candidate", stage: "passed" })
    // equal labels: the statuses decide as before
    expect(await decide(true, true)).toMatchObject({ winner: "reference", stage: "solved" })
  })

  it("derives ToolEval's pass label from K statuses: Solved passes, Unsolved fails, Unsure and ties are seeded coin tosses", () => {
    expect(passLabel(["Solved", "Solved", "Unsolved"], rngFor(0, "a"))).toBe(true)
    expect(passLabel(["Unsolved", undefined, "Solved"], rngFor(0, "a"))).toBe(false)
    const coins = Array.from({ length: 40 }, (_, i) => passLabel(["Unsure"], rngFor(0, "coin", i)))
    expect(new Set(coins)).toEqual(new Set([true, false]))
    expect(Array.from({ length: 40 }, (_, i) => passLabel(["Unsure"], rngFor(0, "coin", i)))).toEqual(coins)
  })

  it("gives the round to the only Unsure answer when none is Solved", async () => {
    expect((await round(["Unsolved", "Unsure"], [])).verdict).toMatchObject({ winner: "reference", stage: "unsure" })
  })

  it("lets a missing answer lose", async () => {
    const { verdict } = await round(["Solved", "Solved"], [], 0, { candidate: undefined as never, reference })
    expect(verdict).toMatchObject({ winner: "reference", stage: "missing" })
  })

  it("asks the judge when both are Solved, showing the answers in the shuffled order", async () => {
    for (let r = 0; r < 6; r++) {
      const { verdict, seen } = await round(["Solved", "Solved"], [{ index: 0, reason: "A is better" }], r)
      expect(seen).toHaveLength(1)
      const user = seen[0]!.messages.find((m) => m.role === "user")!.content
      const firstShown = user.indexOf("CANDIDATE") < user.indexOf("REFERENCE") ? "candidate" : "reference"
      expect(verdict.order[0]).toBe(firstShown)
      // index 0 is whichever answer was shown first
      expect(verdict).toMatchObject({ winner: firstShown, stage: "judge" })
      // both sides as ToolEval shows them: the whole converted answer, the same fields, no costs
      expect(user.match(/"answer_details": /g)).toHaveLength(2)
      expect(user.match(/"total_steps": /g)).toHaveLength(2)
      expect(user).not.toMatch(/promptTokens|modelCalls|model calls|\d+ tool calls/)
      expect(seen[0]!.messages).toHaveLength(1)
    }
  })

  it("asks the judge when neither is Solved nor exactly one Unsure", async () => {
    const { verdict, seen } = await round(["Unsolved", "Unsolved"], [{ index: 1, reason: "B" }])
    expect(seen).toHaveLength(1)
    expect(verdict.winner).toBe(verdict.order[1])
  })

  it("tosses a seeded coin for identical answers instead of asking the judge", async () => {
    const twin = { ...reference, method: "smurfs" }
    const winners = await Promise.all(
      Array.from({ length: 12 }, (_, r) => round(["Solved", "Solved"], [], r, { candidate: twin, reference }))
    )
    expect(winners.every((w) => w.seen.length === 0 && w.verdict.stage === "identical")).toBe(true)
    const again = await Promise.all(
      Array.from({ length: 12 }, (_, r) => round(["Solved", "Solved"], [], r, { candidate: twin, reference }))
    )
    expect(again.map((w) => w.verdict.winner)).toEqual(winners.map((w) => w.verdict.winner))
  })
})

describe("winRate", () => {
  it("counts a task as a win only when the candidate won more rounds; ties are not wins", () => {
    // 3 tasks of 3 rounds: 2-1 (win), 1-2 (loss), 0-0 with all rounds failed (tie) -> 1 win / 3 = 33.33...
    const rate = winRate([
      { candidate: 2, reference: 1 },
      { candidate: 1, reference: 2 },
      { candidate: 0, reference: 0 }
    ])
    expect(rate).toMatchObject({ wins: 1, losses: 1, ties: 1, n: 3 })
    expect(rate.rate).toBeCloseTo(100 / 3, 10)
  })
})
