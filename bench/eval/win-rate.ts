// The win-rate judge (SoWR): one round between a candidate's and a reference's answer to the same task.
import { Effect } from "effect"
import { z } from "zod"
import { renderTemplate } from "../../src/agents/prompt-template.ts"
import { generateObject } from "../../src/llm/structured.ts"
import type { JudgeInput } from "./judge-input.ts"
import type { AnswerStatus, WinRound } from "./labels.ts"
import { renderSteps } from "./pass-rate.ts"
import { pick, shuffle } from "./rng.ts"

export const CompareVerdict = z.object({ reason: z.string(), better: z.enum(["A", "B"]) })

type Side = "candidate" | "reference"

export interface RoundInput {
  readonly candidate: JudgeInput | undefined
  readonly reference: JudgeInput | undefined
  /** Pass labels of this round's judge run; they decide the round when exactly one answer is Solved. */
  readonly candidateStatus: AnswerStatus | undefined
  readonly referenceStatus: AnswerStatus | undefined
  /** The round's seeded generator: shuffles the order and breaks ties between identical answers. */
  readonly rng: () => number
}

/** The cost line shown beside an answer. */
export const costText = (input: JudgeInput): string => {
  const parts = [`${input.cost.toolCalls} tool calls`]
  if (input.cost.promptTokens !== undefined) parts.push(`${input.cost.promptTokens + (input.cost.completionTokens ?? 0)} tokens`)
  if (input.cost.modelCalls !== undefined) parts.push(`${input.cost.modelCalls} model calls`)
  return parts.join(", ")
}

const answerText = (input: JudgeInput): string =>
  `Final answer: ${input.finalAnswer.trim() === "" ? "(empty)" : input.finalAnswer}\nTool calls:\n${renderSteps(input.steps)}`

const identical = (a: JudgeInput, b: JudgeInput) =>
  a.finalAnswer === b.finalAnswer && JSON.stringify(a.steps) === JSON.stringify(b.steps)

/**
 * One round, following ToolEval's preference flow: a missing answer loses; if exactly one answer is
 * Solved it wins; else if none is Solved and exactly one is Unsure, that one wins; identical answers
 * are a coin toss; otherwise the judge picks the better of the two, shown in a seeded random order.
 */
export const judgeRound = Effect.fn("Judge.round")(function* (round: RoundInput) {
  const order = shuffle<Side>(["candidate", "reference"], round.rng)
  const decided = (winner: Side, stage: WinRound["stage"], reason: string): WinRound => ({ winner, order, stage, reason })
  if (!round.candidate) return decided("reference", "missing", "The candidate has no answer for this task.")
  if (!round.reference) return decided("candidate", "missing", "The reference has no answer for this task.")
  const status: Record<Side, AnswerStatus | undefined> = { candidate: round.candidateStatus, reference: round.referenceStatus }
  const solved = order.filter((s) => status[s] === "Solved")
  if (solved.length === 1) return decided(solved[0]!, "solved", "Only this answer is Solved.")
  if (solved.length === 0) {
    const unsure = order.filter((s) => status[s] === "Unsure")
    if (unsure.length === 1) return decided(unsure[0]!, "unsure", "No answer is Solved and only this one is Unsure.")
  }
  const inputs: Record<Side, JudgeInput> = { candidate: round.candidate, reference: round.reference }
  if (identical(inputs.candidate, inputs.reference)) return decided(pick(order, round.rng), "identical", "The answers are identical.")
  const [a, b] = [inputs[order[0]!], inputs[order[1]!]]
  const prompt = renderTemplate("judge-compare", {
    query: round.candidate.query,
    answer_a: answerText(a),
    cost_a: costText(a),
    answer_b: answerText(b),
    cost_b: costText(b)
  })
  const verdict = yield* generateObject({
    role: "judge.compare",
    schema: CompareVerdict,
    messages: [
      { role: "system", content: prompt.system },
      { role: "user", content: prompt.user }
    ]
  })
  return decided(verdict.value.better === "A" ? order[0]! : order[1]!, "judge", verdict.value.reason)
})
