// What a judge sees of one answered task, whether it came from our run directory or from StableToolBench.
import { z } from "zod"
import type { TaskRecord } from "../run-format.ts"
import { isKind, isTopLevel } from "../../src/trace/events.ts"

export const JudgeStep = z.object({
  /** The tool's name as the model saw it. */
  name: z.string(),
  /** The arguments as sent (JSON text). */
  arguments: z.string(),
  /** The tool's response as StableToolBench writes it: `{"error": ..., "response": ...}`. */
  response: z.string(),
  /** False when the tool reported an error. */
  ok: z.boolean()
})
export type JudgeStep = z.infer<typeof JudgeStep>

/** Per-task costs, when the source records them (ToolEval's converted predictions record only steps). */
export const JudgeCost = z.object({
  modelCalls: z.number().optional(),
  promptTokens: z.number().optional(),
  completionTokens: z.number().optional(),
  toolCalls: z.number(),
  wallMs: z.number().optional()
})
export type JudgeCost = z.infer<typeof JudgeCost>

export const JudgeInput = z.object({
  taskId: z.string(),
  group: z.string(),
  method: z.string(),
  model: z.string(),
  query: z.string(),
  finalAnswer: z.string(),
  /** ToolEval's "last step is a Finish with an answer"; false for give-ups and runs cut short. */
  finished: z.boolean(),
  /** The tool calls on the answer's path, Finish excluded. */
  steps: z.array(JudgeStep),
  cost: JudgeCost
})
export type JudgeInput = z.infer<typeof JudgeInput>

/** The `{error, response}` text StableToolBench shows for a tool result. */
export const toolEvalResponse = (ok: boolean, content: string, error?: string): string =>
  JSON.stringify({ error: ok ? "" : (error ?? "error"), response: content })

/** A judge input from one of our task records: tool calls come from its `tool_call` events (top-level ones: a sub-agent's calls are inside its own tool call). */
export const judgeInputFromRecord = (record: TaskRecord): JudgeInput => {
  const steps: Array<JudgeStep> = []
  for (const event of record.events) {
    if (!isKind(event, "tool_call") || !isTopLevel(event)) continue
    const d = event.data
    const ok = d["ok"] === true
    steps.push({
      name: String(d["tool"] ?? ""),
      arguments: JSON.stringify(d["args"] ?? {}),
      response: toolEvalResponse(ok, String(d["content"] ?? ""), d["error"] === undefined ? undefined : String(d["error"])),
      ok
    })
  }
  return {
    taskId: record.taskId,
    group: record.group,
    method: record.method,
    model: record.model,
    query: record.query,
    finalAnswer: record.finalAnswer,
    finished: record.finishType === "give_answer",
    steps,
    cost: {
      // A method's cost is what it asked for, whether a cache or the server answered.
      modelCalls: record.totals.modelCalls + (record.totals.cachedModelCalls ?? 0),
      promptTokens: record.totals.promptTokens,
      completionTokens: record.totals.completionTokens,
      toolCalls: record.totals.toolCalls + (record.totals.cachedToolCalls ?? 0),
      wallMs: record.totals.wallMs
    }
  }
}
