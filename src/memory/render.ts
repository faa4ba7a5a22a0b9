// How memory reads inside a prompt: full steps, and the one-line form used when old steps are folded.
import type { Step } from "./step.ts"

const FOLDED_ANSWER_CHARS = 120

const oneLine = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat
}

/** A step as the executor and answerer read it. */
export const renderStep = (step: Step, index: number): string =>
  [
    `Step ${index + 1}:`,
    `  Thought: ${step.thought}`,
    `  Action: ${step.tool} ${JSON.stringify(step.args)}`,
    `  Answer: ${step.answer}`
  ].join("\n")

/** Steps folded into a short summary: one line each, the answer shortened. */
export const renderFolded = (steps: ReadonlyArray<Step>, firstIndex = 0): string =>
  [
    `Summary of steps ${firstIndex + 1}-${firstIndex + steps.length}:`,
    ...steps.map((s, i) => `- ${firstIndex + i + 1}. ${s.tool}: ${oneLine(s.answer, FOLDED_ANSWER_CHARS)}`)
  ].join("\n")

/** Shown instead of memory when there is none yet, so prompts stay readable. */
export const NO_STEPS = "(no steps yet)"
