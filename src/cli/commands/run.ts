// `smurfs run "<query>"`: solve one query with the Smurfs agents, showing each step as it happens.
import { visibleText } from "../../trace/visible-text.ts"
import { createHash } from "node:crypto"
import { resolve } from "node:path"
import type { ParseArgsOptionsConfig } from "node:util"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { retrievalTask, retrieveTaskSet } from "../../agents/retrieval-task.ts"
import { smurfs } from "../../agents/smurfs.ts"
import type { Task } from "../../agents/task.ts"
import { type SmurfsOptions, smurfsDefaults } from "../../agents/smurfs-options.ts"
import { checkProfile, DEFAULT_PROFILE, PROFILE_SETTINGS, PROFILES, smurfsProfileOptions } from "../../agents/profile.ts"
import { smurfsSrcDirOf } from "../../agents/smurfs-source.ts"
import { LanguageModel, type LanguageModelShape } from "../../llm/language-model.ts"
import { type ServerFailure, watchServer } from "../../llm/server-watch.ts"
import { Timeout } from "../../llm/errors.ts"
import { DEFAULT_MODEL_SPEC, MODEL_DEFAULTS, type ModelOptions, THINK_HELP } from "../../llm/spec.ts"
import { watchToolChildren } from "../../tools/child-guard.ts"
import { containToolExits } from "../../tools/exit-guard.ts"
import { loadTools } from "../../tools/load.ts"
import { defaultEmbeddingCache } from "../../tools/retrieval/embedding-cache.ts"
import { makeEmbedder } from "../../tools/retrieval/embedder.ts"
import { makeRetriever } from "../../tools/retrieval/retriever.ts"
import { parseToolset, type Toolset } from "../../tools/retrieval/toolset.ts"
import { otlpLayer } from "../../trace/otlp.ts"
import { redactText, redactValue } from "../../trace/redact.ts"
import type { Trajectory } from "../../trace/trajectory.ts"
import { plural } from "../../plural.ts"
import { ExitCode } from "../exit-codes.ts"
import { terminalAskUser } from "../ask-terminal.ts"
import { routeStdoutToStderr } from "../stdout-guard.ts"
import { liveView } from "../live-view.ts"
import { toolbenchTask } from "../toolbench-task.ts"
import { DEFAULT_DATA_DIR } from "../../../bench/datasets.ts"
import { makeRetrievalCorpus, taskKey } from "../../../bench/retrieval-tasks.ts"
import { makeSpinner } from "../spinner.ts"
import { observedModelLayer } from "../../llm/observe.ts"
import { defaultModelSpec, resolveModelLayer } from "../model-option.ts"
import { simulatorModel, simulatorSpecOf } from "../simulator-option.ts"
import { stbDirOf } from "../../text/stabletoolbench-files.ts"
import { simulatorPrompts } from "../../tools/environments/simulator-prompts.ts"
import { BadInput, choiceOption, intOption, numberOption, type ParsedCommand, runCommand, thinkOption, UsageError } from "../options.ts"
import { runProgram } from "../run-program.ts"

const HELP = `usage: smurfs run "<query>" [options]

Solve one query with the Smurfs agents (planner, executor, answerer, verifier) and print each step.

options:
  -m, --model <spec>    ollama:<model>, openai:<model>, scripted:<file.json> or sim (default SMURFS_MODEL, else ${DEFAULT_MODEL_SPEC})
  -t, --tools <source>  demo, a JS/TS module exporting tools, a StableToolBench api_list JSON,
                        "mcp:<command and args>" (an MCP server over stdio) or mcp+http(s)://<url>
                        (Streamable HTTP; Authorization header from $SMURFS_MCP_AUTHORIZATION);
                        repeat to combine sources (default demo)
      --json            print only the trajectory as JSON
      --smurfs-max-steps <n>
                        accepted steps on a subtask's path before it is answered from memory; a failed
                        call costs none, a backtrack gives one back (default ${smurfsDefaults.maxSteps};
                        --max-steps is its deprecated alias)
      --no-planner      ablation: the query is the only subtask
      --no-answerer     ablation: no per-step summaries (a step's answer is the raw tool response;
                        the final answer is still written)
      --no-verifier     ablation: a plain depth-first search that calls tools until the step limit
      --timeout <ms>    per-request model timeout (default ${MODEL_DEFAULTS.timeoutMs}); a timed-out call is sent once more, then the run gives up
      --num-ctx <n>     context window in tokens (Ollama num_ctx, also the prompt budget)
      --profile <improved|reference>
                        improved (default): our Smurfs; reference: the authors' agents, prompts read from
                        --smurfs-src <dir> (a checkout of their code; default $SMURFS_SRC)
      --temperature <t> sampling temperature (default ${MODEL_DEFAULTS.temperature}; reference: 0.95)
      --seed <n>        sampling seed (default ${MODEL_DEFAULTS.seed})
      --think <on|off|low|medium|high>
                        ${THINK_HELP}
      --strict          exit with 1 when the task gives up
      --query-id <id>   run this ToolBench task: its query (unless one is given) and its api_list as tools
      --data <dir>      where --query-id's task is (either layout, as for bench; default $SMURFS_DATA,
                        else ../shared/toolbench)
      --env <e[,e]>     how the task's tools answer, tried in order: replay, simulated, offline
                        (default replay,offline)
      --store-dir <dir> where simulated responses are stored for the next run to replay
                        (default .smurfs-cache/simulated)
      --simulator <spec>
                        a model (not --model) that answers calls nothing recorded, as StableToolBench's
                        server does; the default --env becomes replay,simulated (default $SMURFS_SIMULATOR);
                        with $SMURFS_STB its prompt is StableToolBench's server/main.py's
      --toolset <t>     the tools the agents see: all (the whole library, default), relevant (with
                        --query-id: the task's relevant APIs) or retrieve[:k] (the top k, default 5,
                        retrieved for the query from the --tools library, or with --query-id from every
                        API of every query file under --data; the executor retrieves again per subtask)
      --embed <spec>    with retrieve: hybrid retrieval with this embedding model (ollama:<model>, openai:<model>)
      --embed-cache <dir>
                        where document embeddings are cached (default ~/.cache/smurfs/embeddings)
      --rerank          with retrieve: the model re-ranks the top 20 candidates
  -h, --help            show this help

exit codes: 0 answered (or gave up without --strict), 1 gave up with --strict, 2 bad usage,
3 bad input (model spec, tools), 4 model unavailable (unreachable, 404, 429/503 after retries,
timed out twice: the run stops at the server's first failure), 130 interrupted`

/** The tool environments of a ToolBench task in `smurfs run` unless --env says otherwise: recorded responses, else a deterministic error. */
const RUN_TOOLBENCH_ENVS = ["replay", "offline"] as const

/** A stable id for an ad-hoc query: a short hash of its text. */
export const taskIdOf = (query: string): string => createHash("sha256").update(query).digest("hex").slice(0, 12)

/** The options of `smurfs run`, in node:util parseArgs' shape. */
const OPTIONS = {
  model: { type: "string", short: "m" },
  tools: { type: "string", short: "t", multiple: true, default: ["demo"] },
  json: { type: "boolean", default: false },
  "smurfs-max-steps": { type: "string" },
  // deprecated alias of --smurfs-max-steps (before the baselines got their own limit)
  "max-steps": { type: "string" },
  "no-planner": { type: "boolean", default: false },
  "no-answerer": { type: "boolean", default: false },
  "no-verifier": { type: "boolean", default: false },
  timeout: { type: "string" },
  "num-ctx": { type: "string" },
  profile: { type: "string" },
  "smurfs-src": { type: "string" },
  temperature: { type: "string" },
  seed: { type: "string" },
  think: { type: "string" },
  strict: { type: "boolean", default: false },
  data: { type: "string" },
  "query-id": { type: "string" },
  env: { type: "string", multiple: true },
  "store-dir": { type: "string" },
  simulator: { type: "string" },
  toolset: { type: "string" },
  embed: { type: "string" },
  "embed-cache": { type: "string" },
  rerank: { type: "boolean", default: false }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "run", help: HELP, options: OPTIONS, positionals: true } as const

const parse = ({ values, positionals }: ParsedCommand<typeof OPTIONS>) => {
  const query = positionals.join(" ").trim()
  if (query.length === 0 && values["query-id"] === undefined)
    throw new UsageError('give the query to solve, e.g. smurfs run "What is 12% of the height of Mount Everest in feet?", or a ToolBench task with --query-id <id>')
  if (values["query-id"] === undefined && (values.data !== undefined || values.env !== undefined)) throw new UsageError("--data and --env choose a ToolBench task's tools: add --query-id <id>")
  const model: ModelOptions = {
    timeoutMs: intOption("timeout", values.timeout),
    numCtx: intOption("num-ctx", values["num-ctx"]),
    think: thinkOption(values.think),
    temperature: numberOption("temperature", values.temperature, 0, 2),
    seed: intOption("seed", values.seed, 0)
  }
  const profile = choiceOption("profile", values.profile, PROFILES, DEFAULT_PROFILE)
  const smurfsSrc = smurfsSrcDirOf(values["smurfs-src"], {})
  let toolset: Toolset
  try {
    toolset = parseToolset(values.toolset ?? "all")
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
  if (toolset.kind === "relevant" && values["query-id"] === undefined) throw new UsageError("--toolset relevant takes a ToolBench task's relevant APIs: add --query-id <id>, or use all or retrieve[:k]")
  if ((values.embed !== undefined || values.rerank || values["embed-cache"] !== undefined) && toolset.kind !== "retrieve")
    throw new UsageError("--embed, --embed-cache and --rerank choose how tools are retrieved: use them with --toolset retrieve[:k]")
  try {
    checkProfile(profile, ["smurfs"], { stb: undefined, smurfsSrc })
    smurfsProfileOptions(profile, smurfsSrc)
  } catch (e) {
    throw new BadInput((e as Error).message)
  }
  return { values, query, model, toolset, maxSteps: smurfsMaxSteps(values), profile, smurfsSrc }
}

/** --smurfs-max-steps, or its deprecated alias --max-steps with a one-line notice. */
const smurfsMaxSteps = (values: { readonly "smurfs-max-steps"?: string | undefined; readonly "max-steps"?: string | undefined }): number | undefined => {
  if (values["max-steps"] === undefined) return intOption("smurfs-max-steps", values["smurfs-max-steps"])
  if (values["smurfs-max-steps"] !== undefined) throw new UsageError("give only --smurfs-max-steps (--max-steps is its deprecated alias)")
  console.error("smurfs run: --max-steps is deprecated; use --smurfs-max-steps (same meaning)")
  return intOption("max-steps", values["max-steps"])
}

/** What to check when the model server failed the run. */
export const serverAdvice = (failure: ServerFailure, spec: string): string =>
  failure instanceof Timeout
    ? `The model server accepted the request but sent no reply within ${failure.ms} ms, twice. Check that it is not stuck ` +
      `(its log; \`ollama ps\` for Ollama) and that the model fits in memory, or raise --timeout for a slow model. ` +
      `\`smurfs doctor --model ${spec}\` checks the server.`
    : `${failure.message} \`smurfs doctor --model ${spec}\` checks the server.`

/**
 * `--toolset retrieve[:k]`: the library to retrieve from is the ToolBench corpus (every API under --data,
 * as in bench) for a --query-id task, else the --tools library itself; the task gets the top k for its
 * query and the Smurfs executor retrieves per subtask, exactly as bench's tasks do.
 */
const retrievedRunTask = (args: ReturnType<typeof parse>, k: number, toolbench: Effect.Success<ReturnType<typeof toolbenchTask>> | undefined, model: LanguageModelShape) =>
  Effect.gen(function* () {
    const { values } = args
    const embedder = values.embed === undefined ? undefined : yield* makeEmbedder(values.embed, { timeoutMs: args.model.timeoutMs })
    const embeddingCache = resolve(values["embed-cache"] ?? defaultEmbeddingCache())
    const reranker = values.rerank ? model : undefined
    const query = args.query || toolbench?.task.query || ""
    if (toolbench) {
      const corpus = yield* makeRetrievalCorpus({ data: values.data ?? DEFAULT_DATA_DIR, env: toolbench.env, k, embedder, embeddingCache, reranker })
      const set = yield* retrieveTaskSet(corpus.retriever, query, k)
      return retrievalTask(corpus.retriever, { id: toolbench.task.id, query, name: taskKey(toolbench.query) }, set, k)
    }
    const library = yield* loadTools(values.tools)
    const retriever = yield* makeRetriever(library, { embedder, embeddingCache, reranker })
    const set = yield* retrieveTaskSet(retriever, query, k)
    return retrievalTask(retriever, { id: taskIdOf(query), query, name: library.name }, set, k)
  })

const summary = (t: Trajectory): string =>
  `${plural(t.totals.modelCalls, "model call")}, ${plural(t.totals.promptTokens + t.totals.completionTokens, "token")}, ${plural(t.totals.toolCalls, "tool call")}, ${plural(t.totals.backtracks, "backtrack")}, ${(t.totals.wallMs / 1000).toFixed(1)} s`

export const run = (argv: string[]): Promise<number> => runCommand(COMMAND, argv, (parsed) => solve(parse(parsed)))

const solve = (args: ReturnType<typeof parse>): Promise<number> => {
  const { values, query } = args
  const color = process.stderr.isTTY === true && !process.env["NO_COLOR"]
  // only a person at a terminal sees a spinner: never with --json, never in a pipe or a log file
  const spinner = !values.json && process.stderr.isTTY === true ? makeSpinner({ stream: process.stderr }) : undefined
  const writeLine = spinner?.writeLine ?? ((line: string) => void process.stderr.write(`${line}\n`))
  const options: SmurfsOptions = {
    maxSteps: args.maxSteps,
    planner: !values["no-planner"],
    answerer: !values["no-answerer"],
    verifier: !values["no-verifier"],
    askUser: terminalAskUser(),
    ...smurfsProfileOptions(args.profile, args.smurfsSrc, args.model.temperature),
    onEvent: values.json ? undefined : liveView(writeLine, { color })
  }
  const spec = values.model ?? defaultModelSpec()
  const simulator = simulatorSpecOf(values.simulator)
  // The run stops at the server's first failure (a timeout gets one retry): no answer made without the model is shown.
  let watch: ReturnType<typeof watchServer> | undefined
  const program = Effect.gen(function* () {
    const data = values.data ?? DEFAULT_DATA_DIR
    const toolset = args.toolset
    const toolbench =
      values["query-id"] === undefined
        ? undefined
        : yield* toolbenchTask({
            data,
            queryId: values["query-id"],
            envs: values.env ?? (simulator === undefined ? [...RUN_TOOLBENCH_ENVS] : ["replay", "simulated"]),
            storeDir: values["store-dir"],
            toolset: toolset.kind === "relevant" ? "relevant" : "all",
            wholeResponses: PROFILE_SETTINGS[args.profile].wholeToolResponses,
            simulatorPrompts: simulatorPrompts(stbDirOf(undefined)),
            ...(simulator === undefined ? {} : { simulator: yield* simulatorModel(simulator, args.model) })
          })
    watch = watchServer(yield* LanguageModel, { timeoutRetries: 1 })
    const model = watch.model
    const task: Task =
      toolset.kind === "retrieve"
        ? yield* retrievedRunTask(args, toolset.k, toolbench, model)
        : toolbench
          ? { ...toolbench.task, query: query || toolbench.task.query }
          : { id: taskIdOf(query), query, tools: yield* loadTools(values.tools) }
    return yield* smurfs(options)(task).pipe(Effect.provideService(LanguageModel, model))
  }).pipe(Effect.scoped, Effect.provide(spinner ? Layer.provide(observedModelLayer(spinner), resolveModelLayer(spec, args.model)) : resolveModelLayer(spec, args.model)), Effect.provide(otlpLayer()))

  // Tool modules run in this process: their stdout writes go to stderr and a process.exit fails their call.
  const restoreStdout = routeStdoutToStderr()
  const restoreExit = containToolExits()
  const show = (trajectory: Trajectory, failure: ServerFailure | undefined): number => {
    if (failure) {
      if (values.json) console.log(JSON.stringify(redactValue(trajectory), null, 2))
      else console.error(`\n${summary(trajectory)}`)
      console.error(redactText(`smurfs run: the model server failed, so there is no answer. ${serverAdvice(failure, spec)}`))
      return ExitCode.ModelUnavailable
    }
    if (values.json) {
      // What a model or tool echoed (an API key, an Authorization header) must not reach the output.
      console.log(JSON.stringify(redactValue(trajectory), null, 2))
      return trajectory.finishType === "give_answer" || !values.strict ? ExitCode.Ok : ExitCode.Failure
    }
    console.error(`\n${summary(trajectory)}`)
    if (trajectory.finishType === "give_answer") {
      console.log(visibleText(redactText(trajectory.finalAnswer)))
      return ExitCode.Ok
    }
    return values.strict ? ExitCode.Failure : ExitCode.Ok
  }
  // ...and a child process a tool leaves running does not hold the command open after the answer
  const children = watchToolChildren()
  const shown = program.pipe(
    Effect.ensuring(Effect.sync(() => (restoreExit(), restoreStdout(), children.end((line) => console.error(line)), spinner?.stop()))),
    Effect.map((trajectory) => show(trajectory, watch?.failure()))
  )
  return runProgram(shown, { command: "run" })
}
