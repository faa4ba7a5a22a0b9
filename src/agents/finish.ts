// The Finish pseudo-tool that ends a ReAct/DFSDT chain, shared by the baselines and the converters.
import { z } from "zod"
import type { ToolSpec } from "../llm/language-model.ts"
import { loadTemplate } from "./prompt-template.ts"

/** The name models call to end a chain, as in StableToolBench. */
export const FINISH = "Finish"

export const FinishArgs = z.object({
  return_type: z.enum(["give_answer", "give_up_and_restart"]),
  final_answer: z.string().optional()
})
export type FinishArgs = z.infer<typeof FinishArgs>

/**
 * The Finish function exactly as StableToolBench shows it to models and writes it into
 * `available_tools` (hand-written rather than from zod, so that the converted files match theirs).
 */
export const finishSpec = (): ToolSpec => ({
  name: FINISH,
  description: loadTemplate("react-finish").user,
  parameters: {
    type: "object",
    properties: {
      return_type: { type: "string", enum: ["give_answer", "give_up_and_restart"] },
      final_answer: { type: "string", description: loadTemplate("react-finish-answer").user }
    },
    required: ["return_type"]
  }
})
