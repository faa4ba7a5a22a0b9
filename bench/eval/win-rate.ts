// The win-rate judge (SoWR): one round between a candidate's and a reference's answer to the same task.
import * as Effect from "effect/Effect"
import { jsonDumps } from "../../src/tools/environments/json-dumps.ts"
import type { JudgeInput } from "./judge-input.ts"
import { smurfsJudgePrompts } from "./judge-prompts.ts"
import type { AnswerStatus, WinRound } from "./labels.ts"
import { callJudge, checkIsSolved, type JudgeCall } from "./pass-rate.ts"
import { pick, shuffle } from "./rng.ts"

type Side = "candidate" | "reference"

export interface RoundInput {
  readonly candidate: JudgeInput | undefined
  readonly reference: JudgeInput | undefined
  /** Pass labels of this round's judge run; they decide the round when exactly one answer is Solved. */
  readonly candidateStatus: AnswerStatus | undefined
  readonly referenceStatus: AnswerStatus | undefined
  /** The round's seeded generator: shuffles the order and breaks ties between identical answers. */
  readonly rng: () => number
  /**
   * eval_preference.py's pass labels of the two answers over all K judge runs (passed or failed,
   * see `passLabel`); when one passed and the other failed, that decides the round.
   */
  readonly candidatePassed?: boolean | undefined
  readonly referencePassed?: boolean | undefined
  /**
   * Judge both answers again with check_is_solved inside the round (as StableToolBench's eval_preference.py
   * ends up doing: the is_solved column it reads back does not map to a status, so its rounds re-judge),
   * instead of taking `candidateStatus`/`referenceStatus` from the pass labels.
   */
  readonly rejudge?: boolean | undefined
}

/** Characters of a final answer ToolEval's process_answer keeps for a win round. */
export const WIN_FINAL_ANSWER_CHARS = 1000
/** Nodes of answer_details process_answer keeps (it slices the list, not the text: in practice all of them). */
const WIN_DETAILS_ITEMS = 3000

/** Python's s[:n], by code point. */
const pySlice = (text: string, n: number): string => (text.length <= n ? text : [...text].slice(0, n).join(""))

/**
 * What ToolEval's process_answer leaves of an answer before a win round (evaluators/registered_cls/base.py):
 * no `method`, the final answer cut to 1,000 characters, answer_details sliced to 3,000 items. The tools'
 * descriptions and parameters it drops are never sent by select_better_answer anyway.
 */
export const processAnswer = (input: JudgeInput): JudgeInput => {
  const { method: _method, ...rest } = input.answer
  const answer = {
    ...rest,
    final_answer: pySlice(rest.final_answer, WIN_FINAL_ANSWER_CHARS),
    answer_details: rest.answer_details.slice(0, WIN_DETAILS_ITEMS)
  }
  return { ...input, finalAnswer: answer.final_answer, answer: answer as JudgeInput["answer"] }
}

/**
 * ToolEval's per-task pass label from its K answer statuses (is_passed, then the majority in
 * write_results): Solved passes, Unsolved (or no label) fails, Unsure is a coin toss, and a tie
 * between passes and fails is a coin toss. The query is taken as solvable (StableToolBench's test
 * sets are its solvable queries), so check_task_solvable is not asked.
 */
export const passLabel = (statuses: ReadonlyArray<AnswerStatus | undefined>, rng: () => number): boolean => {
  let passed = 0,
    failed = 0
  for (const status of statuses) {
    const pass = status === "Solved" ? true : status === "Unsure" ? rng() < 0.5 : false
    pass ? passed++ : failed++
  }
  return passed > failed ? true : passed < failed ? false : rng() < 0.5
}

/** ToolEval's check_identity_answers: the same final answer and the same answer details. */
const identical = (a: JudgeInput, b: JudgeInput) =>
  a.answer.final_answer === b.answer.final_answer &&
  JSON.stringify(a.answer.answer_details) === JSON.stringify(b.answer.answer_details)

/**
 * One round, following eval_preference.py then normalized_openai_completions: a missing answer
 * loses; an answer whose pass label is passed beats one whose label is failed; then if exactly
 * one answer is Solved it wins; else if none is Solved and exactly one is Unsure, that one wins;
 * otherwise select_better_answer between the two (identical answers are a coin toss), each shown as
 * the whole converted answer, the same fields for both sides, in a seeded random order.
 */
export const judgeRound = Effect.fn("Judge.round")(function* (round: RoundInput, call: JudgeCall = {}) {
  const order = shuffle<Side>(["candidate", "reference"], round.rng)
  const seeded = call.seed === undefined ? {} : { seed: call.seed }
  const decided = (winner: Side, stage: WinRound["stage"], reason: string): WinRound => ({
    winner,
    order,
    stage,
    reason,
    ...seeded
  })
  if (!round.candidate) return decided("reference", "missing", "The candidate has no answer for this task.")
  if (!round.reference) return decided("candidate", "missing", "The reference has no answer for this task.")
  if (
    round.candidatePassed !== undefined &&
    round.referencePassed !== undefined &&
    round.candidatePassed !== round.referencePassed
  )
    return decided(
      round.candidatePassed ? "candidate" : "reference",
      "passed",
      "Only this answer's pass label is passed."
    )
  // the judge sees the answers as process_answer leaves them, in every call of the round
  const inputs: Record<Side, JudgeInput> = {
    candidate: processAnswer(round.candidate),
    reference: processAnswer(round.reference)
  }
  const status: Record<Side, AnswerStatus | undefined> = {
    candidate: round.candidateStatus,
    reference: round.referenceStatus
  }
  let rejudged: WinRound["statuses"]
  if (round.rejudge) {
    // normalized_openai_completions calls check_is_solved with its default return_reason=False: no reason asked
    for (const side of order) status[side] = (yield* checkIsSolved(inputs[side], call, false)).label
    rejudged = { candidate: status.candidate!, reference: status.reference! }
  }
  const judged = (winner: Side, stage: WinRound["stage"], reason: string): WinRound => ({
    ...decided(winner, stage, reason),
    ...(rejudged ? { statuses: rejudged } : {})
  })
  const solved = order.filter((s) => status[s] === "Solved")
  if (solved.length === 1) return judged(solved[0]!, "solved", "Only this answer is Solved.")
  if (solved.length === 0) {
    const unsure = order.filter((s) => status[s] === "Unsure")
    if (unsure.length === 1) return judged(unsure[0]!, "unsure", "No answer is Solved and only this one is Unsure.")
  }
  if (identical(inputs.candidate, inputs.reference))
    return judged(pick(order, round.rng), "identical", "The answers are identical.")
  const prompts = call.prompts ?? smurfsJudgePrompts()
  const verdict = yield* callJudge(
    "select_better_answer",
    {
      query: inputs.candidate.query,
      answer_0: jsonDumps(inputs[order[0]!].answer),
      answer_1: jsonDumps(inputs[order[1]!].answer)
    },
    prompts.index,
    call,
    (v) =>
      v.index === 0 || v.index === 1
        ? undefined
        : { guardrail: "schema", error: `index must be 0 (Answer_0) or 1 (Answer_1), not ${v.index}` }
  )
  return judged(order[verdict.index]!, "judge", verdict.reason)
})
