// What a judge sees of one answered task, whether it came from our run directory or from StableToolBench.
import { z } from "zod"
import { ConvertedAnswerBody, convertedAnswerOf } from "../../src/trace/converters/stabletoolbench.ts"
import { dataOf, isKind, isTopLevel } from "../../src/trace/events.ts"
import type { TaskRecord } from "../run-format.ts"

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

/** Per-task costs, when the source records them, for reports; never shown to a judge (ToolEval's judge sees only the answer). */
export const JudgeCost = z.object({
  modelCalls: z.number().optional(),
  promptTokens: z.number().optional(),
  completionTokens: z.number().optional(),
  toolCalls: z.number(),
  /** Of the tool calls, those nothing recorded or simulated (they failed); undefined when the source does not say. */
  missedToolCalls: z.number().optional(),
  /** Of the tool calls, those a simulator answered (the environment ledger); undefined when the source does not say. */
  simulatedToolCalls: z.number().optional(),
  wallMs: z.number().optional(),
  /** Guards of ours (not the method) that ended the task or its planning: model-call-budget, planner-attempts. */
  guards: z.array(z.string()).optional()
})
export type JudgeCost = z.infer<typeof JudgeCost>

export const JudgeInput = z.object({
  taskId: z.string(),
  group: z.string(),
  method: z.string(),
  /** The agent run (`bench --runs N`) this answer came from; absent for a run of one (run 0). Judged and labelled apart. */
  run: z.number().int().min(0).optional(),
  model: z.string(),
  query: z.string(),
  finalAnswer: z.string(),
  /** ToolEval's "the final step of answer_details is a Finish call"; false for runs cut short. */
  finished: z.boolean(),
  /** The tool calls on the answer's path, Finish excluded (for reports). */
  steps: z.array(JudgeStep),
  cost: JudgeCost,
  /** The converted answer ({method, total_steps, final_answer, answer_details}): all a judge is shown, for our runs and theirs alike. */
  answer: ConvertedAnswerBody
})
export type JudgeInput = z.infer<typeof JudgeInput>

/** The `{error, response}` text StableToolBench shows for a tool result. */
export const toolEvalResponse = (ok: boolean, content: string, error?: string): string =>
  JSON.stringify({ error: ok ? "" : (error ?? "error"), response: content })

/** A judge input from one of our task records: tool calls come from its `tool_call` events (top-level ones: a sub-agent's calls are inside its own tool call). */
export const judgeInputFromRecord = (record: TaskRecord): JudgeInput => {
  // (an `error` record is no result and is not judged; it is written like a give-up if it gets here)
  const answer = convertedAnswerOf({
    ...record,
    finishType: record.finishType === "give_answer" ? "give_answer" : "give_up"
  })
  const steps: Array<JudgeStep> = []
  for (const event of record.events) {
    if (!isKind(event, "tool_call") || !isTopLevel(event)) continue
    const d = dataOf(event, "tool_call")
    const ok = d.ok === true
    steps.push({
      name: String(d.tool ?? ""),
      arguments: JSON.stringify(d.args ?? {}),
      response: toolEvalResponse(ok, String(d.content ?? ""), d.error === undefined ? undefined : String(d.error)),
      ok
    })
  }
  return {
    taskId: record.taskId,
    group: record.group,
    method: record.method,
    ...(record.run === undefined ? {} : { run: record.run }),
    model: record.model,
    query: record.query,
    finalAnswer: record.finalAnswer,
    finished: endsWithFinish(answer),
    steps,
    cost: costOfRecord(record),
    answer
  }
}

/** A task record's costs as a judge input carries them. */
export const costOfRecord = (record: TaskRecord): JudgeCost => ({
  // A method's cost is what it asked for, whether a cache or the server answered.
  modelCalls: record.totals.modelCalls + (record.totals.cachedModelCalls ?? 0),
  promptTokens: record.totals.promptTokens,
  completionTokens: record.totals.completionTokens,
  toolCalls: record.totals.toolCalls + (record.totals.cachedToolCalls ?? 0),
  ...(record.totals.missedToolCalls === undefined ? {} : { missedToolCalls: record.totals.missedToolCalls }),
  ...(record.totals.simulatedToolCalls === undefined ? {} : { simulatedToolCalls: record.totals.simulatedToolCalls }),
  wallMs: record.totals.wallMs,
  ...(record.guards === undefined || record.guards.length === 0 ? {} : { guards: [...record.guards] })
})

/** Misses over answers: calls nothing recorded or simulated, all tool calls, and the tasks that had a miss. */
export const missCounts = (entries: Iterable<{ readonly cost: JudgeCost }>) => {
  let missedToolCalls = 0,
    toolCalls = 0,
    tasksWithMisses = 0,
    tasks = 0
  for (const e of entries) {
    if (e.cost.missedToolCalls === undefined) continue
    tasks++
    missedToolCalls += e.cost.missedToolCalls
    toolCalls += e.cost.toolCalls
    if (e.cost.missedToolCalls > 0) tasksWithMisses++
  }
  return { missedToolCalls, toolCalls, tasksWithMisses, tasks }
}

/** A tool node's message as ToolEval's get_steps reads it. */
const ToolMessage = z.object({ name: z.string(), arguments: z.unknown(), response: z.unknown() })

const text = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value ?? ""))

/**
 * The tool steps of an answer the way ToolEval's `get_steps` walks it: from the first root, always
 * the first child, keeping `tool` nodes with a message. The last of them is ToolEval's "final step".
 */
export const answerSteps = (
  answer: ConvertedAnswerBody
): Array<{ name: string; arguments: string; response: string }> => {
  const steps: Array<{ name: string; arguments: string; response: string }> = []
  let node = answer.answer_details[0]
  while (node) {
    if (node.role === "tool" && node.message) {
      const parsed = ToolMessage.safeParse(node.message)
      if (parsed.success)
        steps.push({
          name: parsed.data.name,
          arguments: text(parsed.data.arguments),
          response: text(parsed.data.response)
        })
    }
    node = node.next[0]
  }
  return steps
}

/** ToolEval's test before any judge call: the final step is a Finish call. */
export const endsWithFinish = (answer: ConvertedAnswerBody): boolean => answerSteps(answer).at(-1)?.name === "Finish"
