// The Finish pseudo-tool that ends a ReAct/DFSDT chain, shared by the baselines and the converters.
import { z } from "zod"
import type { ToolSpec } from "../llm/language-model.ts"
import { plainJson, pythonJsonLoads } from "../tools/environments/python-json.ts"
import { type BaselinePrompts, smurfsBaselinePrompts } from "./baseline-prompts.ts"

/** The name models call to end a chain, as in StableToolBench. */
export const FINISH = "Finish"

export const FinishArgs = z.object({
  return_type: z.enum(["give_answer", "give_up_and_restart"]),
  final_answer: z.string().optional()
})
export type FinishArgs = z.infer<typeof FinishArgs>

/**
 * The Finish function in StableToolBench's shape, as shown to models and written into
 * `available_tools` (hand-written rather than from zod, so that the converted files match theirs);
 * its descriptions are theirs with --stb, else ours.
 */
export const finishSpec = (prompts: BaselinePrompts = smurfsBaselinePrompts()): ToolSpec => {
  let spec = finishSpecs.get(prompts)
  if (spec === undefined) {
    spec = buildFinishSpec(prompts)
    finishSpecs.set(prompts, spec)
  }
  return spec
}

/** Built once per prompt source: every chain lists it. Shared, never mutated. */
const finishSpecs = new WeakMap<BaselinePrompts, ToolSpec>()

const buildFinishSpec = (prompts: BaselinePrompts): ToolSpec => ({
  name: FINISH,
  description: prompts.finishDescription,
  parameters: {
    type: "object",
    properties: {
      return_type: { type: "string", enum: ["give_answer", "give_up_and_restart"] },
      final_answer: { type: "string", description: prompts.finishAnswerDescription }
    },
    required: ["return_type"]
  }
})

/** Python's `s[start:stop]` for indexes `str.find` gave (a -1 stop counts from the end). */
const pythonSlice = (s: string, start: number, stop: number): string => {
  const end = stop < 0 ? s.length + stop : stop
  return end <= start ? "" : s.slice(start, end)
}

/**
 * A Finish call's arguments read as StableToolBench's rapidapi.py reads them: `json.loads(text, strict=False)`
 * (control characters allowed inside strings); when that fails, `return_type` and `final_answer` found by their
 * `"name": "` substrings (the final answer is the rest of the text, closing quote and brace included, as theirs).
 */
export const readFinishArguments = (text: string): Record<string, unknown> => {
  try {
    const value = plainJson(pythonJsonLoads(text, false))
    // their code then reads it as a dict; anything else has no return_type
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {}
  } catch {
    const found: Record<string, unknown> = {}
    const type = '"return_type": "'
    if (text.includes(type)) {
      found["return_type"] = text.includes(`${type}give_answer"`)
        ? "give_answer"
        : text.includes(`${type}give_up_and_restart"`)
          ? "give_up_and_restart"
          : pythonSlice(text, text.indexOf(type) + type.length, text.indexOf('",'))
    }
    const answer = '"final_answer": "'
    if (text.includes(answer)) found["final_answer"] = text.slice(text.indexOf(answer) + answer.length)
    return found
  }
}
