// `smurfs eval`: judge a run's pass rate (and win rate against a reference run), resumable, with progress.
import { existsSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import type { ParseArgsOptionsConfig } from "node:util"
import { Cause, Effect, Exit } from "effect"
import cliProgress from "cli-progress"
import { EVAL_DEFAULTS, type EvalSummary, evaluatePass, evaluateWin } from "../../../bench/eval/evaluate.ts"
import { judgePrompts, type JudgePrompts } from "../../../bench/eval/judge-prompts.ts"
import { EVAL_SOURCE_FILE, slug } from "../../../bench/eval/labels.ts"
import { type Decider, inProcessDecider } from "../../../bench/eval/judge-job.ts"
import { makeQueueDecider } from "../../../bench/queue/judge-queue.ts"
import { connectionOf } from "../../../bench/queue/connection.ts"
import { QUEUE_DEFAULTS } from "../../../bench/queue/queue-executor.ts"
import { STB_ENV, stbDirOf } from "../../agents/stabletoolbench-files.ts"
import { writeJsonAtomic } from "../../trace/atomic-write.ts"
import { loadSource, methodsOf, type Source, SourceError } from "../../../bench/eval/sources.ts"
import { collectRows } from "../../../bench/report/collect.ts"
import { renderTable } from "../../../bench/report/table.ts"
import { ExitCode } from "../exit-codes.ts"
import { resolveModelLayer } from "../model-option.ts"
import { MODEL_DEFAULTS } from "../../llm/spec.ts"
import { BadInput, intOption, numberOption, type ParsedCommand, runCommand, UsageError } from "../options.ts"

/** Tasks in flight when the decisions go to a queue: enough to keep several workers busy. */
const QUEUE_CONCURRENCY = 64

const HELP = `usage: smurfs eval --run <dir> --judge <model spec> [options]

Judge every task of a run: K pass labels per task (ToolEval's SoPR) and, with --reference, K win
rounds per task against another run (SoWR). Labels are stored per task under <run>/eval/<judge>/,
so an interrupted eval resumes where it stopped and nothing is judged twice.

options:
  --run <dir>               a run directory from \`smurfs bench\`, or a StableToolBench folder with
                            model_predictions_converted/<method>/<group>.json, or with raw answers
                            answer/<model>/<group>/<qid>_<method>.json (converted as ToolEval does)
  --judge <spec>            the judge model: ollama:<model>, openai:<model>, scripted:<file.json>, ...
  --k <n>                   judge runs (pass) and rounds (win) per task (default ${EVAL_DEFAULTS.k})
  --reference <dir>         a reference run (or StableToolBench folder) to compute the win rate against
  --reference-method <m>    the reference's method when it has several (default: its only method,
                            else the method of the same name)
  --method <m>              judge only this method (repeatable)
  --group <g>               judge only this group (repeatable)
  --concurrency <n>         tasks judged at the same time (default ${EVAL_DEFAULTS.concurrency}; with --queue ${QUEUE_CONCURRENCY})
  --seed <n>                base seed: judge run r samples with its own seed, and win rounds shuffle
                            the answer order with it (default ${EVAL_DEFAULTS.seed})
  --temperature <t>         the judge model's sampling temperature where a judge prompt sets none (default ${MODEL_DEFAULTS.temperature})
  --num-ctx <n>             the judge model's context window in tokens (default ${MODEL_DEFAULTS.numCtx})
  --stb <dir>               judge with ToolEval's own template and function schemas, read from this
                            StableToolBench checkout (the folder holding toolbench/; default ${STB_ENV});
                            without it, our own wording of the same rules
  --out <dir>               write eval/ here instead of into the run directory (for read-only folders);
                            \`smurfs compare <dir>\` then shows these labels
  --queue <redis://...>     hand each judge decision to \`smurfs worker\` processes through a BullMQ queue
                            on Redis (each judges with its own server of the judge model, or its --model);
                            the decisions come back through the queue and are stored here as without it
  --json                    print the result rows as JSON instead of the table
  -h, --help                show this help`

const positiveInt = (name: string, text: string | undefined, fallback: number): number => intOption(name, text, name === "seed" ? 0 : 1) ?? fallback

/** A progress bar on a terminal, a line per tenth otherwise. */
const progress = (label: string) => {
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar({ format: `${label} [{bar}] {value}/{total} tasks`, stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic)
    let started = false
    return {
      update: (done: number, total: number) => {
        if (!started) (bar.start(total, 0), (started = true))
        bar.update(done)
      },
      stop: () => started && bar.stop()
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
  console.error(`${what}: ${s.judged} decisions made, ${s.kept} kept from earlier${s.failed.length ? `, ${s.failed.length} failed` : ""}`)
  for (const f of s.failed.slice(0, 5)) console.error(`  ${f.method}/${f.group}/${f.taskId}: ${f.error}`)
  if (s.failed.length > 5) console.error(`  ... and ${s.failed.length - 5} more; run the same command again to retry them`)
}

const pickReferenceMethod = (reference: Source, method: string, wanted: string | undefined): string => {
  const methods = methodsOf(reference)
  if (wanted !== undefined) {
    if (!methods.includes(wanted)) throw new UsageError(`the reference has no method "${wanted}" (it has: ${methods.join(", ") || "none"})`)
    return wanted
  }
  if (methods.length === 1) return methods[0]!
  if (methods.includes(method)) return method
  throw new UsageError(`the reference has several methods (${methods.join(", ")}); choose one with --reference-method`)
}

const program = <R>(args: {
  source: Source
  reference: Source | undefined
  referenceMethod: string | undefined
  store: string
  judge: string
  k: number
  concurrency: number
  seed: number
  prompts: JudgePrompts
  decider: Decider<R>
}) =>
  Effect.gen(function* () {
    const { source, store, judge, k, concurrency, prompts, seed, decider } = args
    console.error(`judge texts: ${prompts.source === "smurfs" ? "our own wording of ToolEval's rules" : `ToolEval's template from ${prompts.source.slice("stabletoolbench:".length)}`}`)
    const bar = progress(`pass (${judge})`)
    const pass = yield* evaluatePass(source.entries, { store, judge, k, concurrency, prompts, seed, decider, onProgress: bar.update }).pipe(Effect.ensuring(Effect.sync(bar.stop)))
    report("pass", pass)
    if (!args.reference) return
    for (const method of methodsOf(source)) {
      const referenceMethod = pickReferenceMethod(args.reference, method, args.referenceMethod)
      const referenceName = `${resolve(args.reference.dir).split("/").pop()}-${referenceMethod}`
      const winBar = progress(`win ${method} vs ${referenceName}`)
      const win = yield* evaluateWin(
        source.entries.filter((e) => e.method === method),
        args.reference.entries.filter((e) => e.method === referenceMethod),
        { store, judge, k, concurrency, seed, prompts, decider, referenceName, referenceSource: resolve(args.reference.dir), referenceMethod, referenceInStore: resolve(args.reference.dir) === resolve(store), onProgress: winBar.update }
      ).pipe(Effect.ensuring(Effect.sync(winBar.stop)))
      report(`win ${method}`, win)
    }
  })

/** The options of `smurfs eval`, in node:util parseArgs' shape. */
const OPTIONS = {
  run: { type: "string" },
  judge: { type: "string" },
  k: { type: "string" },
  reference: { type: "string" },
  "reference-method": { type: "string" },
  method: { type: "string", multiple: true },
  group: { type: "string", multiple: true },
  concurrency: { type: "string" },
  seed: { type: "string" },
  temperature: { type: "string" },
  "num-ctx": { type: "string" },
  out: { type: "string" },
  stb: { type: "string" },
  json: { type: "boolean" },
  queue: { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "eval", help: HELP, options: OPTIONS } as const

export const run = (argv: Array<string>): Promise<number> => runCommand(COMMAND, argv, ({ values }) => evaluate(values))

const evaluate = async (parsed: ParsedCommand<typeof OPTIONS>["values"]): Promise<number> => {
  if (!parsed.run || !parsed.judge) throw new UsageError(`${!parsed.run ? "--run <dir>" : "--judge <model spec>"} is required`)
  let options
  try {
    const k = positiveInt("k", parsed.k, EVAL_DEFAULTS.k)
    if (parsed.queue !== undefined) connectionOf(parsed.queue) // a bad URL is bad input, before anything is judged
    const concurrency = positiveInt("concurrency", parsed.concurrency, parsed.queue === undefined ? EVAL_DEFAULTS.concurrency : QUEUE_CONCURRENCY)
    const seed = positiveInt("seed", parsed.seed, EVAL_DEFAULTS.seed)
    const loaded = loadSource(parsed.run)
    const keep = (e: { method: string; group: string }) =>
      (!parsed.method || parsed.method.includes(e.method)) && (!parsed.group || parsed.group.includes(e.group))
    const source: Source = { ...loaded, entries: loaded.entries.filter(keep) }
    for (const problem of loaded.invalid) console.error(`warning: skipped an invalid task record: ${problem}`)
    if (source.entries.length === 0) throw new SourceError({ message: `${parsed.run} has no answered tasks${parsed.method || parsed.group ? " for the chosen --method/--group" : ""}.` })
    const reference = parsed.reference ? loadSource(parsed.reference) : undefined
    if (reference) for (const m of methodsOf(source)) pickReferenceMethod(reference, m, parsed["reference-method"])
    if (parsed.out !== undefined && existsSync(parsed.out) && !statSync(parsed.out).isDirectory())
      throw new BadInput(`--out ${parsed.out} is a file; give a directory for the labels (it is created when missing)`)
    const prompts = judgePrompts(stbDirOf(parsed.stb))
    options = { source, reference, referenceMethod: parsed["reference-method"], store: parsed.out ?? parsed.run, judge: parsed.judge, k, concurrency, seed, prompts }
  } catch (e) {
    if (e instanceof UsageError || e instanceof BadInput) throw e
    console.error(`smurfs eval: ${(e as Error).message}`)
    return ExitCode.BadInput
  }
  // As in `smurfs bench`: Ollama serves OLLAMA_NUM_PARALLEL requests at once; other servers get one slot per judged task.
  const layer = resolveModelLayer(parsed.judge, {
    concurrency: parsed.judge.startsWith("ollama:") ? undefined : options.concurrency,
    temperature: numberOption("temperature", parsed.temperature, 0, 2),
    numCtx: intOption("num-ctx", parsed["num-ctx"])
  })
  if (resolve(options.store) !== resolve(parsed.run)) {
    const pointer = await Effect.runPromiseExit(writeJsonAtomic(join(options.store, EVAL_SOURCE_FILE), { source: resolve(parsed.run) }))
    if (Exit.isFailure(pointer)) {
      console.error(`smurfs eval: ${String(Cause.squash(pointer.cause))}`)
      return ExitCode.BadInput
    }
  }
  const controller = new AbortController()
  const onSigint = () => controller.abort()
  process.once("SIGINT", onSigint)
  const queue = parsed.queue
  const evaluation: Effect.Effect<void, { readonly _tag: string; readonly message: string }> =
    queue === undefined
      ? program({ ...options, decider: inProcessDecider(options.prompts) }).pipe(Effect.provide(layer))
      : // the judge model is the workers': nothing here talks to it
        Effect.scoped(Effect.flatMap(makeQueueDecider({ ...QUEUE_DEFAULTS, queueUrl: queue }), (decider) => program({ ...options, decider })))
  const exit = await Effect.runPromiseExit(evaluation, { signal: controller.signal })
  process.off("SIGINT", onSigint)
  if (Exit.isFailure(exit)) {
    if (Cause.hasInterruptsOnly(exit.cause)) {
      console.error("smurfs eval: interrupted; the labels judged so far are kept, run the same command to resume")
      return ExitCode.Interrupted
    }
    const error = Cause.squash(exit.cause) as { _tag?: string; message?: string }
    console.error(`smurfs eval: ${error?.message ?? String(error)}`)
    return error?._tag === "InvalidModelSpec" || error?._tag === "RunDirError" ? ExitCode.BadInput : error instanceof UsageError ? ExitCode.Usage : ExitCode.ModelUnavailable
  }
  const rows = collectRows([options.store]).filter((r) => r.judge === slug(parsed.judge!))
  console.log(parsed.json ? JSON.stringify({ runDir: resolve(parsed.run), store: resolve(options.store), judge: parsed.judge, rows }, null, 2) : renderTable(rows))
  return ExitCode.Ok
}
