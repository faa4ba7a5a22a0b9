import cliProgress from "cli-progress"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { type EvalSummary, WIN_STATUSES } from "../../../bench/eval/evaluate.ts"
import {
  type EvalInput,
  type EvalObserver,
  evalSettings,
  InvalidEvalSettings,
  prepareEval,
  ReferenceMethodError,
  runEval
} from "../../../bench/eval/run-eval.ts"
import { renderTable } from "../../../bench/report/table.ts"
import { isFailure } from "../../failure.ts"
import type { InvalidModelSpec } from "../../llm/errors.ts"
import type { LanguageModel } from "../../llm/language-model.ts"
import { STB_FILES, stbDirOf } from "../../text/stabletoolbench-files.ts"
import { visibleText } from "../../trace/visible-text.ts"
import { ExitCode } from "../exit-codes.ts"
import {
  choiceOption,
  intOption,
  numberOption,
  type ParsedCommand,
  runCommand,
  thinkOption,
  UsageError
} from "../options.ts"
import { runProgram } from "../run-program.ts"
import { COMMAND } from "./eval-help.ts"

export { COMMAND }

/** A progress bar on a terminal, a line per tenth otherwise. */
const progress = (label: string) => {
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: `${label} [{bar}] {value}/{total} tasks`, stream: process.stderr, hideCursor: true },
      cliProgress.Presets.shades_classic
    )
    let started = false
    return {
      update: (done: number, total: number) => {
        if (!started) bar.start(total, 0), (started = true)
        bar.update(done)
      },
      stop: () => void (started && bar.stop())
    }
  }
  let shown = -1
  return {
    update: (done: number, total: number) => {
      const tenth = Math.floor((10 * done) / Math.max(1, total))
      if (tenth !== shown || done === total) (shown = tenth), console.error(`${label}: ${done}/${total} tasks`)
    },
    stop: () => {}
  }
}

const report = (what: string, s: EvalSummary) => {
  console.error(
    `${what}: ${s.judged} decisions made, ${s.kept} kept from earlier${s.failed.length ? `, ${s.failed.length} failed` : ""}`
  )
  for (const f of s.failed.slice(0, 5)) console.error(visibleText(`  ${f.method}/${f.group}/${f.taskId}: ${f.error}`))
  if (s.failed.length > 5)
    console.error(`  ... and ${s.failed.length - 5} more; run the same command again to retry them`)
}

/** What the terminal shows while an eval runs: the judge texts, a progress bar per stage, each stage's decisions. */
const TERMINAL: EvalObserver = {
  started: (prompts) =>
    console.error(
      `judge texts: ${prompts.source === "smurfs" ? "our own wording of ToolEval's rules" : `ToolEval's template from ${prompts.source.slice("stabletoolbench:".length)}`}`
    ),
  stage: progress,
  judged: report,
  warn: (text) => console.error(`smurfs eval: ${text}`),
  fac: (fac) =>
    console.error(
      `fac: ${fac.judged} decisions made, ${fac.kept} kept from earlier (the prompt of ${STB_FILES.facEval})`
    )
}

export const run = (argv: Array<string>): Promise<number> => runCommand(COMMAND, argv, ({ values }) => evaluate(values))

/** The flags as the eval's settings; a flag's text that cannot be read, or settings that do not go together, are bad usage. */
const settingsOf = (parsed: ParsedCommand<typeof COMMAND.options>["values"]) => {
  if (!parsed.run || !parsed.judge)
    throw new UsageError(`${!parsed.run ? "--run <dir>" : "--judge <model spec>"} is required`)
  try {
    return evalSettings({
      run: parsed.run,
      judge: parsed.judge,
      k: intOption("k", parsed.k),
      reference: parsed.reference,
      referenceMethod: parsed["reference-method"],
      methods: parsed.method,
      groups: parsed.group,
      concurrency: intOption("concurrency", parsed.concurrency),
      seed: intOption("seed", parsed.seed, 0),
      temperature: numberOption("temperature", parsed.temperature, 0, 2),
      numCtx: intOption("num-ctx", parsed["num-ctx"]),
      think: thinkOption(parsed.think),
      timeoutMs: intOption("timeout", parsed.timeout),
      out: parsed.out,
      stb: stbDirOf(parsed.stb),
      fac: parsed.fac === true,
      queue: parsed.queue,
      force: parsed.force === true,
      winStatuses: choiceOption("win-statuses", parsed["win-statuses"], WIN_STATUSES, "rejudge")
    })
  } catch (e) {
    throw e instanceof InvalidEvalSettings ? new UsageError(e.message) : e
  }
}

const evaluate = (parsed: ParsedCommand<typeof COMMAND.options>["values"]): Promise<number> => {
  const settings = settingsOf(parsed)
  let input: EvalInput
  try {
    input = prepareEval(settings, (line) => console.error(line))
  } catch (e) {
    if (e instanceof ReferenceMethodError) throw new UsageError(e.message)
    // a failure that says its kind is reported by it; a file that cannot be read or parsed is bad input
    if (isFailure(e)) throw e
    console.error(`smurfs eval: ${(e as Error).message}`)
    return Promise.resolve(ExitCode.BadInput)
  }
  return runProgram(evalProgram(input, { json: parsed.json === true }), EVAL_EDGE)
}

/** How `smurfs eval` meets the process: an interruption keeps what was judged. */
export const EVAL_EDGE = {
  command: "eval",
  interrupted: () =>
    console.error("smurfs eval: interrupted; the labels judged so far are kept, run the same command to resume")
} as const

/** The eval of `input` with the terminal's progress, then its rows as a table (or JSON); it succeeds with the exit code. */
export const evalProgram = (
  input: EvalInput,
  options: { readonly json: boolean; readonly judgeLayer?: Layer.Layer<LanguageModel, InvalidModelSpec> | undefined }
) =>
  runEval(input, { observer: TERMINAL, judgeLayer: options.judgeLayer }).pipe(
    Effect.map((outcome) => {
      console.log(
        options.json
          ? JSON.stringify(
              { runDir: outcome.runDir, store: outcome.store, judge: outcome.judge, rows: outcome.rows },
              null,
              2
            )
          : visibleText(renderTable(outcome.rows))
      )
      return ExitCode.Ok
    })
  )
