// The Smurfs pipeline (the paper's algorithm): plan, then per subtask a depth-first tool search with
// answers and verification, then one final answer from global memory.
import { Effect, Result } from "effect"
import { LanguageModel } from "../llm/language-model.ts"
import { ContextBudget } from "../memory/context-budget.ts"
import { GlobalMemory } from "../memory/global-memory.ts"
import { LocalMemory } from "../memory/local-memory.ts"
import { emit } from "../trace/events.ts"
import { recording, totalsOf, type Trajectory } from "../trace/trajectory.ts"
import { answerFinal, answerSubtask } from "./answerer.ts"
import { askUserTool } from "./ask-user.ts"
import { BudgetExhausted } from "./errors.ts"
import { sequentialPlan } from "./plan-graph.ts"
import { plan } from "./planner.ts"
import { backtrack, executeStep, type PipelineContext, soft } from "./smurfs-step.ts"
import { resolveOptions, type SmurfsOptions } from "./smurfs-options.ts"
import { runPlan, unavailableNote } from "./smurfs-plan.ts"
import type { Method, Task } from "./task.ts"
import { verify } from "./verifier.ts"

/** One subtask: a DFS over tool calls, bounded by the step limit. */
const solveSubtask = Effect.fn("Smurfs.subtask")(function* (ctx: PipelineContext, index: number, subtask: string) {
  const { options, global, task } = ctx
  const local = new LocalMemory()
  const excluded: Array<Set<string>> = [new Set()] // tools that failed, per depth of the current path
  let hint: string | undefined
  for (let steps = 0; steps < options.maxSteps; ) {
    const failed = (excluded[local.depth] ??= new Set())
    if (task.tools.tools.every((t) => failed.has(t.name))) {
      if (local.depth === 0) break // nothing left to try anywhere
      yield* backtrack(ctx, index, local, excluded)
      continue
    }
    steps++
    const outcome = yield* executeStep(ctx, index, subtask, local, [...failed], hint)
    if (outcome.kind === "failed") failed.add(outcome.tool)
    if (outcome.kind !== "step") continue
    global.record(index, local.depth, outcome.step)
    local.push(outcome.step)
    excluded[local.depth] = new Set()
    if (!options.verifier) return { answer: outcome.step.answer, source: "unverified" }
    const verdict = yield* soft("verifier", verify(ctx, subtask, outcome.step.answer))
    yield* emit("verdict", { subtask: index, status: verdict?.status ?? "pending", reason: verdict?.reason ?? "the verifier failed", hint: verdict?.hint ?? null })
    if (verdict?.status === "solved") return { answer: outcome.step.answer, source: "verified" }
    // a failed verifier call gives no hint; the next step simply tries again
    hint = verdict ? (verdict.hint ?? verdict.reason) : undefined
  }
  // Step limit (or nothing left to try): answer from everything global memory holds for the subtask.
  const all = global.stepsOf(index)
  const fallback = all.findLast((s) => !s.failed)?.observation ?? ""
  const answer = options.answerer ? ((yield* soft("answerer.subtask", answerSubtask(ctx, subtask, all))) ?? fallback) : fallback
  return { answer, source: "step_limit" }
})

/** Plan, solve the subtasks (in order, or as a dependency graph), answer the query; fails only with a fatal error. */
const solveTask = Effect.fn("Smurfs.task")(function* (ctx: PipelineContext) {
  const { options, task, global } = ctx
  const planned = options.planner ? yield* soft("planner", plan(ctx, task.query, options.maxSubtasks)) : undefined
  // an unparseable plan (or the planner off) degrades to the query as the one subtask
  const graph = planned ?? sequentialPlan([task.query])
  const subtasks = graph.subtasks.map((s) => s.task)
  yield* emit("plan", { subtasks, planner: options.planner, ...(graph.mode === "graph" ? { dependsOn: graph.subtasks.map((s) => s.dependsOn) } : {}) })
  yield* runPlan(ctx, graph, solveSubtask)
  const answers = global.answers
  const available = answers.filter((a) => a.unavailable === undefined)
  const joined = available.map((a) => a.answer.trim()).filter((a) => a.length > 0).join("\n")
  // the final answerer reads an unavailable subtask as such, never its failed attempts as a fact
  const shown = answers.map((a) => (a.unavailable === undefined ? a : { subtask: a.subtask, answer: `unavailable (${a.unavailable})` }))
  const answered = options.answerer ? ((yield* soft("answerer.final", answerFinal(ctx, task.query, shown))) ?? joined) : joined
  // AMCP: the others still answer, and the answer says what is missing
  const missing = answers.length - available.length
  const final = missing > 0 && available.length > 0 && answered.trim().length > 0 ? `${answered.trim()}\n\n${unavailableNote(answers)}` : answered
  yield* emit("final_answer", { answer: final, ...(missing > 0 ? { unavailable: answers.filter((a) => a.unavailable !== undefined).map((a) => a.index) } : {}) })
  return final
})

/** The Smurfs method: returns a trajectory, never fails on model or tool misbehaviour. */
export const smurfs =
  (options?: SmurfsOptions): Method =>
  (task: Task) =>
    Effect.gen(function* () {
      const resolved = resolveOptions(options)
      const model = yield* LanguageModel
      const started = Date.now()
      // Count every request (reflection retries too) so the whole task stays within its call budget.
      let calls = 0
      const counted = LanguageModel.of({ info: model.info, generate: (request) => Effect.suspend(() => (calls++, model.generate(request))) })
      const ctx: PipelineContext = {
        task: resolved.askUser ? { ...task, tools: { ...task.tools, tools: [...task.tools.tools, askUserTool(resolved.askUser)] } } : task,
        options: resolved,
        global: new GlobalMemory(),
        guardrails: resolved.guardrails,
        budget: new ContextBudget({ ...resolved.budget, contextTokens: model.info.contextTokens }),
        charge: Effect.suspend(() => (calls >= resolved.maxModelCalls ? Effect.fail(new BudgetExhausted({ maxModelCalls: resolved.maxModelCalls })) : Effect.void))
      }
      const run = Effect.gen(function* () {
        yield* emit("task_started", { query: task.query, method: "smurfs", model: model.info.spec, tools: task.tools.tools.map((t) => t.name) })
        const outcome = yield* Effect.result(solveTask(ctx))
        const finalAnswer = Result.isSuccess(outcome) ? outcome.success.trim() : ""
        const failure = Result.isFailure(outcome) ? outcome.failure : undefined
        const error = failure?.message
        const finishType = finalAnswer.length > 0 ? ("give_answer" as const) : ("give_up" as const)
        if (finishType === "give_up") yield* emit("give_up", { reason: error ?? "no answer was found", ...(failure ? { tag: failure._tag } : {}) })
        yield* emit("task_finished", { finishType, ...(error ? { error } : {}) })
        return { finalAnswer, finishType, error }
      }).pipe(Effect.provideService(LanguageModel, counted))
      const { value, events } = yield* recording(task.id, run, resolved.onEvent)
      return {
        taskId: task.id,
        query: task.query,
        method: "smurfs",
        model: model.info.spec,
        finalAnswer: value.finalAnswer,
        finishType: value.finishType,
        ...(value.error !== undefined ? { error: value.error } : {}),
        events,
        totals: totalsOf(events, Date.now() - started)
      } satisfies Trajectory
    })
