// `smurfs bench`: run methods on StableToolBench tasks into a resumable run directory.
import { existsSync, statSync } from "node:fs"
import { resolve } from "node:path"
import type { ParseArgsOptionDescriptor } from "node:util"
import * as Effect from "effect/Effect"
import { type BenchOutcome, promptsOf, runBenchSettings, summaryValue } from "../../../bench/app.ts"
import { GROUPS } from "../../../bench/datasets.ts"
import { formatDuration, makeProgress } from "../../../bench/progress.ts"
import { ModelServerDown, RUNNER_DEFAULTS } from "../../../bench/runner.ts"
import { BENCH_DEFAULTS, type BenchSettings, benchSettings, type BenchSettingsInput, InvalidBenchSettings } from "../../../bench/settings.ts"
import { DFSDT_DEFAULTS } from "../../agents/dfsdt.ts"
import { METHOD_NAMES } from "../../agents/methods.ts"
import { REACT_DEFAULTS } from "../../agents/react.ts"
import { smurfsDefaults } from "../../agents/smurfs-options.ts"
import { STB_ENV, stbDirOf } from "../../text/stabletoolbench-files.ts"
import { SIMULATOR_STYLES, simulatorPrompts } from "../../tools/environments/simulator-prompts.ts"
import { RunDirError } from "../../trace/fs-problem.ts"
import { SIZE_CAPS } from "../../trace/size-caps.ts"
import { runProgram } from "../run-program.ts"
import { SIMULATOR_ENV } from "../simulator-option.ts"
import { defaultModelSpec, MODEL_DEFAULTS, THINK_HELP } from "../../llm/spec.ts"
import { DEFAULT_PROFILE, PROFILES, checkProfile, smurfsProfileOptions } from "../../agents/profile.ts"
import { SMURFS_SRC_ENV, smurfsSrcDirOf } from "../../agents/smurfs-source.ts"
import { plural } from "../../plural.ts"
import { parseToolset, toolsetLabel } from "../../tools/retrieval/toolset.ts"
import { otlpLayer } from "../../trace/otlp.ts"
import { redactText } from "../../trace/redact.ts"
import { ExitCode } from "../exit-codes.ts"
import { BadInput, choiceList, choiceOption, intOption, numberOption, type ParsedCommand, runCommand, splitList, thinkOption, UsageError } from "../options.ts"

const METHODS = METHOD_NAMES

const HELP = `usage: smurfs bench --out <run dir> [options]

Run methods on StableToolBench queries. Every finished task is written to its own file in the run
directory, so a stopped run (Ctrl-C, a crash, a dead model server) continues with --resume.
At the end, converted/<method>/<group>.json holds StableToolBench's converted predictions.

options:
  --data <dir>              queries/<group>.json and query_ids/<group>.json, or StableToolBench's
                            solvable_queries folder (test_instruction/, test_query_ids/) or the folder
                            holding it (default $SMURFS_DATA, else ${BENCH_DEFAULTS.data})
  --group <G[,G]>           groups to run (default all: ${GROUPS.join(", ")})
  --method <m[,m]>          ${METHODS.join(", ")} (default ${BENCH_DEFAULTS.methods.join(",")})
  --model <spec>            ollama:<model>, openai:<model>, scripted:<file.json>, sim (default SMURFS_MODEL, else a local Ollama model)
  --env <e[,e]>             tool environments in order: replay, simulated, offline (default ${BENCH_DEFAULTS.envs.join(",")})
  --responses <file>        recorded responses to replay (default <data>/responses.jsonl when present)
  --cache-dir <dir>         a StableToolBench tool_response_cache folder to replay (default: one found
                            inside or beside --data)
  --call-cache <dir>        cache model replies (temperature 0) and tool results here; a repeated run replays them
  --store-dir <dir>         where simulated responses are stored (default <out>/simulated)
  --simulator <spec>        a model (not the one under test) that answers calls nothing recorded, as
                            StableToolBench's tool server does; its responses are added to --cache-dir when
                            given (created when missing), else to <store-dir>/tool_response_cache, in
                            StableToolBench's cache layout; with it the default --env is replay,simulated
                            (default $${SIMULATOR_ENV})
  --simulator-style <s>     with --stb: gpt (server/main.py's prompt) or mirrorapi (server/system_prompts.py
                            and main_mirrorapi_cache.py's prompt) (default gpt)
  --limit <n>               the first n queries of each group
  --ids <a,b>               only these query ids
  --toolset <t>             a task's tools: all (its whole api_list), relevant (only its relevant APIs), or
                            retrieve[:k] (the top k, default 5, retrieved from every API of every query file
                            under --data; the smurfs executor retrieves per subtask) (default all)
  --embed <spec>            with retrieve: hybrid retrieval with this embedding model (ollama:<model>, openai:<model>)
  --embed-cache <dir>       where document embeddings are cached (default ~/.cache/smurfs/embeddings)
  --rerank                  with retrieve: the model re-ranks the top 20 candidates
  --concurrency <n>         tasks run at once (default ${BENCH_DEFAULTS.concurrency})
  --model-concurrency <n>   requests in flight per model server (default: --concurrency for openai, 1 for ollama)
  --endpoints <u[,u]>       several servers of the same model, each url or url*N (N: requests it serves at once);
                            requests go to the least-loaded healthy one, a failing one is taken out and probed
  --queue <redis://...>     hand the tasks to \`smurfs worker\` processes through a BullMQ queue on Redis
                            instead of running them here; records still land in --out
  --out <dir>               the run directory (required)
  --resume                  continue the run in --out, skipping finished tasks; refused when the settings differ
                            (model, data, methods, groups, environments, toolset, limits, method options)
  --force                   with --resume: continue even when the settings differ (run.json records the difference)
  --tool-calling <m>        auto, native or json: how react/dfsdt act (default auto)
  --tries <n>               react: chains per task, CoT@n (default ${REACT_DEFAULTS.tries})
  --smurfs-max-steps <n>    smurfs: accepted steps on a subtask's path before it is answered from memory;
                            a failed call costs none, a backtrack gives one back (default ${smurfsDefaults.maxSteps})
  --single-chain-max-step <n>
                            react/dfsdt: tree nodes per chain, StableToolBench's single_chain_max_step
                            (a thought 1, a call 2; default ${REACT_DEFAULTS.singleChainMaxStep}); the old --max-steps is refused
  --budget <n>              dfsdt: model calls per task (default ${DFSDT_DEFAULTS.budget})
  --stb <dir>               react/dfsdt send StableToolBench's own prompt texts, read from this checkout
                            (the folder holding toolbench/; default ${STB_ENV}); without it, our own wording
  --profile <improved|reference>
                            improved (default): our methods; reference: the Smurfs authors' agents and
                            StableToolBench's baselines as they ran (needs --smurfs-src and/or --stb)
  --smurfs-src <dir>        a checkout of the Smurfs authors' code (default ${SMURFS_SRC_ENV}), for --profile reference
  --temperature <t>         sampling temperature (default ${MODEL_DEFAULTS.temperature}; reference: 0.95 smurfs, 1.0 react/dfsdt)
  --seed <n>                sampling seed (default ${MODEL_DEFAULTS.seed})
  --num-ctx <n>             the model's context window in tokens (default ${MODEL_DEFAULTS.numCtx})
  --nudge <on|off>, --validate-args <on|off>, --parallel-calls <on|off>
                            react/dfsdt, over the profile's: remind after a reply without a call (improved on);
                            validate arguments before a call (improved on); run every call of a reply (reference on)
  --observation-limit <n>   characters of a tool response the model sees (default ${REACT_DEFAULTS.observationLimit})
  --timeout <ms>            per-request model timeout (default ${MODEL_DEFAULTS.timeoutMs})
  --think <on|off|low|medium|high>
                            ${THINK_HELP}
  --stop-after <n>          stop (exit 4) when n tasks in a row fail because of the model server (default ${RUNNER_DEFAULTS.stopAfterUnreachable})
  --full-trace              keep every prompt in the task records (large)
  --max-record-bytes <n>    largest task record file; past it long strings are cut harder (default ${SIZE_CAPS.recordBytes})
  --json                    print the summary as JSON on stdout (progress stays on stderr)
  -h, --help                show this help

A task the model server failed (refused connection, 404, 429/503 after retries, a timeout) is
recorded as "error", never as an answer or a give-up; --resume runs it again. A task's first
timed-out call ends it (the server is suspect), so a hung server costs one --timeout per task.

exit codes: 0 every task recorded, 1 some tasks left undone (rerun with --resume), 2 bad usage,
3 bad input (data, run directory, model spec, environments), 4 model unavailable (the server failed
every task run, or --stop-after tasks in a row), 130 interrupted`

/** How a flag's text is read into its setting; the schema checks the rest (ranges, rules across settings). */
type Reader = (name: string, value: unknown) => unknown
const text: Reader = (_name, value) => value as string
const path: Reader = (_name, value) => resolve(value as string)
const list: Reader = (_name, value) => splitList(value as ReadonlyArray<string>)
const int: Reader = (name, value) => intOption(name, value as string)
const flag: Reader = (_name, value) => value === true
const methods: Reader = (name, value) => choiceList(name, splitList(value as ReadonlyArray<string>), METHODS)
const toolset: Reader = (_name, value) => {
  try {
    return toolsetLabel(parseToolset(value as string))
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
}
const toolCalling: Reader = (name, value) => choiceOption(name, value as string, ["auto", "native", "json"], "auto")
const think: Reader = (_name, value) => thinkOption(value as string)
const stb: Reader = (_name, value) => stbDirOf(value as string)
const simulatorStyle: Reader = (name, value) => choiceOption(name, value as string, SIMULATOR_STYLES, "gpt")
const profile: Reader = (name, value) => choiceOption(name, value as string, PROFILES, DEFAULT_PROFILE)
const smurfsSrc: Reader = (_name, value) => smurfsSrcDirOf(value as string, {})
const temperature: Reader = (name, value) => numberOption(name, value as string, 0, 2)
const seed: Reader = (name, value) => intOption(name, value as string, 0)
/** An on|off flag; undefined when not given (the profile decides). */
const onOff = (name: string, text: string | undefined): boolean | undefined => (text === undefined ? undefined : choiceOption(name, text, ["on", "off"], "on") === "on")

/** A flag in node:util parseArgs' shape, and the setting it fills (parseArgs ignores `setting`). */
type BenchOption = ParseArgsOptionDescriptor & { readonly setting?: readonly [keyof BenchSettings, Reader] }

/**
 * The options of `smurfs bench`: each flag and the setting it fills. Adding a setting is its line in
 * the BenchSettings schema, its line here and its line in the help.
 */
const OPTIONS = {
  data: { type: "string", setting: ["data", path] },
  group: { type: "string", multiple: true, setting: ["groups", list] },
  method: { type: "string", multiple: true, setting: ["methods", methods] },
  model: { type: "string", setting: ["model", text] },
  env: { type: "string", multiple: true, setting: ["envs", list] },
  responses: { type: "string", setting: ["responses", text] },
  "cache-dir": { type: "string", setting: ["cacheDir", text] },
  "store-dir": { type: "string", setting: ["storeDir", text] },
  // the simulated tool server (issue 25 §1)
  simulator: { type: "string", setting: ["simulator", text] },
  "simulator-style": { type: "string", setting: ["simulatorStyle", simulatorStyle] },
  "call-cache": { type: "string", setting: ["callCache", path] },
  limit: { type: "string", setting: ["limit", int] },
  ids: { type: "string", multiple: true, setting: ["ids", list] },
  toolset: { type: "string", setting: ["toolset", toolset] },
  embed: { type: "string", setting: ["embed", text] },
  "embed-cache": { type: "string", setting: ["embedCache", path] },
  rerank: { type: "boolean", setting: ["rerank", flag] },
  concurrency: { type: "string", setting: ["concurrency", int] },
  "model-concurrency": { type: "string", setting: ["modelConcurrency", int] },
  endpoints: { type: "string", multiple: true, setting: ["endpoints", list] },
  queue: { type: "string", setting: ["queue", text] },
  out: { type: "string" },
  resume: { type: "boolean", setting: ["resume", flag] },
  force: { type: "boolean", setting: ["force", flag] },
  "tool-calling": { type: "string", setting: ["toolCalling", toolCalling] },
  tries: { type: "string", setting: ["tries", int] },
  "smurfs-max-steps": { type: "string", setting: ["smurfsMaxSteps", int] },
  "single-chain-max-step": { type: "string", setting: ["singleChainMaxStep", int] },
  // refused with a hint: it set both limits at once, which never meant the same thing
  "max-steps": { type: "string" },
  budget: { type: "string", setting: ["budget", int] },
  "observation-limit": { type: "string", setting: ["observationLimit", int] },
  stb: { type: "string", setting: ["stb", stb] },
  // the profile and the sampling settings (issue 25): each profile setting stays overridable by its own flag
  profile: { type: "string", setting: ["profile", profile] },
  "smurfs-src": { type: "string", setting: ["smurfsSrc", smurfsSrc] },
  temperature: { type: "string", setting: ["temperature", temperature] },
  seed: { type: "string", setting: ["seed", seed] },
  "num-ctx": { type: "string", setting: ["numCtx", int] },
  // read together into chainOverrides
  nudge: { type: "string" },
  "validate-args": { type: "string" },
  "parallel-calls": { type: "string" },
  timeout: { type: "string", setting: ["timeoutMs", int] },
  think: { type: "string", setting: ["think", think] },
  "stop-after": { type: "string", setting: ["stopAfter", int] },
  "full-trace": { type: "boolean", setting: ["fullTrace", flag] },
  "max-record-bytes": { type: "string", setting: ["maxRecordBytes", int] },
  json: { type: "boolean" }
} as const satisfies Record<string, BenchOption>

export const COMMAND = { name: "bench", help: HELP, options: OPTIONS } as const

/** The command's options (flags, SMURFS_* and smurfs.config.json, as parseCommand read them) as the run's settings. */
export const settingsOf = ({ values }: ParsedCommand<typeof OPTIONS>): BenchSettings & { readonly json: boolean } => {
  if (!values.out) throw new UsageError("--out <run dir> is required")
  if (values["max-steps"] !== undefined)
    throw new UsageError(
      `--max-steps was split in two: --smurfs-max-steps <n> for smurfs (accepted steps per subtask, default ${smurfsDefaults.maxSteps}) ` +
        `and --single-chain-max-step <n> for react/dfsdt (tree nodes per chain, default ${REACT_DEFAULTS.singleChainMaxStep})`
    )
  const out = resolve(values.out)
  if (existsSync(out) && !statSync(out).isDirectory()) throw new BadInput(`--out ${values.out} is a file; give a directory for the run (it is created when missing)`)
  const input: Record<string, unknown> = { out, model: defaultModelSpec(), stb: stbDirOf(undefined), smurfsSrc: smurfsSrcDirOf(undefined) }
  for (const [name, option] of Object.entries(OPTIONS) as Array<[string, BenchOption]>) {
    const value = (values as Record<string, unknown>)[name]
    if (option.setting !== undefined && value !== undefined) input[option.setting[0]] = option.setting[1](name, value)
  }
  input["chainOverrides"] = { nudge: onOff("nudge", values.nudge), validateArgs: onOff("validate-args", values["validate-args"]), parallelCalls: onOff("parallel-calls", values["parallel-calls"]) }
  try {
    return { ...benchSettings(input as BenchSettingsInput), json: values.json === true }
  } catch (e) {
    throw e instanceof InvalidBenchSettings ? new UsageError(e.message) : e
  }
}

/** The summary lines on stderr, the converted files (or the JSON summary) on stdout; the exit code of the outcome. */
const report = (settings: BenchSettings, json: boolean, outcome: BenchOutcome): number => {
  if (outcome.kind === "no-queries") {
    console.error("smurfs bench: no query matched the given --group/--ids/--limit; nothing to run.")
    return ExitCode.BadInput
  }
  const { summary, totals, endpoints, misses, next } = outcome
  for (const e of endpoints)
    console.error(`  endpoint ${e.endpoint}: ${e.calls} calls, ${e.errors} errors, mean ${e.meanLatencyMs} ms${e.ejections > 0 ? `, taken out ${e.ejections}x` : ""}${e.healthy ? "" : " (out now)"}`)
  console.error(
    `smurfs bench: ${plural(summary.recorded, "task")} recorded now (${summary.answered} answered, not yet judged), ${summary.skipped} already done, ` +
      `${summary.errors} failed because of the model server, ${summary.notRecorded} left undone, of ${summary.total}.` +
      (totals ? ` ${plural(totals.modelCalls, "model call")}, ${plural(totals.tokens, "token")}, ${formatDuration(totals.wallMs)}.` : "") +
      ` Run directory: ${settings.out}`
  )
  if (misses.missedToolCalls > 0)
    console.error(
      `smurfs bench: ${plural(misses.missedToolCalls, "tool call")} of ${misses.toolCalls} (${plural(misses.tasksWithMisses, "task")}) had no recorded response and no simulator: ` +
        "they failed, and the pass rates of this run count them as failures."
    )
  if (json) console.log(JSON.stringify(summaryValue(settings, outcome), null, 2))
  else for (const file of summary.convertedFiles) console.log(file)
  if (summary.errors === 0 && summary.notRecorded === 0) console.error(`Next: judge the answers with \`${next}\``)
  if (summary.errors > 0 && summary.recorded === 0) {
    // nothing got through: the server (or its address, or the model name) is the problem, not the tasks
    console.error(redactText(`smurfs bench: every task run failed because of the model server (${summary.lastServerError}).`))
    console.error(`Check the server and the model with \`smurfs doctor --model ${settings.model}\`, then rerun the same command with --resume.`)
    return ExitCode.ModelUnavailable
  }
  if (summary.errors > 0 || summary.notRecorded > 0) {
    if (summary.errors > 0) console.error(redactText(`The last model server failure: ${summary.lastServerError}`))
    console.error(`Rerun the same command with --resume to retry the ${summary.errors + summary.notRecorded} undone tasks.`)
    return ExitCode.Failure
  }
  return ExitCode.Ok
}

export const run = (argv: string[]): Promise<number> =>
  runCommand(COMMAND, argv, (parsed) => {
    const { json, ...settings } = settingsOf(parsed)
    return bench(settings, json, argv)
  })

const bench = (args: BenchSettings, json: boolean, argv: ReadonlyArray<string>): Promise<number> => {
  try {
    promptsOf(args)
    if (args.envs.includes("simulated")) simulatorPrompts(args.stb, args.simulatorStyle)
    // reference needs the checkouts its methods read; their texts are read now, so a bad checkout stops before the run
    checkProfile(args.profile, args.methods, { stb: args.stb, smurfsSrc: args.smurfsSrc })
    if (args.methods.includes("smurfs")) smurfsProfileOptions(args.profile, args.smurfsSrc)
  } catch (e) {
    console.error(`smurfs bench: ${(e as Error).message}`)
    return Promise.resolve(ExitCode.BadInput)
  }
  if (!args.envs.includes("simulated"))
    console.error(
      `smurfs bench: no simulator: a tool call nothing recorded fails (environments ${args.envs.join(",")}), where StableToolBench's server would ask its simulator model. ` +
        `Such calls are counted as misses per task and in run.json; pass rates are shown with their miss rate. Give --simulator <model spec> (or ${SIMULATOR_ENV}) to answer them as StableToolBench does.`
    )
  const resumeHint = `Rerun with --resume to continue: smurfs bench ${argv.filter((a) => a !== "--resume").join(" ")} --resume`
  const progress = makeProgress()
  // Ctrl-C / SIGTERM interrupt the run; finished records are already on disk.
  return runProgram(runBenchSettings(args, progress).pipe(Effect.provide(otlpLayer()), Effect.map((outcome) => report(args, json, outcome))), {
    command: "bench",
    interrupted: () => console.error(`\nsmurfs bench: interrupted; finished tasks are kept in ${args.out}. ${resumeHint}`),
    // what was recorded stays: a down server or a full disk ends the run, and the same command goes on
    hint: (error) => (error instanceof ModelServerDown || error instanceof RunDirError ? resumeHint : undefined)
  })
}
