// Running a plan: one subtask after another (the paper), or as a dependency graph with independent
// subtasks at the same time; a subtask that cannot be solved is reported as unavailable (AMCP).
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import { emit, linked } from "../trace/events.ts"
import type { PipelineContext } from "./pipeline-context.ts"
import type { PlanGraph } from "./plan-graph.ts"
import type { Fatal } from "./smurfs-step.ts"

/** How a subtask was answered (verified, unverified, step_limit...), as its solver reports it. */
export interface SubtaskOutcome {
  readonly answer: string
  readonly source: string
}

export type SolveSubtask<R> = (
  ctx: PipelineContext,
  index: number,
  subtask: string
) => Effect.Effect<SubtaskOutcome, Fatal, R>

/**
 * Why a subtask's answer is not a fact, or undefined when it is: no tool call of the subtask
 * succeeded and it was answered from memory (or it has no answer at all).
 */
const unavailableReason = (ctx: PipelineContext, index: number, outcome: SubtaskOutcome): string | undefined => {
  const steps = ctx.global.stepsOf(index)
  const succeeded = steps.some((s) => !s.failed)
  // an answer from memory (step limit, every tool failed, stalled) is a fact only when a call succeeded
  if (outcome.answer.trim().length > 0 && (succeeded || outcome.source === "verified")) return undefined
  const lastFailure = steps.findLast((s) => s.failed)
  return lastFailure
    ? `no tool call succeeded (last: ${lastFailure.tool}: ${lastFailure.answer})`
    : "no tool call succeeded"
}

/** Solve one subtask and record its answer; true when the answer is available. */
const solveOne = <R>(ctx: PipelineContext, solve: SolveSubtask<R>, index: number, subtask: string) =>
  linked({ subtask: index })(
    Effect.gen(function* () {
      yield* emit("subtask_started", { index, subtask })
      const outcome = yield* solve(ctx, index, subtask)
      const unavailable = unavailableReason(ctx, index, outcome)
      ctx.global.answer(subtask, outcome.answer, index, unavailable)
      yield* emit("subtask_answered", {
        index,
        subtask,
        answer: outcome.answer,
        source: outcome.source,
        ...(unavailable ? { available: false, reason: unavailable } : {})
      })
      return unavailable === undefined
    })
  )

/** A subtask whose dependencies are unavailable is not attempted: it is unavailable too. */
const skip = (ctx: PipelineContext, index: number, subtask: string, missing: ReadonlyArray<number>) =>
  linked({ subtask: index })(
    Effect.gen(function* () {
      const reason = `it needs the answer of subtask ${missing.map((m) => m + 1).join(", ")}, which is unavailable`
      ctx.global.answer(subtask, "", index, reason)
      yield* emit("subtask_answered", { index, subtask, answer: "", source: "skipped", available: false, reason })
      return false
    })
  )

/**
 * Run every subtask of `plan`. A sequential plan runs in order, each subtask seeing every earlier
 * answer. A graph plan starts each subtask once its dependencies are answered, at most
 * `maxParallelSubtasks` at a time, each seeing exactly its dependencies' answers.
 */
export const runPlan = <R>(ctx: PipelineContext, plan: PlanGraph, solve: SolveSubtask<R>) =>
  Effect.gen(function* () {
    if (plan.mode === "sequential") {
      for (const [index, s] of plan.subtasks.entries()) yield* solveOne(ctx, solve, index, s.task)
      return
    }
    ctx.global.useDependencies(plan.subtasks.map((s) => s.dependsOn))
    const done = yield* Effect.forEach(plan.subtasks, () => Deferred.make<boolean>())
    const permits = yield* Semaphore.make(ctx.options.maxParallelSubtasks)
    // Every subtask waits on its own fiber; only solving takes a permit, so waiting never blocks a runnable one.
    yield* Effect.forEach(
      plan.subtasks,
      (s, index) =>
        Effect.gen(function* () {
          const ready = yield* Effect.forEach(s.dependsOn, (d) => Deferred.await(done[d]!))
          const missing = s.dependsOn.filter((_, k) => !ready[k])
          const available =
            missing.length > 0
              ? yield* skip(ctx, index, s.task, missing)
              : yield* permits.withPermits(1)(solveOne(ctx, solve, index, s.task))
          yield* Deferred.succeed(done[index]!, available)
        }),
      { concurrency: "unbounded", discard: true }
    )
  })

/** The final answer's note on what could not be found, so an answer never hides a missing part. */
export const unavailableNote = (
  answers: ReadonlyArray<{ subtask: string; unavailable?: string | undefined }>
): string =>
  answers
    .filter((a) => a.unavailable !== undefined)
    .map((a) => `Unavailable: ${a.subtask} (${a.unavailable})`)
    .join("\n")
