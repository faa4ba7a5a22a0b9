// `smurfs bench`: run methods on StableToolBench tasks into a resumable run directory.
import { existsSync, statSync } from "node:fs"
import { resolve } from "node:path"
import type { ParseArgsOptionDescriptor } from "node:util"
import * as Effect from "effect/Effect"
import { identicalRunsNote, partialCheckoutNote, toolDescriptionsNote } from "../../../bench/app.ts"
import { benchmarkFor } from "../../../bench/benchmarks/index.ts"
import { CONVERSER_NAMES } from "../../../bench/benchmarks/tau2/conversers.ts"
import { boundHeapGrowth } from "../../../bench/heap-growth.ts"
import { makeProgress } from "../../../bench/progress.ts"
import { type ReplayReport, runReplay } from "../../../bench/replay.ts"
import { ModelServerDown } from "../../../bench/runner.ts"
import {
  type BenchSettings,
  type BenchSettingsInput,
  benchSettings,
  InvalidBenchSettings
} from "../../../bench/settings.ts"
import { METHOD_NAMES } from "../../agents/methods.ts"
import { DEFAULT_PROFILE, PROFILES, profileNotes } from "../../agents/profile.ts"
import { REACT_DEFAULTS } from "../../agents/react.ts"
import { EXECUTORS, smurfsDefaults } from "../../agents/smurfs-options.ts"
import { smurfsSrcDirOf } from "../../agents/smurfs-source.ts"
import { defaultModelSpec } from "../../llm/spec.ts"
import { plural } from "../../plural.ts"
import { stbDirOf } from "../../text/stabletoolbench-files.ts"
import { SIMULATOR_STYLES } from "../../tools/environments/simulator-prompts.ts"
import { parseToolset, toolsetLabel } from "../../tools/retrieval/toolset.ts"
import { pulledToolsOf, stbToolsDirOf } from "../../tools/toolbench/tools-folder.ts"
import { RunDirError } from "../../trace/fs-problem.ts"
import { otlpLayer } from "../../trace/otlp.ts"
import { reportBench } from "../bench-summary.ts"
import { ExitCode } from "../exit-codes.ts"
import {
  BadInput,
  choiceList,
  choiceOption,
  intOption,
  lanesOption,
  numberOption,
  type ParsedCommand,
  runCommand,
  splitList,
  thinkOption,
  UsageError
} from "../options.ts"
import { runProgram } from "../run-program.ts"
import { SIMULATOR_ENV } from "../simulator-option.ts"
import { BENCH_HELP } from "./bench-help.ts"

const METHODS = [...METHOD_NAMES, ...CONVERSER_NAMES]

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
const methodToolsets: Reader = (name, value) =>
  Object.fromEntries(
    splitList(value as ReadonlyArray<string>).map((pair) => {
      const [method = "", set = ""] = pair.split("=").map((t) => t.trim())
      if (!(METHODS as ReadonlyArray<string>).includes(method) || (set !== "all" && set !== "relevant"))
        throw new UsageError(`${name} takes <method>=all|relevant (method: ${METHODS.join(", ")}), not "${pair}"`)
      return [method, set]
    })
  )
const toolCalling: Reader = (name, value) => choiceOption(name, value as string, ["auto", "native", "json"], "auto")
const executor: Reader = (name, value) => choiceOption(name, value as string, EXECUTORS, smurfsDefaults.executor)
const think: Reader = (_name, value) => thinkOption(value as string)
const slotAffinity: Reader = (name, value) => {
  const text = String(value).trim()
  if (text === "auto") return "auto"
  const n = Number(text)
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${name} takes auto or a number of slots, not "${text}"`)
  return n
}
const lanes: Reader = (name, value) => lanesOption(name, value as string)
const laneGrace: Reader = (name, value) => intOption(name, value as string, 0)
const stb: Reader = (_name, value) => stbDirOf(value as string)
const stbTools: Reader = (_name, value) => stbToolsDirOf(value as string)
const simulatorStyle: Reader = (name, value) => choiceOption(name, value as string, SIMULATOR_STYLES, "gpt")
const profile: Reader = (name, value) => choiceOption(name, value as string, PROFILES, DEFAULT_PROFILE)
const smurfsSrc: Reader = (_name, value) => smurfsSrcDirOf(value as string, {})
const temperature: Reader = (name, value) => numberOption(name, value as string, 0, 2)
const seed: Reader = (name, value) => intOption(name, value as string, 0)
const seeds: Reader = (name, value) => splitList(value as ReadonlyArray<string>).map((v) => intOption(name, v, 0))
/** An on|off flag; undefined when not given (the profile decides). */
const onOff = (name: string, text: string | undefined): boolean | undefined =>
  text === undefined ? undefined : choiceOption(name, text, ["on", "off"], "on") === "on"

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
  model: { type: "string", short: "m", setting: ["model", text] },
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
  "method-toolset": { type: "string", multiple: true, setting: ["methodToolsets", methodToolsets] },
  embed: { type: "string", setting: ["embed", text] },
  "embed-cache": { type: "string", setting: ["embedCache", path] },
  rerank: { type: "boolean", setting: ["rerank", flag] },
  concurrency: { type: "string", setting: ["concurrency", int] },
  "model-concurrency": { type: "string", setting: ["modelConcurrency", int] },
  "slot-affinity": { type: "string", setting: ["slotAffinity", slotAffinity] },
  lanes: { type: "string", setting: ["lanes", lanes] },
  "lane-grace": { type: "string", setting: ["laneGraceMs", laneGrace] },
  endpoints: { type: "string", multiple: true, setting: ["endpoints", list] },
  queue: { type: "string", setting: ["queue", text] },
  out: { type: "string" },
  resume: { type: "boolean", setting: ["resume", flag] },
  force: { type: "boolean", setting: ["force", flag] },
  "tool-calling": { type: "string", setting: ["toolCalling", toolCalling] },
  executor: { type: "string", setting: ["executor", executor] },
  tries: { type: "string", setting: ["tries", int] },
  "smurfs-max-steps": { type: "string", setting: ["smurfsMaxSteps", int] },
  "single-chain-max-step": { type: "string", setting: ["singleChainMaxStep", int] },
  // refused with a hint: it set both limits at once, which never meant the same thing
  "max-steps": { type: "string" },
  budget: { type: "string", setting: ["budget", int] },
  "observation-limit": { type: "string", setting: ["observationLimit", int] },
  stb: { type: "string", setting: ["stb", stb] },
  "stb-tools": { type: "string", setting: ["stbTools", stbTools] },
  // the profile and the sampling settings (issue 25): each profile setting stays overridable by its own flag
  profile: { type: "string", setting: ["profile", profile] },
  "smurfs-src": { type: "string", setting: ["smurfsSrc", smurfsSrc] },
  temperature: { type: "string", setting: ["temperature", temperature] },
  seed: { type: "string", setting: ["seed", seed] },
  // repeated agent runs (issue 31 §1): one record per run, each with its seed
  runs: { type: "string", setting: ["runs", int] },
  seeds: { type: "string", multiple: true, setting: ["seeds", seeds] },
  // verified replay (issue 31 §6)
  "replay-from": { type: "string", setting: ["replayFrom", path] },
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
  // τ²-bench (issue 34): conversations with a simulated user
  tau2: { type: "string", setting: ["tau2", path] },
  domain: { type: "string", setting: ["domain", text] },
  "user-model": { type: "string", setting: ["userModel", text] },
  judge: { type: "string", setting: ["judge", text] },
  "task-split": { type: "string", setting: ["taskSplit", text] },
  trials: { type: "string", setting: ["runs", int] },
  json: { type: "boolean" }
} as const satisfies Record<string, BenchOption>

export const COMMAND = { name: "bench", help: BENCH_HELP, options: OPTIONS } as const

/** The command's options (flags, SMURFS_* and smurfs.config.json, as parseCommand read them) as the run's settings. */
export const settingsOf = ({ values }: ParsedCommand<typeof OPTIONS>): BenchSettings & { readonly json: boolean } => {
  if (!values.out) throw new UsageError("--out <run dir> is required")
  if (values["max-steps"] !== undefined)
    throw new UsageError(
      `--max-steps was split in two: --smurfs-max-steps <n> for smurfs (accepted steps per subtask, default ${smurfsDefaults.maxSteps}) ` +
        `and --single-chain-max-step <n> for react/dfsdt (tree nodes per chain, default ${REACT_DEFAULTS.singleChainMaxStep})`
    )
  const out = resolve(values.out)
  if (existsSync(out) && !statSync(out).isDirectory())
    throw new BadInput(`--out ${values.out} is a file; give a directory for the run (it is created when missing)`)
  const input: Record<string, unknown> = {
    out,
    model: defaultModelSpec(),
    stb: stbDirOf(undefined),
    stbTools: stbToolsDirOf(undefined),
    smurfsSrc: smurfsSrcDirOf(undefined)
  }
  for (const [name, option] of Object.entries(OPTIONS) as Array<[string, BenchOption]>) {
    const value = (values as Record<string, unknown>)[name]
    if (option.setting !== undefined && value !== undefined) input[option.setting[0]] = option.setting[1](name, value)
  }
  // a checkout with the tools folder pulled into it (smurfs data pull stabletoolbench --tools) describes its tools
  input["stbTools"] ??= pulledToolsOf(input["stb"] as string | undefined)
  input["chainOverrides"] = {
    nudge: onOff("nudge", values.nudge),
    validateArgs: onOff("validate-args", values["validate-args"]),
    parallelCalls: onOff("parallel-calls", values["parallel-calls"])
  }
  try {
    return { ...benchSettings(input as BenchSettingsInput), json: values.json === true }
  } catch (e) {
    throw e instanceof InvalidBenchSettings ? new UsageError(e.message) : e
  }
}

export const run = (argv: string[]): Promise<number> =>
  runCommand(COMMAND, argv, (parsed) => {
    const { json, ...settings } = settingsOf(parsed)
    return bench(settings, json, argv)
  })

/** The lines a verified replay ends with: what was checked, and each divergence with where it starts. */
export const replayLines = (report: ReplayReport): Array<string> => [
  `smurfs bench: replayed ${report.source} with ${plural(report.modelCalls, "model call")}: ` +
    `${report.identical} of ${plural(report.checked, "trajectory", "trajectories")} identical, ` +
    `${plural(report.divergences.length, "divergence")}` +
    (report.skipped > 0 ? ` (${report.skipped} not replayed: no finished record)` : ""),
  ...report.divergences.map(
    (d) =>
      `  ${d.method} ${d.group}/${d.taskId}${d.run === undefined ? "" : ` run ${d.run}`}: ` +
      `${d.event === undefined ? "" : `event ${d.event}: `}${d.where}`
  )
]

/** `bench --replay-from`: the run again from its records, no model; exit 0 when every trajectory came out identical. */
const replayBench = (args: BenchSettings, json: boolean): Promise<number> => {
  const progress = makeProgress()
  return runProgram(
    runReplay(args, progress).pipe(
      Effect.map(({ report }) => {
        if (json) console.log(JSON.stringify(report, null, 2))
        for (const line of replayLines(report)) console.error(line)
        return report.divergences.length === 0 ? ExitCode.Ok : ExitCode.Failure
      })
    ),
    { command: "bench" }
  )
}

const bench = (args: BenchSettings, json: boolean, argv: ReadonlyArray<string>): Promise<number> => {
  if (args.replayFrom !== undefined) return replayBench(args, json)
  const benchmark = benchmarkFor(args)
  try {
    benchmark.check(args)
  } catch (e) {
    console.error(`smurfs bench: ${(e as Error).message}`)
    return Promise.resolve(ExitCode.BadInput)
  }
  if (benchmark.name === "stabletoolbench" && !args.envs.includes("simulated"))
    console.error(
      `smurfs bench: no simulator: a tool call nothing recorded fails (environments ${args.envs.join(",")}), where StableToolBench's server would ask its simulator model. ` +
        `Such calls are counted as misses per task and in run.json; pass rates are shown with their miss rate. Give --simulator <model spec> (or ${SIMULATOR_ENV}) to answer them as StableToolBench does.`
    )
  for (const note of profileNotes(args.profile, args.methods, args.smurfsSrc)) console.error(`smurfs bench: ${note}`)
  const identical = benchmark.name === "stabletoolbench" ? identicalRunsNote(args) : undefined
  if (identical) console.error(`smurfs bench: ${identical}`)
  for (const note of [toolDescriptionsNote(args), partialCheckoutNote(args)])
    if (note) console.error(`smurfs bench: ${note}`)
  // hundreds of tasks at once for hours: a full collection before the heap grows far past what is alive
  boundHeapGrowth()
  const resumeHint = `Rerun with --resume to continue: smurfs bench ${argv.filter((a) => a !== "--resume").join(" ")} --resume`
  const progress = makeProgress()
  // Ctrl-C / SIGTERM interrupt the run; finished records are already on disk.
  return runProgram(
    benchmark.run(args, progress).pipe(
      Effect.provide(otlpLayer()),
      Effect.map((outcome) => reportBench(args, json, outcome))
    ),
    {
      command: "bench",
      interrupted: () =>
        console.error(`\nsmurfs bench: interrupted; finished tasks are kept in ${args.out}. ${resumeHint}`),
      // what was recorded stays: a down server or a full disk ends the run, and the same command goes on
      hint: (error) => (error instanceof ModelServerDown || error instanceof RunDirError ? resumeHint : undefined)
    }
  )
}
