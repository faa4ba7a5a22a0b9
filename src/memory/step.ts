// One executor step of the Smurfs loop, as kept in memory: what was thought, called, seen and concluded.
import { z } from "zod"

/** A step on a subtask's DFS path (the paper's memory unit). */
export const Step = z.object({
  thought: z.string(),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  /** The tool's response, kept for the answerer of this step; later prompts see only the answer. */
  observation: z.string().optional(),
  answer: z.string()
})
export type Step = z.infer<typeof Step>
