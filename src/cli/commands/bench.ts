// `smurfs bench`: run methods on StableToolBench tasks into a resumable run directory.
import { existsSync, statSync } from "node:fs"
import { resolve } from "node:path"
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
import { type BenchOption, COMMAND, type ReaderName } from "./bench-help.ts"

export { COMMAND }

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
/** The readers BENCH_OPTIONS names. */
const READERS: Readonly<Record<ReaderName, Reader>> = {
  path,
  list,
  methods,
  text,
  simulatorStyle,
  int,
  toolset,
  methodToolsets,
  flag,
  slotAffinity,
  lanes,
  laneGrace,
  toolCalling,
  executor,
  stb,
  stbTools,
  profile,
  smurfsSrc,
  temperature,
  seed,
  seeds,
  think
}

/** An on|off flag; undefined when not given (the profile decides). */
const onOff = (name: string, text: string | undefined): boolean | undefined =>
  text === undefined ? undefined : choiceOption(name, text, ["on", "off"], "on") === "on"

/** The command's options (flags, SMURFS_* and smurfs.config.json, as parseCommand read them) as the run's settings. */
export const settingsOf = ({
  values
}: ParsedCommand<typeof COMMAND.options>): BenchSettings & { readonly json: boolean } => {
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
  for (const [name, option] of Object.entries(COMMAND.options) as Array<[string, BenchOption]>) {
    const value = (values as Record<string, unknown>)[name]
    if (option.setting !== undefined && value !== undefined)
      input[option.setting[0]] = READERS[option.setting[1]](name, value)
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
