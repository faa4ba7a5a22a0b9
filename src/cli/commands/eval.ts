// `smurfs eval`: judge a run's pass rate (and win rate against a reference run), resumable, with progress.
import { existsSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import type { ParseArgsOptionsConfig } from "node:util"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import cliProgress from "cli-progress"
import { EVAL_DEFAULTS, type EvalSummary, evaluatePass, evaluateWin, someDecisions, WIN_STATUSES, type WinStatuses } from "../../../bench/eval/evaluate.ts"
import { judgePrompts, type JudgePrompts } from "../../../bench/eval/judge-prompts.ts"
import { EVAL_SOURCE_FILE, MAX_JUDGE_RUNS, slug } from "../../../bench/eval/labels.ts"
import { type Decider, inProcessDecider } from "../../../bench/eval/judge-job.ts"
import { removeStrayTemps } from "../../../bench/run-dir.ts"
import { acquireRunLock } from "../../../bench/run-lock.ts"
import { connectionOf, QUEUE_DEFAULTS, type QueueUnavailable } from "../../../bench/queue/connection.ts"
import { loadWithPeers, type MissingPeerPackage, QUEUE_PEERS } from "../../peer-packages.ts"
import type { InvalidModelSpec } from "../../llm/errors.ts"
import type { LanguageModel } from "../../llm/language-model.ts"
import { STB_ENV, STB_FILES, stbDirOf } from "../../text/stabletoolbench-files.ts"
import { writeJsonAtomic } from "../../trace/atomic-write.ts"
import { loadSource, methodsOf, type Source, SourceError } from "../../../bench/eval/sources.ts"
import { collectRows } from "../../../bench/report/collect.ts"
import { renderTable } from "../../../bench/report/table.ts"
import { ExitCode } from "../exit-codes.ts"
import { resolveModelLayer } from "../model-option.ts"
import { isFailure } from "../../failure.ts"
import { BadInput, choiceOption, intOption, numberOption, type ParsedCommand, runCommand, UsageError } from "../options.ts"
import { runProgram } from "../run-program.ts"
import { evaluateFac, facPrompt } from "../../../bench/eval/fac.ts"
import { checkModelPresent, MODEL_DEFAULTS } from "../../llm/spec.ts"

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
  --fac                     also judge FAC (StableToolBench-MirrorAPI's final-answer correctness): the prompt of
                            toolbench/tooleval/fac_eval.py from --stb on the query and the final answer only,
                            one Solved/Unsolved label per task, shown beside the pass rate (needs --stb)
  --win-statuses <s>        how a win round gets the answers' statuses: rejudge (check_is_solved on both
                            answers in every round; default), pass-labels (ToolBench's eval_preference.py:
                            the per-task pass labels, majority of the K runs with coin tosses, decide first,
                            then the stored statuses) or stabletoolbench (theirs with its pass-rate CSVs found:
                            the same pass-label step, then a re-judge)
  --force                   judge again even where labels of the same settings are stored (labels of other
                            settings, texts, --seed or --k, are always made anew; the old ones are set aside
                            beside them as <task>.json.before-<time>)
  --out <dir>               write eval/ here instead of into the run directory (for read-only folders);
                            \`smurfs compare <dir>\` then shows these labels
  --queue <redis://...>     hand each judge decision to \`smurfs worker\` processes through a BullMQ queue
                            on Redis (each judges with its own server of the judge model, or its --model);
                            the decisions come back through the queue and are stored here as without it
  --json                    print the result rows as JSON instead of the table
  -h, --help                show this help

exit codes: 0 judged, 1 every judge decision failed (unreadable replies), 2 bad usage, 3 bad input
(run directory, judge spec, --out, --stb), 4 the judge's model server (or the queue) unavailable,
130 interrupted (the labels judged so far are kept)`

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
  winStatuses: WinStatuses
  force: boolean
}) =>
  Effect.gen(function* () {
    const { source, store, judge, k, concurrency, prompts, seed, decider } = args
    console.error(`judge texts: ${prompts.source === "smurfs" ? "our own wording of ToolEval's rules" : `ToolEval's template from ${prompts.source.slice("stabletoolbench:".length)}`}`)
    const bar = progress(`pass (${judge})`)
    const pass = yield* evaluatePass(source.entries, { store, judge, k, concurrency, prompts, seed, decider, force: args.force, onProgress: bar.update }).pipe(Effect.ensuring(Effect.sync(bar.stop)))
    report("pass", pass)
    yield* someDecisions("pass", judge, pass)
    if (!args.reference) return
    for (const method of methodsOf(source)) {
      const referenceMethod = pickReferenceMethod(args.reference, method, args.referenceMethod)
      const referenceName = `${resolve(args.reference.dir).split("/").pop()}-${referenceMethod}`
      const winBar = progress(`win ${method} vs ${referenceName}`)
      const win = yield* evaluateWin(
        source.entries.filter((e) => e.method === method),
        args.reference.entries.filter((e) => e.method === referenceMethod),
        { store, judge, k, concurrency, seed, prompts, decider, force: args.force, statuses: args.winStatuses, referenceName, referenceSource: resolve(args.reference.dir), referenceMethod, referenceInStore: resolve(args.reference.dir) === resolve(store), onProgress: winBar.update }
      ).pipe(Effect.ensuring(Effect.sync(winBar.stop)))
      report(`win ${method}`, win)
      yield* someDecisions(`win ${method}`, judge, win)
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
  queue: { type: "string" },
  fac: { type: "boolean" },
  force: { type: "boolean" },
  "win-statuses": { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "eval", help: HELP, options: OPTIONS } as const

export const run = (argv: Array<string>): Promise<number> => runCommand(COMMAND, argv, ({ values }) => evaluate(values))

const evaluate = (parsed: ParsedCommand<typeof OPTIONS>["values"]): Promise<number> => {
  if (!parsed.run || !parsed.judge) throw new UsageError(`${!parsed.run ? "--run <dir>" : "--judge <model spec>"} is required`)
  let options
  try {
    const k = positiveInt("k", parsed.k, EVAL_DEFAULTS.k)
    if (k > MAX_JUDGE_RUNS) throw new UsageError(`--k is at most ${MAX_JUDGE_RUNS} judge runs (got ${k})`)
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
    const stb = stbDirOf(parsed.stb)
    const prompts = judgePrompts(stb)
    const winStatuses = choiceOption("win-statuses", parsed["win-statuses"], WIN_STATUSES, "rejudge") as WinStatuses
    if (parsed.fac && stb === undefined) throw new UsageError(`--fac sends the prompt of StableToolBench's ${STB_FILES.facEval}: give --stb <checkout> (or ${STB_ENV})`)
    if (parsed.fac && parsed.queue !== undefined) throw new UsageError("--fac is judged in this process: run it without --queue")
    const fac = parsed.fac && stb !== undefined ? facPrompt(stb) : undefined
    options = { source, reference, referenceMethod: parsed["reference-method"], store: parsed.out ?? parsed.run, judge: parsed.judge, k, concurrency, seed, prompts, winStatuses, fac, force: parsed.force === true }
  } catch (e) {
    // a failure that says its kind is reported by it; a file that cannot be read or parsed is bad input
    if (isFailure(e)) throw e
    console.error(`smurfs eval: ${(e as Error).message}`)
    return Promise.resolve(ExitCode.BadInput)
  }
  // As in `smurfs bench`: Ollama serves OLLAMA_NUM_PARALLEL requests at once; other servers get one slot per judged task.
  const judgeLayer = resolveModelLayer(parsed.judge, {
    concurrency: parsed.judge.startsWith("ollama:") ? undefined : options.concurrency,
    temperature: numberOption("temperature", parsed.temperature, 0, 2),
    numCtx: intOption("num-ctx", parsed["num-ctx"])
  })
  return runProgram(evalProgram({ ...options, runDir: parsed.run, json: parsed.json === true, queue: parsed.queue, judgeLayer }), EVAL_EDGE)
}

/** How `smurfs eval` meets the process: an interruption keeps what was judged. */
export const EVAL_EDGE = {
  command: "eval",
  interrupted: () => console.error("smurfs eval: interrupted; the labels judged so far are kept, run the same command to resume")
} as const

/**
 * The whole eval once its input is read: the label folder's pointer (with --out), the decisions (here
 * with `judgeLayer`, or by the workers of `queue`), then the table; it succeeds with the exit code.
 */
export const evalProgram = (args: Omit<Parameters<typeof program>[0], "decider"> & {
  readonly runDir: string
  readonly json: boolean
  readonly queue: string | undefined
  /** With --fac: the FAC prompt (fac_eval.py) judged after the pass labels. */
  readonly fac?: ReturnType<typeof facPrompt> | undefined
  readonly judgeLayer: Layer.Layer<LanguageModel, InvalidModelSpec>
}) => {
  // a misspelled judge fails here, before any label or pointer is written (with --queue the judge is the workers')
  const present = args.queue === undefined ? checkModelPresent(args.judge) : Effect.void
  const pointer = resolve(args.store) === resolve(args.runDir) ? Effect.void : writeJsonAtomic(join(args.store, EVAL_SOURCE_FILE), { source: resolve(args.runDir) })
  const queue = args.queue
  const evaluation: Effect.Effect<void, Effect.Error<ReturnType<typeof program>> | QueueUnavailable | InvalidModelSpec | MissingPeerPackage> =
    queue === undefined
      ? Effect.gen(function* () {
          yield* program({ ...args, decider: inProcessDecider(args.prompts) })
          if (args.fac) {
            const fac = yield* evaluateFac(args.source.entries, { store: args.store, judge: args.judge, prompt: args.fac, concurrency: args.concurrency, force: args.force })
            console.error(`fac: ${fac.judged} decisions made, ${fac.kept} kept from earlier (the prompt of ${STB_FILES.facEval})`)
          }
        }).pipe(Effect.provide(args.judgeLayer))
      : // the judge model is the workers': nothing here talks to it
        Effect.scoped(
          Effect.flatMap(loadWithPeers(QUEUE_PEERS, () => import("../../../bench/queue/judge-queue.ts")), ({ makeQueueDecider }) =>
            Effect.flatMap(makeQueueDecider({ ...QUEUE_DEFAULTS, queueUrl: queue }), (decider) => program({ ...args, decider }))
          )
        )
  // one writer per label folder, as for a bench run: a second eval with the same judge would judge everything again;
  // the temp files of an eval that was killed mid-write are removed once the folder is ours
  const labels = join(args.store, "eval", slug(args.judge))
  const locked = Effect.scoped(
    Effect.gen(function* () {
      yield* acquireRunLock(labels, "smurfs eval with this judge", "label folder")
      removeStrayTemps(labels)
      yield* evaluation
    })
  )
  return Effect.andThen(present, Effect.andThen(pointer, locked)).pipe(
    Effect.map(() => {
      const rows = collectRows([args.store]).filter((r) => r.judge === slug(args.judge))
      console.log(args.json ? JSON.stringify({ runDir: resolve(args.runDir), store: resolve(args.store), judge: args.judge, rows }, null, 2) : renderTable(rows))
      return ExitCode.Ok
    })
  )
}
