// StableToolBench's converted predictions (`model_predictions_converted/<method>/<group>.json`) as judge inputs.

import { z } from "zod"
import { type ConvertedAnswer as ConvertedExample, ConvertedFile } from "../../src/trace/converters/stabletoolbench.ts"
import { readFileBounded } from "../../src/trace/guarded-fs.ts"
import { answerSteps, endsWithFinish, type JudgeInput, type JudgeStep } from "./judge-input.ts"

export type { ConvertedExample }

/** A tool response counts as a success when its `error` field is empty, as StableToolBench's server writes it. */
const responseOk = (response: string): boolean => {
  try {
    const value = JSON.parse(response) as { error?: unknown }
    return (
      typeof value === "object" &&
      value !== null &&
      (value.error === "" || value.error === undefined || value.error === null)
    )
  } catch {
    return false
  }
}

/** One converted example as a judge input; `finished` is ToolEval's "the final step is a Finish". */
export const judgeInputFromConverted = (
  taskId: string,
  method: string,
  group: string,
  example: ConvertedExample
): JudgeInput => {
  const all = answerSteps(example.answer)
  const steps: Array<JudgeStep> = all
    .filter((s) => s.name !== "Finish")
    .map((s) => ({ ...s, ok: responseOk(s.response) }))
  return {
    taskId,
    group,
    method,
    model: example.answer.method,
    query: example.query,
    finalAnswer: example.answer.final_answer,
    finished: endsWithFinish(example.answer),
    steps,
    cost: { toolCalls: steps.length },
    answer: example.answer
  }
}

/** Read and validate a converted predictions file; throws an Error naming the file and the problem. */
export const readConvertedFile = (file: string): ConvertedFile => {
  let raw: unknown
  try {
    raw = JSON.parse(readFileBounded(file))
  } catch (e) {
    throw new Error(`cannot read converted predictions ${file}: ${(e as Error).message}`)
  }
  const parsed = ConvertedFile.safeParse(raw)
  if (!parsed.success)
    throw new Error(`${file} is not a StableToolBench converted predictions file:\n${z.prettifyError(parsed.error)}`)
  return parsed.data
}
