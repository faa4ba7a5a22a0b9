// One subtask of the Smurfs loop: a depth-first search over tool calls, as the authors' worker runs it.
import * as Effect from "effect/Effect"
import type { GlobalMemory } from "../memory/global-memory.ts"
import { LocalMemory } from "../memory/local-memory.ts"
import { emit } from "../trace/events.ts"
import { spanFn } from "../trace/span-fn.ts"
import { answerSubtask } from "./answerer.ts"
import { BudgetExhausted } from "./errors.ts"
import type { FailedCall } from "./executor.ts"
import type { PipelineContext } from "./pipeline-context.ts"
import { answerSubtaskReference, taskLog, verifyReference } from "./smurfs-reference.ts"
import { backtrack, executeReferenceStep, executeStep, type StepOutcome, soft, subtaskViewOf } from "./smurfs-step.ts"
import { executeFusedStep } from "./smurfs-step-fused.ts"
import { withSubtaskTools } from "./subtask-tools.ts"
import { type Verdict, verify } from "./verifier.ts"

/** How a subtask's answer came about (the `source` of its `subtask_answered` event). */
export type AnswerSource = "verified" | "step_limit" | "exhausted" | "stalled" | "budget"

/**
 * Without the Answer agent, a subtask's answer is raw data: the responses on the current path, or the
 * latest accepted response global memory holds for the subtask when the path is empty.
 */
const rawAnswer = (global: GlobalMemory, index: number, local: LocalMemory): string => {
  const path = local.steps.map((s) => s.answer.trim()).filter((a) => a.length > 0)
  if (path.length > 0) return path.join("\n")
  return global.stepsOf(index).findLast((s) => !s.failed)?.answer ?? ""
}

/**
 * The DFS of one subtask. Only accepted steps on the current path count against `maxSteps` (the
 * reference's `step_num` is the path's depth): a failed call, an agent error or an unknown tool name
 * costs no step, and a backtrack gives the popped step back. What bounds the attempts is the task's
 * model-call budget (when it runs out, the subtask's best answer so far is kept in global memory) and,
 * as the reference's retry counters do, `maxAgentErrors` attempts in a row that reach no tool.
 */
export const solveSubtask = spanFn("Smurfs.subtask")(function* (
  parent: PipelineContext,
  index: number,
  subtask: string
) {
  // with a recommender (--toolset retrieve), the subtask sees the tools retrieved for it
  const ctx = yield* withSubtaskTools(parent, subtask)
  const { options, global, task } = ctx
  const local = new LocalMemory()
  const excluded: Array<Set<string>> = [new Set()] // tools that failed, per depth of the current path
  let hint: string | undefined
  let stalled = 0 // attempts in a row that called no tool (agent errors, unknown tool names)
  let badChoices = 0 // tool choices in a row that named no tool (the authors' rule takes the first remaining tool after some)
  // the call that just failed at this node, which the next attempt continues (rules.rethink off)
  let retry: FailedCall | undefined
  const { rules, reference } = options
  const search = Effect.gen(function* () {
    while (local.depth < options.maxSteps) {
      const failed = (excluded[local.depth] ??= new Set())
      if (task.tools.tools.every((t) => failed.has(t.name))) {
        if (local.depth === 0) return "exhausted" as const // nothing left to try anywhere
        retry = undefined
        yield* backtrack(ctx, index, local, excluded)
        continue
      }
      if (rules.stall && stalled >= options.maxAgentErrors) return "stalled" as const
      const forced =
        rules.forceToolAfter !== undefined && badChoices >= rules.forceToolAfter
          ? task.tools.tools.find((t) => !failed.has(t.name))
          : undefined
      const outcome: StepOutcome = reference
        ? yield* executeReferenceStep(ctx, reference, index, subtask, local, [...failed], hint, forced)
        : options.executor === "fused"
          ? yield* executeFusedStep(ctx, index, subtask, local, [...failed], hint, retry)
          : yield* executeStep(ctx, index, subtask, local, [...failed], hint, retry)
      retry = outcome.kind === "failed" && !rules.rethink ? outcome.retry : undefined
      stalled = outcome.kind === "error" || (outcome.kind === "failed" && !outcome.called) ? stalled + 1 : 0
      badChoices =
        outcome.kind === "error" && outcome.badChoice === true
          ? badChoices + 1
          : outcome.kind === "error"
            ? badChoices
            : 0
      if (outcome.kind === "failed") failed.add(outcome.tool)
      if (outcome.kind !== "step") continue
      global.record(index, local.depth, outcome.step)
      local.push(outcome.step)
      excluded[local.depth] = new Set()
      // Verifier off (the paper's ablation): a plain DFS that keeps calling tools until the step limit.
      if (!options.verifier) continue
      // the fused executor's step came with its verdict
      const verdict: Verdict | undefined = outcome.verdict
        ? outcome.verdict.value
        : yield* soft(
            "verifier",
            reference
              ? verifyReference(ctx, reference, subtask, outcome.step.answer)
              : verify(
                  ctx,
                  subtaskViewOf(ctx, index, subtask, local.steps.slice(0, -1)),
                  outcome.step.answer,
                  outcome.turn,
                  outcome.response
                )
          )
      yield* emit("verdict", {
        subtask: index,
        status: verdict?.status ?? "pending",
        reason:
          verdict === undefined
            ? "the verifier failed"
            : (verdict.reason ??
              verdict.hint ??
              (verdict.status === "solved" ? "the answer was accepted" : "no hint given")),
        hint: verdict?.hint ?? null
      })
      if (verdict?.status === "solved") return "verified" as const
      // a failed verifier call gives no hint; the step stays on the path, as in the reference, which keeps the hint it had
      hint = rules.keepHint
        ? typeof verdict?.hint === "string"
          ? verdict.hint
          : hint
        : verdict
          ? (verdict.hint ?? verdict.reason)
          : undefined
    }
    return "step_limit" as const
  })
  const ended = yield* search.pipe(
    // Out of model calls: keep what the subtask found so far in global memory, then end the task.
    Effect.tapError((e) =>
      e instanceof BudgetExhausted ? keep(ctx, index, subtask, rawAnswer(global, index, local)) : Effect.void
    )
  )
  if (ended === "verified") return { answer: local.steps.at(-1)!.answer, source: ended satisfies AnswerSource }
  // Step limit, every tool failed at the root, or the agents stalled: answer from everything global memory holds for the subtask.
  const fallback = rawAnswer(global, index, local)
  const all = global.stepsOf(index)
  if (reference) {
    // the authors' final-answer prompt over the subtask's answered steps; when every tool failed at the root, wrapped in their "Sorry" form
    const question = taskLog(global.answersFor(index), subtask)
    const answered = all.filter((s) => !s.failed)
    const partial = options.answerer
      ? ((yield* soft("answerer.subtask", answerSubtaskReference(ctx, reference, question, answered))) ?? fallback)
      : fallback
    return {
      answer: ended === "exhausted" ? reference.source.sorry(partial) : partial,
      source: ended satisfies AnswerSource
    }
  }
  const answer =
    options.answerer && all.length > 0
      ? ((yield* soft("answerer.subtask", answerSubtask(ctx, subtaskViewOf(ctx, index, subtask, []), all))) ?? fallback)
      : fallback
  return { answer, source: ended satisfies AnswerSource }
})

/** Record a subtask's partial answer when the budget ran out (only when there is one to keep). */
const keep = (ctx: PipelineContext, index: number, subtask: string, answer: string) =>
  answer.trim().length === 0
    ? Effect.void
    : Effect.gen(function* () {
        ctx.global.answer(subtask, answer, index)
        yield* emit("subtask_answered", { index, subtask, answer, source: "budget" satisfies AnswerSource })
      })
