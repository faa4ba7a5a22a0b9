// The Promise API: `await solve(query, { model, tools })` for callers who do not use Effect.
import { createHash } from "node:crypto"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import type { DfsdtOptions } from "./agents/dfsdt.ts"
import { type MethodName, methodSpec, UnknownMethod } from "./agents/methods.ts"
import type { ReactOptions } from "./agents/react.ts"
import type { SmurfsOptions } from "./agents/smurfs-options.ts"
import { attemptSeedsLayer, seedBase } from "./llm/attempt-seeds.ts"
import type { InvalidModelSpec } from "./llm/errors.ts"
import { LanguageModel, type LanguageModelShape } from "./llm/language-model.ts"
import { withModelTask } from "./llm/model-task.ts"
import { watchServer } from "./llm/server-watch.ts"
import { withSharedModel } from "./llm/shared-models.ts"
import { DEFAULT_MODEL_SPEC, type ModelOptions } from "./llm/spec.ts"
import { makeToolLibrary } from "./tools/library.ts"
import { loadToolLibrary } from "./tools/load.ts"
import type { Tool, ToolLibrary } from "./tools/tool.ts"
import type { RunEvent } from "./trace/events.ts"
import { EventListener, type Trajectory } from "./trace/trajectory.ts"
import { withoutUnexportedSpans } from "./trace/unexported-spans.ts"

export interface SolveOptions {
  /**
   * The model: a spec (`ollama:qwen2.5:7b`, `openai:<model>`, `scripted:<file.json>`) or a
   * LanguageModel layer of your own. Default `ollama:qwen2.5:7b`. Calls at the same time with the
   * same server spec and `modelOptions` share one model, so its `concurrency` limits them all; a
   * layer of your own (or a script, whose position is a run's own) is built for each call.
   */
  readonly model?: string | Layer.Layer<LanguageModel, InvalidModelSpec> | undefined
  /** How the model is called (context size, thinking, host, concurrency, timeout...); see ModelOptions. Ignored for a layer. */
  readonly modelOptions?: ModelOptions | undefined
  /** The tools: an array of Tools (defineTool), a ToolLibrary, or a source `--tools` takes ("demo", a module path, an api_list JSON). */
  readonly tools: ReadonlyArray<Tool> | ToolLibrary | string
  /** Which method solves the query; default "smurfs". */
  readonly method?: MethodName | undefined
  /** Options of the chosen method (SmurfsOptions, ReactOptions or DfsdtOptions). */
  readonly methodOptions?: SmurfsOptions | ReactOptions | DfsdtOptions | undefined
  /** Receives every event (model call, tool call, verdict, answer...) as it happens; a throwing listener is ignored. */
  readonly onEvent?: ((event: RunEvent) => void) | undefined
  /** Aborts the run: the promise rejects with the signal's reason and nothing keeps running. */
  readonly signal?: AbortSignal | undefined
  /** The trajectory's task id; default a hash of the query. */
  readonly id?: string | undefined
}

/** A stable id for an ad-hoc query: a short hash of its text. */
export const taskIdOf = (query: string): string => createHash("sha256").update(query).digest("hex").slice(0, 12)

/**
 * The model of a one-query run, watched: the server's first failure ends the run (a timed-out call is
 * sent once more), so no answer is made without the model. `solve` and `smurfs run` share it.
 */
export const watchedModel = Effect.map(LanguageModel, (model: LanguageModelShape) =>
  watchServer(model, { timeoutRetries: 1 })
)

const libraryOf = (tools: SolveOptions["tools"]) =>
  typeof tools === "string"
    ? loadToolLibrary(tools)
    : Effect.try({
        try: () =>
          Array.isArray(tools)
            ? makeToolLibrary("tools", tools as ReadonlyArray<Tool>)
            : makeToolLibrary((tools as ToolLibrary).name, (tools as ToolLibrary).tools),
        catch: (e) => e as Error
      })

/**
 * Solve one query and resolve with its trajectory (`finalAnswer`, `finishType`, `events`, `totals`).
 * A task that ran resolves, answered or given up: a malformed reply or a failing tool ends in an
 * answer or a recorded give-up. The promise rejects with the library's typed error, whose message
 * says what to fix, when the task could not run: bad input (InvalidModelSpec, ToolLoadError,
 * DuplicateToolName), a model server that failed it (ModelUnreachable, ModelNotFound, Overloaded
 * after retries, Timeout twice, ModelServerError: the first such failure ends the task, as in
 * `smurfs run`), or with `signal`'s reason when it aborts. Each error says its `kind` ("bad-input",
 * "unavailable"...). Concurrent calls to one server share its model and its limit of requests in
 * flight (`modelOptions.concurrency`), released a second after the last call ends.
 */
export const solve = async (query: string, options: SolveOptions): Promise<Trajectory> => {
  const model = options.model ?? DEFAULT_MODEL_SPEC
  let method
  try {
    method = methodSpec(options.method ?? "smurfs").build
  } catch (e) {
    if (e instanceof UnknownMethod) throw new TypeError(`solve: ${e.message}`)
    throw e
  }
  const task = Effect.gen(function* () {
    const tools = yield* libraryOf(options.tools)
    const id = options.id ?? taskIdOf(query)
    const watch = yield* watchedModel
    const trajectory = yield* method(options.methodOptions)({ id, query, tools }).pipe(
      withModelTask(id),
      Effect.provideService(LanguageModel, watch.model)
    )
    const failure = watch.failure()
    return failure ? yield* Effect.fail(failure) : trajectory
  }).pipe(
    // each send of the same prompt its own seed, from modelOptions.seed or 42 (a retry samples anew; issue 32 §2)
    Effect.provide(attemptSeedsLayer({ base: seedBase(options.modelOptions?.seed, false) })),
    // this runtime exports no spans: none are recorded, unless the caller's model layer brought a tracer
    withoutUnexportedSpans
  )
  // a spec's model is shared with the calls running at the same time (one limit per server), and its build sees
  // nothing of this call's (the listener); a layer is the caller's own, built for this call as it is given
  const program =
    typeof model === "string"
      ? withSharedModel(model, options.modelOptions ?? {}, Effect.provideService(task, EventListener, options.onEvent))
      : Effect.provideService(Effect.provide(task, model), EventListener, options.onEvent)
  const exit = await Effect.runPromiseExit(program, options.signal ? { signal: options.signal } : undefined)
  if (Exit.isSuccess(exit)) return exit.value
  if (Cause.hasInterruptsOnly(exit.cause))
    throw options.signal?.reason ?? new DOMException("solve was interrupted", "AbortError")
  throw Cause.squash(exit.cause)
}
