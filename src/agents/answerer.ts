// Answer agent: a step's answer from the tool response, a subtask's answer from all its steps, the final answer.
import * as Effect from "effect/Effect"
import { z } from "zod"
import type { Step } from "../memory/step.ts"
import { type AgentContext, ask } from "./ask.ts"
import { type SubtaskView, subtaskContext } from "./subtask-context.ts"

export const Answer = z.object({ answer: z.string() })

/** The subtask's answer from one tool response and the local memory before it (`view.memory`, the executor's prefix). */
export const answerStep = Effect.fn("Answerer.answerStep")(function* (
  ctx: AgentContext,
  view: SubtaskView,
  step: Pick<Step, "tool" | "args" | "observation">
) {
  const { answer } = yield* ask(ctx, {
    role: "answerer.step",
    template: "answerer-step",
    context: subtaskContext(view),
    // arguments are the model's own text and can be huge; the answerer needs only their gist
    values: { tool: step.tool, args: ctx.budget.agentText(JSON.stringify(step.args)) },
    fit: { observation: (room) => ctx.budget.truncate(step.observation ?? "", room) },
    // the response is data: it reaches the model only as the tool message, never inside instructions
    toolResult: { tool: step.tool, args: step.args, response: "observation" },
    schema: Answer
  })
  return answer
})

/** When the step limit is hit: the subtask's answer from every step global memory holds for it (`steps`, in the subtask's prefix). */
export const answerSubtask = Effect.fn("Answerer.answerSubtask")(function* (
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

/** The query's answer from the subtask answers in global memory. */
export const answerFinal = Effect.fn("Answerer.answerFinal")(function* (
  ctx: AgentContext,
  query: string,
  answers: ReadonlyArray<{ subtask: string; answer: string }>
) {
  const text = answers.map((a, i) => `${i + 1}. ${a.subtask}\n   Answer: ${a.answer || "(no answer)"}`).join("\n")
  const { answer } = yield* ask(ctx, {
    role: "answerer.final",
    template: "answerer-final",
    values: { query },
    data: { answers: answers.map((a) => a.answer) },
    fit: { answers: (room) => ctx.budget.truncate(text, room) },
    schema: Answer
  })
  return answer
})
