// The pass-rate judge (SoPR), ToolEval's check_is_solved: its rules first, then check_answer_status on
// the final answer, and only when that is Unsure, parse_answer_status on the whole converted answer.
import * as Effect from "effect/Effect"
import type { z } from "zod"
import { ContextOverflow } from "../../src/llm/errors.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { generateObject } from "../../src/llm/structured.ts"
import { jsonDumps } from "../../src/tools/environments/json-dumps.ts"
import type { JudgeInput } from "./judge-input.ts"
import { type JudgeFunction, type JudgePrompts, smurfsJudgePrompts } from "./judge-prompts.ts"
import type { AnswerStatus, PassRun } from "./labels.ts"

/**
 * ToolEval's rules that need no judge: the final step of answer_details is not a Finish call
 * (eval_pass_rate.py), the converted final_answer is empty or contains give_up_and_restart
 * (check_is_solved). Returns the Unsolved label, or undefined when the judge must decide.
 */
export const ruleLabel = (input: JudgeInput): PassRun | undefined => {
  if (!input.finished)
    return { label: "Unsolved", reason: "No answer: the final step is not a Finish call.", stage: "rule" }
  if (input.answer.final_answer === "") return { label: "Unsolved", reason: "Empty final answer.", stage: "rule" }
  if (input.answer.final_answer.includes("give_up_and_restart"))
    return { label: "Unsolved", reason: "The run gave up.", stage: "rule" }
  return undefined
}

/** How one judge call is made: the texts and the sampling seed of this judge run. */
export interface JudgeCall {
  readonly prompts?: JudgePrompts | undefined
  readonly seed?: number | undefined
}

/** Tokens kept free for the judge's reply when a prompt is fitted to its context. */
export const JUDGE_REPLY_TOKENS = 1024
/** Characters per token assumed when fitting: few enough that a prompt fitted by it fits the server's own count. */
const CHARS_PER_TOKEN = 3
/** What is left of a field that had to be cut: its head and a note saying so. */
const MIN_KEPT = 200
const cutNote = (cut: number, contextTokens: number) =>
  `\n[... ${cut} characters cut here to fit the judge's context of ${contextTokens} tokens]`

/**
 * The values of a judge prompt, cut so that the prompt fits the judge's context: the longest field (an
 * answer before the query, as they are the long ones) loses its tail, with a note, until the text fits.
 * Undefined when even the cut prompt cannot fit (the fixed text alone is too long): the caller refuses.
 * A server left to itself would cut the prompt silently, usually from its head: the instructions.
 */
export const fitJudgeValues = (
  render: (values: Readonly<Record<string, string>>) => string,
  values: Readonly<Record<string, string>>,
  contextTokens: number
): { readonly values: Record<string, string>; readonly cut: number } | undefined => {
  const budget = (contextTokens - JUDGE_REPLY_TOKENS) * CHARS_PER_TOKEN
  const fitted: Record<string, string> = { ...values }
  let cut = 0
  for (;;) {
    const excess = render(fitted).length - budget
    if (excess <= 0) return { values: fitted, cut }
    const order = Object.keys(fitted).sort(
      (a, b) => (a === "query" ? 1 : 0) - (b === "query" ? 1 : 0) || fitted[b]!.length - fitted[a]!.length
    )
    const field = order.find((k) => fitted[k]!.length > MIN_KEPT + 120)
    if (field === undefined) return undefined
    const text = fitted[field]!
    const drop = Math.min(text.length - MIN_KEPT, excess + 120)
    fitted[field] = text.slice(0, text.length - drop) + cutNote(drop, contextTokens)
    cut += drop
  }
}

/** One call of a ToolEval function: its text as the only (user) message, its arguments as the reply's JSON; fitted to the judge's context. */
export const callJudge = <A>(
  fn: JudgeFunction,
  values: Readonly<Record<string, string>>,
  schema: z.ZodType<A>,
  call: JudgeCall,
  check?: (value: A) => { guardrail: string; error: string } | undefined
) =>
  Effect.gen(function* () {
    const prompts = call.prompts ?? smurfsJudgePrompts()
    const model = yield* LanguageModel
    const contextTokens = model.info.contextTokens
    const fitted = fitJudgeValues((v) => prompts.render(fn, v), values, contextTokens)
    if (fitted === undefined)
      return yield* new ContextOverflow({
        role: `judge.${fn}`,
        promptTokens: Math.ceil(prompts.render(fn, values).length / CHARS_PER_TOKEN),
        contextTokens,
        provider: model.info.provider
      })
    const reply = yield* generateObject({
      role: `judge.${fn}`,
      schema,
      check,
      messages: [{ role: "user", content: prompts.render(fn, fitted.values) }],
      options: {
        temperature: prompts.temperature,
        maxTokens: prompts.maxTokens,
        ...(call.seed === undefined ? {} : { seed: call.seed })
      }
    })
    return reply.value
  })

/** One pass label for one answer, exactly in ToolEval's order. */
export const judgePass = Effect.fn("Judge.pass")(function* (input: JudgeInput, call: JudgeCall = {}) {
  const rule = ruleLabel(input)
  if (rule) return rule
  return yield* checkIsSolved(input, call)
})

/**
 * ToolEval's check_is_solved alone (rtl.py): an empty or give_up_and_restart final answer is Unsolved,
 * then check_answer_status, then parse_answer_status when Unsure. Win rounds call it on their answers;
 * the pass rate adds eval_pass_rate.py's Finish rule before it (judgePass).
 */
export const checkIsSolved = Effect.fn("Judge.checkIsSolved")(function* (
  input: JudgeInput,
  call: JudgeCall = {},
  /** ToolEval's return_reason: the pass rate asks for a reason, a win round's re-judge does not (its label's reason is ""). */
  returnReason = true
) {
  const seeded = call.seed === undefined ? {} : { seed: call.seed }
  if (input.answer.final_answer === "")
    return { label: "Unsolved", reason: "Empty final answer.", stage: "rule" } satisfies PassRun
  if (input.answer.final_answer.includes("give_up_and_restart"))
    return { label: "Unsolved", reason: "The run gave up.", stage: "rule" } satisfies PassRun
  const prompts = call.prompts ?? smurfsJudgePrompts()
  const ask = (fn: "check_answer_status" | "parse_answer_status", answer: string) =>
    returnReason
      ? callJudge(fn, { query: input.query, answer }, prompts.status[fn], call)
      : Effect.map(callJudge(fn, { query: input.query, answer }, prompts.statusOnly[fn], call), (v) => ({
          ...v,
          reason: ""
        }))
  const first = yield* ask("check_answer_status", input.answer.final_answer)
  if (first.answer_status !== "Unsure")
    return { label: first.answer_status, reason: first.reason, stage: "answer", ...seeded } satisfies PassRun
  const second = yield* ask("parse_answer_status", jsonDumps(input.answer))
  return { label: second.answer_status, reason: second.reason, stage: "trajectory", ...seeded } satisfies PassRun
})

/** ToolEval's score of one label: Solved 1, Unsure 0.5, Unsolved or missing 0. */
export const labelScore = (label: AnswerStatus | undefined): number =>
  label === "Solved" ? 1 : label === "Unsure" ? 0.5 : 0
