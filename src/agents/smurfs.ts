// The Smurfs pipeline (the paper's algorithm): plan, then per subtask a depth-first tool search with
// answers and verification, then one final answer from global memory.
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { LanguageModel } from "../llm/language-model.ts"
import { calibrating } from "../memory/calibrated-model.ts"
import { ContextBudget } from "../memory/context-budget.ts"
import { GlobalMemory } from "../memory/global-memory.ts"
import { pythonJsonDumps } from "../tools/environments/canonical.ts"
import { retrievalEventData } from "../tools/retrieval/retrieval-event.ts"
import { dataOf, emit, kindOf } from "../trace/events.ts"
import type { Guard, RunEvent } from "../trace/record.ts"
import { spanFn } from "../trace/span-fn.ts"
import { recording, type Trajectory, totalsOf } from "../trace/trajectory.ts"
import { answerFinal } from "./answerer.ts"
import { askUserTool } from "./ask-user.ts"
import { BudgetExhausted } from "./errors.ts"
import type { PipelineContext } from "./pipeline-context.ts"
import { sequentialPlan } from "./plan-graph.ts"
import { plan } from "./planner.ts"
import { type ResolvedOptions, resolveOptions, type SmurfsOptions } from "./smurfs-options.ts"
import { runPlan, unavailableNote } from "./smurfs-plan.ts"
import { finalReference, planReference, taskLog } from "./smurfs-reference.ts"
import { soft } from "./smurfs-step.ts"
import { solveSubtask } from "./smurfs-subtask.ts"
import type { TaskView } from "./subtask-context.ts"
import type { Method, Task } from "./task.ts"

/** The available subtask answers global memory holds, one per line: the final answer when no model call may write it. */
const joinAnswers = (global: GlobalMemory): string =>
  global.answers
    .filter((a) => a.unavailable === undefined)
    .map((a) => a.answer.trim())
    .filter((a) => a.length > 0)
    .join("\n")

/**
 * The accepted path of every subtask, in plan order, as the authors' converter writes it: each call
 * under its API's name with its response as the full `{"error", "response"}` JSON (no thought).
 */
const acceptedPaths = (ctx: PipelineContext) => {
  const names = new Map(
    ctx.task.tools.tools.map((t) => [
      t.name,
      typeof t.meta?.["stdApi"] === "string" ? (t.meta["stdApi"] as string) : t.name
    ])
  )
  return ctx.global.answers.flatMap((a) =>
    ctx.global
      .stepsOf(a.index)
      .filter((s) => !s.failed && !s.backtracked)
      .map((s) => ({
        thought: "",
        tool: names.get(s.tool) ?? s.tool,
        arguments: JSON.stringify(s.args, null, 2),
        response: s.observation ?? pythonJsonDumps({ error: "", response: s.answer })
      }))
  )
}

/**
 * What the planner and the final answer see first, as every request of the task does: the query and the tools.
 * With a recommender each subtask lists the tools retrieved for it, so none are listed here.
 */
const taskView = (ctx: PipelineContext): TaskView => ({
  query: ctx.task.query,
  tools: ctx.task.retrieve === undefined ? ctx.task.tools.tools : [],
  fused: ctx.options.executor === "fused"
})

/** Plan, solve the subtasks (in order, or as a dependency graph), answer the query; fails only with a fatal error. */
const solveTask = spanFn("Smurfs.task")(function* (ctx: PipelineContext) {
  const { options, task, global } = ctx
  const reference = options.reference
  if (reference) {
    // the authors' plan: a list of plain subtasks run in order (their 12 attempts bound it; then the query is the one subtask)
    const tasks = options.planner ? yield* soft("planner", planReference(ctx, reference, task.query)) : undefined
    const graph = sequentialPlan(tasks !== undefined && tasks.length > 0 ? tasks : [task.query])
    yield* emit("plan", { subtasks: graph.subtasks.map((s) => s.task), planner: options.planner })
    yield* runPlan(ctx, graph, solveSubtask)
    const log = taskLog(global.answers)
    const final =
      (yield* soft("answerer.final", finalReference(ctx, reference, "answerer.final", task.query, log))) ??
      joinAnswers(global)
    // their converted answer: the accepted paths, then Finish with the final answer as plain text
    yield* emit("final_answer", {
      answer: final,
      chain: acceptedPaths(ctx),
      method: "smurfs",
      finalAnswerText: "plain"
    })
    return final
  }
  const planned = options.planner ? yield* soft("planner", plan(ctx, taskView(ctx), options.maxSubtasks)) : undefined
  // an unparseable plan (or the planner off) degrades to the query as the one subtask
  const graph = planned ?? sequentialPlan([task.query])
  const subtasks = graph.subtasks.map((s) => s.task)
  yield* emit("plan", {
    subtasks,
    planner: options.planner,
    ...(graph.mode === "graph" ? { dependsOn: graph.subtasks.map((s) => s.dependsOn) } : {})
  })
  yield* runPlan(ctx, graph, solveSubtask)
  const answers = global.answers
  const available = answers.filter((a) => a.unavailable === undefined)
  const joined = joinAnswers(global)
  // the final answerer reads an unavailable subtask as such, never its failed attempts as a fact
  const shown = answers.map((a) =>
    a.unavailable === undefined ? a : { ...a, answer: `unavailable (${a.unavailable})` }
  )
  // the final answer is written with the Answer agent off too: that ablation drops only the per-step summaries
  const answered = (yield* soft("answerer.final", answerFinal(ctx, taskView(ctx), shown))) ?? joined
  // AMCP: the others still answer, and the answer says what is missing
  const missing = answers.length - available.length
  const final =
    options.reportUnavailable && missing > 0 && available.length > 0 && answered.trim().length > 0
      ? `${answered.trim()}\n\n${unavailableNote(answers)}`
      : answered
  yield* emit("final_answer", {
    answer: final,
    ...(missing > 0 ? { unavailable: answers.filter((a) => a.unavailable !== undefined).map((a) => a.index) } : {})
  })
  return final
})

/**
 * The guards of ours that fired: the model-call budget ended the task, or the reference planner's 12 attempts
 * (theirs starts over without end) ended its planning, read from the planner's error event.
 */
const guardsOf = (options: ResolvedOptions, events: ReadonlyArray<RunEvent>, budgetOut: boolean): Array<Guard> => [
  ...(options.reference !== undefined &&
  events.some((e) => {
    if (kindOf(e) !== "error") return false
    const data = dataOf(e, "error")
    return data.role === "planner" && data.tag === "MalformedOutput"
  })
    ? (["planner-attempts"] as const)
    : []),
  ...(budgetOut ? (["model-call-budget"] as const) : [])
]

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
      const budget = new ContextBudget({ ...resolved.budget, contextTokens: model.info.contextTokens })
      // The server's reported prompt tokens calibrate the budget's characters-a-token for this model.
      const calibrated = calibrating(model, budget)
      const counted = LanguageModel.of({
        info: model.info,
        generate: (request) => Effect.suspend(() => (calls++, calibrated.generate(request)))
      })
      const ctx: PipelineContext = {
        task: resolved.askUser
          ? { ...task, tools: { ...task.tools, tools: [...task.tools.tools, askUserTool(resolved.askUser)] } }
          : task,
        options: resolved,
        global: new GlobalMemory(),
        guardrails: resolved.guardrails,
        budget,
        charge: Effect.suspend(() =>
          calls >= resolved.maxModelCalls
            ? Effect.fail(new BudgetExhausted({ maxModelCalls: resolved.maxModelCalls }))
            : Effect.void
        )
      }
      const run = Effect.gen(function* () {
        yield* emit("task_started", {
          query: task.query,
          method: "smurfs",
          model: model.info.spec,
          tools: task.tools.tools.map((t) => t.name)
        })
        const retrieved = task.retrieved
        if (retrieved?.warning)
          yield* emit("error", { role: "retrieval", tag: "NoToolRetrieved", error: retrieved.warning })
        if (retrieved)
          yield* emit(
            "retrieval",
            retrievalEventData("task", retrieved.query, retrieved.k, retrieved.mode, retrieved.tools)
          )
        const outcome = yield* Effect.result(solveTask(ctx))
        const failure = Result.isFailure(outcome) ? outcome.failure : undefined
        // Out of model calls is not an empty give-up: the subtasks answered so far are the answer.
        const finalAnswer = Result.isSuccess(outcome)
          ? outcome.success.trim()
          : failure instanceof BudgetExhausted
            ? joinAnswers(ctx.global)
            : ""
        if (failure instanceof BudgetExhausted && finalAnswer.length > 0)
          yield* emit("final_answer", { answer: finalAnswer, source: "budget" })
        const error = failure?.message
        const finishType = finalAnswer.length > 0 ? ("give_answer" as const) : ("give_up" as const)
        if (finishType === "give_up")
          yield* emit("give_up", { reason: error ?? "no answer was found", ...(failure ? { tag: failure._tag } : {}) })
        yield* emit("task_finished", { finishType, ...(error ? { error } : {}) })
        return { finalAnswer, finishType, error, budgetOut: failure instanceof BudgetExhausted }
      }).pipe(Effect.provideService(LanguageModel, counted))
      const { value, events } = yield* recording(task.id, run, resolved.onEvent)
      const guards = guardsOf(resolved, events, value.budgetOut)
      return {
        taskId: task.id,
        query: task.query,
        method: "smurfs",
        model: model.info.spec,
        finalAnswer: value.finalAnswer,
        finishType: value.finishType,
        ...(value.error !== undefined ? { error: value.error } : {}),
        ...(guards.length > 0 ? { guards } : {}),
        events,
        totals: totalsOf(events, Date.now() - started)
      } satisfies Trajectory
    })
