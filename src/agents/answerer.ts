// Answer agent: a step's answer from the tool response, a subtask's answer from all its steps, the final answer.
import { z } from "zod"
import type { Step } from "../memory/step.ts"
import { spanFn } from "../trace/span-fn.ts"
import { type AgentContext, ask, askTurn, type Turn } from "./ask.ts"
import { type SubtaskView, subtaskContext, subtaskLog, type TaskView, taskContext } from "./subtask-context.ts"

export const Answer = z.object({ answer: z.string() })

/**
 * The subtask's answer from one tool response and the local memory before it: continues the executor's
 * exchange `after` (the arguments' request and reply), with the call and its response after it. Returns the
 * exchange the verifier continues too.
 */
export const answerStep = spanFn("Answerer.answerStep")(function* (
  ctx: AgentContext,
  view: SubtaskView,
  step: Pick<Step, "tool" | "args" | "observation">,
  after: Turn
) {
  const { value, turn } = yield* askTurn(ctx, {
    role: "answerer.step",
    template: "answerer-step",
    context: subtaskContext(view),
    follows: after,
    // the call (tool and arguments) is on the executor's reply just before the response
    values: {},
    fit: { observation: (room) => ctx.budget.truncate(step.observation ?? "", room) },
    // the response is data: it reaches the model only as the tool message, never inside instructions
    toolResult: { tool: step.tool, args: step.args, response: "observation" },
    schema: Answer
  })
  return { answer: value.answer, turn }
})

/** When the step limit is hit: the subtask's answer from every step global memory holds for it (`steps`, in the subtask's prefix). */
export const answerSubtask = spanFn("Answerer.answerSubtask")(function* (
  ctx: AgentContext,
  view: Omit<SubtaskView, "memory">,
  steps: ReadonlyArray<Step>
) {
  const { answer } = yield* ask(ctx, {
    role: "answerer.subtask",
    template: "answerer-subtask",
    context: subtaskContext({ ...view, memory: (room) => ctx.budget.steps(steps, room) }),
    values: {},
    data: { answers: steps.map((s) => s.answer) },
    schema: Answer
  })
  return answer
})

/**
 * The query's answer from the subtask answers in global memory, after the task's prefix (`view`): the log of
 * subtasks continues the one the last subtask's requests began with.
 */
export const answerFinal = spanFn("Answerer.answerFinal")(function* (
  ctx: AgentContext,
  view: TaskView,
  answers: ReadonlyArray<{ index: number; subtask: string; answer: string }>
) {
  const text = subtaskLog(answers)
  const { answer } = yield* ask(ctx, {
    role: "answerer.final",
    template: "answerer-final",
    context: taskContext(view),
    values: {},
    data: { answers: answers.map((a) => a.answer) },
    fit: { answers: (room) => ctx.budget.truncate(text, room) },
    schema: Answer
  })
  return answer
})
