// `smurfs data pull`: fetch StableToolBench's or τ²-bench's data into the layout --data, --stb and --tau2 read.
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import { type PieceOutcome, pullData } from "../../../bench/data-pull/pull.ts"
import {
  type DataPiece,
  stableToolBenchPieces,
  TAU2_DOMAIN_NAMES,
  tau2Pieces
} from "../../../bench/data-pull/sources.ts"
import type { Failure } from "../../failure.ts"
import { downloadReporter } from "../../llm/model-files/progress.ts"
import { closest } from "../did-you-mean.ts"
import { ExitCode } from "../exit-codes.ts"
import { choiceList, type ParsedCommand, runCommand, splitList, UsageError } from "../options.ts"
import { runProgram } from "../run-program.ts"
import { COMMAND } from "./data-help.ts"

export { COMMAND }

const DATASETS = ["stabletoolbench", "tau2"] as const
type Dataset = (typeof DATASETS)[number]

export const run = (argv: string[]): Promise<number> => runCommand(COMMAND, argv, (parsed) => pull(parsed))

const datasetOf = (name: string | undefined): Dataset => {
  if (name === undefined) throw new UsageError(`name the data to pull: ${DATASETS.join(" or ")}`)
  if ((DATASETS as ReadonlyArray<string>).includes(name)) return name as Dataset
  const suggestion = closest(name, DATASETS)
  throw new UsageError(
    `unknown data "${name}": ${DATASETS.join(" or ")}${suggestion ? ` (did you mean "${suggestion}"?)` : ""}`
  )
}

const nextSteps = (dataset: Dataset, dir: string, outcomes: ReadonlyArray<PieceOutcome>): Array<string> => {
  if (dataset === "tau2") return [`τ²-bench data in ${dir} (MIT): pass --tau2 ${dir}`]
  const names = new Set(outcomes.map((o) => o.name))
  return [
    `StableToolBench data in ${dir} (Apache-2.0, see ${resolve(dir, "LICENSE")})`,
    `next: smurfs bench --data ${dir} --stb ${dir} --group G1_instruction --model <spec> --out runs/<name>`,
    ...(names.has("cache") ? [] : ["their recorded tool responses: smurfs data pull stabletoolbench --cache"]),
    ...(names.has("baselines") ? [`baselines to compare against: ${resolve(dir, "baselines")}`] : [])
  ]
}

const pull = ({ values, positionals }: ParsedCommand<typeof COMMAND.options>): Promise<number> => {
  const [verb, name, ...rest] = positionals
  if (verb !== "pull")
    throw new UsageError(
      verb === undefined
        ? "say what to do: smurfs data pull <stabletoolbench|tau2>"
        : `unknown subcommand "${verb}" (the one there is: pull)`
    )
  const dataset = datasetOf(name)
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`)
  if (dataset === "tau2" && (values.cache || values.baselines || values.tools))
    throw new UsageError("--cache, --baselines and --tools are StableToolBench's: smurfs data pull stabletoolbench")
  if (dataset === "stabletoolbench" && values.domain !== undefined)
    throw new UsageError("--domain is τ²-bench's: smurfs data pull tau2 --domain retail")
  const pieces: Array<DataPiece> =
    dataset === "tau2"
      ? tau2Pieces(
          values.domain ? choiceList("domain", splitList(values.domain), TAU2_DOMAIN_NAMES) : TAU2_DOMAIN_NAMES
        )
      : stableToolBenchPieces({
          cache: values.cache ?? false,
          baselines: values.baselines ?? false,
          tools: values.tools ?? false
        })
  const dir = values.out ?? `data/${dataset}`
  const flags = [
    ...(values.cache ? ["--cache"] : []),
    ...(values.baselines ? ["--baselines"] : []),
    ...(values.tools ? ["--tools"] : []),
    ...(values.domain ? [`--domain ${splitList(values.domain).join(",")}`] : []),
    ...(values.out ? [`--out ${values.out}`] : [])
  ]
  const command = ["smurfs data pull", dataset, ...flags].join(" ")
  const program = Effect.gen(function* () {
    const outcomes = yield* Effect.tryPromise({
      try: (signal) =>
        pullData({
          dest: resolve(dir),
          pieces,
          command,
          signal,
          ...(values.offline ? { offline: true } : {}),
          reporter: (label) => downloadReporter({ label: `${dataset} ${label}` }),
          say: (line) => console.error(`${dataset}: ${line}`)
        }),
      catch: (e) => e as Failure
    })
    if (values.json) console.log(JSON.stringify({ dataset, dir: resolve(dir), pieces: outcomes }, null, 2))
    else {
      for (const o of outcomes)
        console.log(`${o.status === "present" ? "already there" : "fetched"}: ${o.name} (${o.what})`)
      for (const line of nextSteps(dataset, dir, outcomes)) console.log(line)
    }
    return ExitCode.Ok
  })
  return runProgram(program, { command: "data pull" })
}
