// The Finish pseudo-tool that ends a ReAct/DFSDT chain, shared by the baselines and the converters.
import { z } from "zod"
import type { ToolSpec } from "../llm/language-model.ts"
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
