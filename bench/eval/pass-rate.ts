// The pass-rate judge (SoPR), ToolEval's check_is_solved: rules first, then the answer alone, then the whole trajectory.
import { Effect } from "effect"
import { z } from "zod"
import { renderTemplate } from "../../src/agents/prompt-template.ts"
import { generateObject } from "../../src/llm/structured.ts"
import type { JudgeInput, JudgeStep } from "./judge-input.ts"
import { AnswerStatus, type PassRun } from "./labels.ts"

/** What the judge model returns for a pass label. */
export const PassVerdict = z.object({ reason: z.string(), label: AnswerStatus })

/** Observations are cut like StableToolBench cuts them before a model sees them. */
export const MAX_RESPONSE_CHARS = 1024

/**
 * ToolEval's rules that need no judge: no Finish with an answer as the last step, an empty final
 * answer, or a give-up. Returns the Unsolved label, or undefined when the judge must decide.
 * (ToolEval compares the answer with "" exactly; a blank answer is treated as empty here too.)
 */
export const ruleLabel = (input: JudgeInput): PassRun | undefined => {
  if (!input.finished) return { label: "Unsolved", reason: "No answer: the last step is not a Finish with an answer.", stage: "rule" }
  if (input.finalAnswer.trim() === "") return { label: "Unsolved", reason: "Empty final answer.", stage: "rule" }
  if (input.finalAnswer.includes("give_up_and_restart")) return { label: "Unsolved", reason: "The run gave up.", stage: "rule" }
  return undefined
}

const cut = (text: string) => (text.length > MAX_RESPONSE_CHARS ? `${text.slice(0, MAX_RESPONSE_CHARS)}...` : text)

/** The tool calls as numbered lines, the way ToolEval's `get_steps` prints them. */
export const renderSteps = (steps: ReadonlyArray<JudgeStep>): string =>
  steps.length === 0
    ? "(none)"
    : steps.map((s, i) => `Step ${i + 1}: ${s.name}\n  arguments: ${s.arguments}\n  response: ${cut(s.response)}`).join("\n")

const ask = (role: string, prompt: { system: string; user: string }) =>
  generateObject({
    role,
    schema: PassVerdict,
    messages: [
      { role: "system", content: prompt.system },
      { role: "user", content: prompt.user }
    ]
  }).pipe(Effect.map((r) => r.value))

/**
 * One pass label for one answer. The judge first sees only the query and the final answer; only an
 * Unsure there earns a second call that shows the whole trajectory.
 */
export const judgePass = Effect.fn("Judge.pass")(function* (input: JudgeInput) {
  const rule = ruleLabel(input)
  if (rule) return rule
  const first = yield* ask("judge.answer", renderTemplate("judge-answer", { query: input.query, answer: input.finalAnswer }))
  if (first.label !== "Unsure") return { label: first.label, reason: first.reason, stage: "answer" } satisfies PassRun
  const second = yield* ask(
    "judge.trajectory",
    renderTemplate("judge-trajectory", {
      query: input.query,
      answer: input.finalAnswer,
      step_count: input.steps.length,
      trajectory: renderSteps(input.steps)
    })
  )
  return { label: second.label, reason: second.reason, stage: "trajectory" } satisfies PassRun
})

/** ToolEval's score of one label: Solved 1, Unsure 0.5, Unsolved or missing 0. */
export const labelScore = (label: AnswerStatus | undefined): number => (label === "Solved" ? 1 : label === "Unsure" ? 0.5 : 0)
