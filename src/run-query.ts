// One query solved from its settings (`smurfs run`): the task (a query and its tools from modules, MCP servers or a
// ToolBench task, retrieved or whole), the simulator, the watched model, the Smurfs loop; the trajectory as a value.
import "../bench/sim/provider.ts"
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { z } from "zod"
import { DEFAULT_DATA_DIR } from "../bench/datasets.ts"
import { makeRetrievalCorpus, taskKey } from "../bench/retrieval-tasks.ts"
import { toolbenchTask } from "../bench/toolbench-task.ts"
import type { AskUser } from "./agents/ask-user.ts"
import { checkProfile, DEFAULT_PROFILE, PROFILE_SETTINGS, PROFILES, smurfsProfileOptions } from "./agents/profile.ts"
import { retrievalTask, retrieveTaskSet } from "./agents/retrieval-task.ts"
import { smurfs } from "./agents/smurfs.ts"
import { defaultExecutor, EXECUTORS, executorUnderReference, type SmurfsOptions } from "./agents/smurfs-options.ts"
import type { Task } from "./agents/task.ts"
import { attemptSeedsLayer, seedBase } from "./llm/attempt-seeds.ts"
import { LanguageModel, type LanguageModelShape } from "./llm/language-model.ts"
import { type ModelCallObserver, observedModelLayer } from "./llm/observe.ts"
import type { ServerFailure, ServerWatch } from "./llm/server-watch.ts"
import { DEFAULT_MODEL_SPEC, type ModelOptions, modelLayer, standaloneModel } from "./llm/spec.ts"
import { taskIdOf, watchedModel } from "./solve.ts"
import { type AskApproval, parseApproval } from "./tools/approval.ts"
import { simulatorPrompts } from "./tools/environments/simulator-prompts.ts"
import { type LoadSourcesOptions, loadTools } from "./tools/load.ts"
import { makeEmbedder } from "./tools/retrieval/embedder.ts"
import { defaultEmbeddingCache } from "./tools/retrieval/embedding-cache.ts"
import { makeRetriever } from "./tools/retrieval/retriever.ts"
import { parseToolset } from "./tools/retrieval/toolset.ts"
import type { RunEvent } from "./trace/events.ts"
import type { Trajectory } from "./trace/trajectory.ts"

/** The tool environments of a ToolBench task unless `envs` says otherwise: recorded responses, else a deterministic error. */
const TOOLBENCH_ENVS = ["replay", "offline"] as const

const count = z.number().int().positive()

/** The settings of a one-query run, as one zod schema: `smurfs run` fills them from flags and smurfs.config.json, the library and tests build them. */
export const RunSettings = z
  .object({
    /** The query; may be empty with `queryId` (the task's own query is used). */
    query: z.string().default(""),
    /** The model spec (ollama:<model>, openai:<model>, scripted:<file>, sim...). */
    model: z.string().min(1).default(DEFAULT_MODEL_SPEC),
    /** How the model is called: timeout, context window, thinking, sampling. */
    modelOptions: z
      .object({
        timeoutMs: count.optional(),
        numCtx: count.optional(),
        think: z.union([z.boolean(), z.enum(["low", "medium", "high"])]).optional(),
        temperature: z.number().min(0).max(2).optional(),
        seed: z.number().int().min(0).optional()
      })
      .default({}),
    /** Tool sources: demo, a module, an api_list JSON, mcp:<command> or mcp+http(s)://<url>. */
    tools: z.array(z.string()).min(1).default(["demo"]),
    /** Variables stdio MCP servers get beside the SDK's safe set: `NAME` (this process's value) or `NAME=value`. */
    mcpEnv: z.array(z.string()).default([]),
    /** Which calls of MCP tools that may change things are made: all, none, ask (through `RunHooks.approveCall`) or tool-name globs. */
    approve: z.string().default("all"),
    /** Accepted steps on a subtask's path before it is answered from memory. */
    maxSteps: count.optional(),
    /** Ablations: without a planner the query is the only subtask; without an answerer or verifier, no such step. */
    planner: z.boolean().default(true),
    answerer: z.boolean().default(true),
    verifier: z.boolean().default(true),
    /** improved (ours) or reference (the Smurfs authors' agents, read from `smurfsSrc`). */
    profile: z.enum(PROFILES).default(DEFAULT_PROFILE),
    /** A checkout of the Smurfs authors' code, for the reference profile. */
    smurfsSrc: z.string().optional(),
    /** improved: fused (the default) or three-call (the paper's requests per step); unset = the profile's. */
    executor: z.enum(EXECUTORS).optional(),
    /** A ToolBench task to run: its query (unless one is given) and its api_list as tools. */
    queryId: z.string().optional(),
    /** Where queryId's task is (default DEFAULT_DATA_DIR). */
    data: z.string().optional(),
    /** How the task's tools answer, in order: replay, simulated, offline (default replay,offline; with a simulator replay,simulated). */
    envs: z.array(z.string()).min(1).optional(),
    /** Where simulated responses are stored for the next run to replay. */
    storeDir: z.string().optional(),
    /** A model (not the one under test) that answers calls nothing recorded, as StableToolBench's server does. */
    simulator: z.string().min(1).optional(),
    /** StableToolBench's checkout, whose server prompt the simulator sends; none: our own wording. */
    stb: z.string().optional(),
    /** The tools the agents see: all, relevant (a ToolBench task's relevant APIs) or retrieve[:k]. */
    toolset: z.string().default("all"),
    /** With retrieve: hybrid retrieval with this embedding model. */
    embed: z.string().optional(),
    /** Where document embeddings are cached (default ~/.cache/smurfs/embeddings). */
    embedCache: z.string().optional(),
    /** With retrieve: the model re-ranks the top candidates. */
    rerank: z.boolean().default(false)
  })
  .superRefine((s, ctx) => {
    const issue = (message: string) => ctx.addIssue({ code: "custom", message })
    if (s.query.trim().length === 0 && s.queryId === undefined)
      issue(
        'give the query to solve, e.g. smurfs run "What is 12% of the height of Mount Everest in feet?", or a ToolBench task with --query-id <id>'
      )
    if (s.executor === "fused" && s.profile === "reference") issue(executorUnderReference)
    try {
      parseApproval(s.approve)
    } catch (e) {
      issue((e as Error).message)
    }
    if (s.queryId === undefined && (s.data !== undefined || s.envs !== undefined))
      issue("--data and --env choose a ToolBench task's tools: add --query-id <id>")
    let kind: string | undefined
    try {
      kind = parseToolset(s.toolset).kind
    } catch (e) {
      issue((e as Error).message)
    }
    if (kind === "relevant" && s.queryId === undefined)
      issue(
        "--toolset relevant takes a ToolBench task's relevant APIs: add --query-id <id>, or use all or retrieve[:k]"
      )
    if (kind !== undefined && kind !== "retrieve" && (s.embed !== undefined || s.rerank || s.embedCache !== undefined))
      issue("--embed, --embed-cache and --rerank choose how tools are retrieved: use them with --toolset retrieve[:k]")
  })

export type RunSettings = z.infer<typeof RunSettings>
/** What a caller gives: every field with a default may be left out. */
export type RunSettingsInput = z.input<typeof RunSettings>

/** Settings that cannot be used together; the message names each problem. */
export class InvalidRunSettings extends Error {
  override readonly name = "InvalidRunSettings"
}

/** Validate settings and fill in the defaults; throws InvalidRunSettings naming what is wrong. */
export const runSettings = (input: RunSettingsInput): RunSettings => {
  const parsed = RunSettings.safeParse(input)
  if (!parsed.success)
    throw new InvalidRunSettings(
      parsed.error.issues
        .map((i) => (i.path.length > 0 && i.code !== "custom" ? `${i.path.join(".")}: ${i.message}` : i.message))
        .join("; ")
    )
  // no executor asked for: the profile's (fused under improved, the authors' three requests under reference)
  return { ...parsed.data, executor: parsed.data.executor ?? defaultExecutor(parsed.data.profile) }
}

/**
 * Check what the settings' profile reads before anything runs: under reference, the Smurfs authors'
 * checkout and its texts. Throws what is wrong (a missing checkout, a file that cannot be read).
 */
export const checkRunSettings = (settings: RunSettings): void => {
  checkProfile(settings.profile, ["smurfs"], { stb: undefined, smurfsSrc: settings.smurfsSrc })
  smurfsProfileOptions(settings.profile, settings.smurfsSrc)
}

/** What the caller sees of a run as it goes. */
export interface RunHooks {
  /** Every event (model call, tool call, verdict, answer...) as it happens. */
  /** Each event as it happens, and whether the model server has failed the run by then. */
  readonly onEvent?: ((event: RunEvent, serverFailed: boolean) => void) | undefined
  /** Answers the executor's `ask_user`; without it the call fails as a tool. */
  readonly askUser?: AskUser | undefined
  /** Told of each model call as the server answers it (a spinner). */
  readonly modelCalls?: ModelCallObserver | undefined
  /** Asked before each call that needs approval under `approve: "ask"`; without it such calls are refused. */
  readonly approveCall?: AskApproval | undefined
}

/** How the settings' tool sources are loaded: the MCP servers' environment and the approval policy. */
const sourceOptions = (settings: RunSettings, hooks: RunHooks): LoadSourcesOptions => ({
  mcpEnv: settings.mcpEnv,
  approval: { policy: parseApproval(settings.approve), ask: hooks.approveCall }
})

/** A run's end: its trajectory, and the model server's failure that ended it, if any (then there is no answer). */
export interface RunOutcome {
  readonly trajectory: Trajectory
  readonly failure: ServerFailure | undefined
}

type ToolbenchTask = Effect.Success<ReturnType<typeof toolbenchTask>>

/**
 * `toolset retrieve[:k]`: the library to retrieve from is the ToolBench corpus (every API under `data`,
 * as in bench) for a ToolBench task, else the `tools` library itself; the task gets the top k for its
 * query and the Smurfs executor retrieves per subtask, exactly as bench's tasks do.
 */
const retrievedTask = (
  settings: RunSettings,
  k: number,
  toolbench: ToolbenchTask | undefined,
  model: LanguageModelShape,
  hooks: RunHooks
) =>
  Effect.gen(function* () {
    const embedder =
      settings.embed === undefined
        ? undefined
        : yield* makeEmbedder(settings.embed, { timeoutMs: settings.modelOptions.timeoutMs })
    const embeddingCache = resolve(settings.embedCache ?? defaultEmbeddingCache())
    const reranker = settings.rerank ? model : undefined
    const query = settings.query || toolbench?.task.query || ""
    if (toolbench) {
      const corpus = yield* makeRetrievalCorpus({
        data: settings.data ?? DEFAULT_DATA_DIR,
        env: toolbench.env,
        k,
        embedder,
        embeddingCache,
        reranker
      })
      // a retrieval that found nothing and fell back says so in the trajectory (and the live view)
      let warning: string | undefined
      const set = yield* retrieveTaskSet(corpus.retriever, query, k, (text) => (warning = text))
      return retrievalTask(
        corpus.retriever,
        { id: toolbench.task.id, query, name: taskKey(toolbench.query) },
        set,
        k,
        warning
      )
    }
    const library = yield* loadTools(settings.tools, sourceOptions(settings, hooks))
    const retriever = yield* makeRetriever(library, { embedder, embeddingCache, reranker })
    let warning: string | undefined
    const set = yield* retrieveTaskSet(retriever, query, k, (text) => (warning = text))
    return retrievalTask(retriever, { id: taskIdOf(query), query, name: library.name }, set, k, warning)
  })

/** The ToolBench task of `queryId`, its tools served by the settings' environments (and simulator). */
const toolbenchTaskOf = (settings: RunSettings, queryId: string) =>
  Effect.gen(function* () {
    const toolset = parseToolset(settings.toolset)
    return yield* toolbenchTask({
      data: settings.data ?? DEFAULT_DATA_DIR,
      queryId,
      envs: settings.envs ?? (settings.simulator === undefined ? [...TOOLBENCH_ENVS] : ["replay", "simulated"]),
      storeDir: settings.storeDir,
      toolset: toolset.kind === "relevant" ? "relevant" : "all",
      wholeResponses: PROFILE_SETTINGS[settings.profile].wholeToolResponses,
      replayMatch: PROFILE_SETTINGS[settings.profile].replayMatch,
      simulatorPrompts: simulatorPrompts(settings.stb, "gpt", settings.profile === "reference"),
      ...(settings.simulator === undefined
        ? {}
        : { simulator: yield* standaloneModel(settings.simulator, settings.modelOptions as ModelOptions) })
    })
  })

/**
 * Solve the settings' query with the Smurfs agents: build its task, run the loop on the watched model
 * and succeed with the trajectory and the server's failure, if one ended the run.
 */
export const runQuery = (settings: RunSettings, hooks: RunHooks = {}) => {
  let watch: ServerWatch | undefined
  const onEvent = hooks.onEvent
  const options: SmurfsOptions = {
    maxSteps: settings.maxSteps,
    planner: settings.planner,
    answerer: settings.answerer,
    verifier: settings.verifier,
    executor: settings.executor,
    askUser: hooks.askUser,
    ...smurfsProfileOptions(settings.profile, settings.smurfsSrc, settings.modelOptions.temperature),
    onEvent: onEvent && ((event) => onEvent(event, watch?.failure() !== undefined))
  }
  const toolset = parseToolset(settings.toolset)
  const model = modelLayer(settings.model, settings.modelOptions as ModelOptions)
  // each send of the same prompt its own seed (or none under reference), as bench sends them (issue 32 §2)
  const layer = Layer.provide(
    attemptSeedsLayer({ base: seedBase(settings.modelOptions.seed, settings.profile === "reference") }),
    hooks.modelCalls ? Layer.provide(observedModelLayer(hooks.modelCalls), model) : model
  )
  return Effect.gen(function* () {
    const toolbench = settings.queryId === undefined ? undefined : yield* toolbenchTaskOf(settings, settings.queryId)
    watch = yield* watchedModel
    const task: Task =
      toolset.kind === "retrieve"
        ? yield* retrievedTask(settings, toolset.k, toolbench, watch.model, hooks)
        : toolbench
          ? { ...toolbench.task, query: settings.query || toolbench.task.query }
          : {
              id: taskIdOf(settings.query),
              query: settings.query,
              tools: yield* loadTools(settings.tools, sourceOptions(settings, hooks))
            }
    const watched = watch
    const trajectory = yield* smurfs(options)(task).pipe(Effect.provideService(LanguageModel, watched.model))
    return { trajectory, failure: watched.failure() } satisfies RunOutcome
  }).pipe(Effect.scoped, Effect.provide(layer))
}
