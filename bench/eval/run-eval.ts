// An eval from its settings: the sources it judges, the label folder (its pointer, its one writer), the pass and
// win decisions (here or by queue workers), FAC, and the result rows as a value. The CLI fills the settings and prints.
import "../sim/provider.ts"
import { existsSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { z } from "zod"
import type { FailureKind } from "../../src/failure.ts"
import type { InvalidModelSpec, ProviderError } from "../../src/llm/errors.ts"
import type { LanguageModel } from "../../src/llm/language-model.ts"
import { checkModelPresent, type ModelOptions, modelLayer } from "../../src/llm/spec.ts"
import { loadWithPeers, type MissingPeerPackage, QUEUE_PEERS } from "../../src/peer-packages.ts"
import { STB_ENV, STB_FILES } from "../../src/text/stabletoolbench-files.ts"
import { writeJsonAtomic } from "../../src/trace/atomic-write.ts"
import { connectionOf, QUEUE_DEFAULTS, type QueueUnavailable } from "../queue/connection.ts"
import { collectRows, type Row } from "../report/collect.ts"
import { removeStrayTemps } from "../run-dir.ts"
import { RunConfig, runConfigPath } from "../run-format.ts"
import { acquireRunLock } from "../run-lock.ts"
import { EVAL_DEFAULTS, type EvalSummary, evaluatePass, evaluateWin, someDecisions, WIN_STATUSES } from "./evaluate.ts"
import { evaluateFac, type FacPrompt, type FacSummary, facPrompt } from "./fac.ts"
import { type Decider, inProcessDecider } from "./judge-job.ts"
import { type JudgePrompts, judgePrompts } from "./judge-prompts.ts"
import { EVAL_SOURCE_FILE, MAX_JUDGE_RUNS, slug } from "./labels.ts"
import { loadSource, methodsOf, type Source, SourceError, sourceProfile } from "./sources.ts"
import { readJsonIf } from "./store.ts"

/** Tasks in flight when the decisions go to a queue: enough to keep several workers busy. */
export const QUEUE_CONCURRENCY = 64

const count = z.number().int().positive()

/** The settings of an eval, as one zod schema: the CLI fills them from flags and smurfs.config.json, the library and tests build them. */
export const EvalSettings = z
  .object({
    /** The run directory (or StableToolBench folder of converted predictions or raw answers) to judge. */
    run: z.string().min(1),
    /** The judge's model spec; its slug names the label folder. */
    judge: z.string().min(1),
    /** Judge runs (pass) and rounds (win) per task. */
    k: count.default(EVAL_DEFAULTS.k),
    /** A reference run to compute the win rate against. */
    reference: z.string().optional(),
    /** The reference's method when it has several; default its only one, else the method of the same name. */
    referenceMethod: z.string().optional(),
    /** Judge only these methods. */
    methods: z.array(z.string()).optional(),
    /** Judge only these groups. */
    groups: z.array(z.string()).optional(),
    /** Tasks judged at the same time; default EVAL_DEFAULTS.concurrency, with a queue QUEUE_CONCURRENCY. */
    concurrency: count.optional(),
    /** Base seed: judge run r samples with its own seed; win rounds shuffle the answer order with it. */
    seed: z.number().int().min(0).default(EVAL_DEFAULTS.seed),
    /** The judge's sampling temperature where a judge prompt sets none. */
    temperature: z.number().min(0).max(2).optional(),
    /** The judge's context window in tokens. */
    numCtx: count.optional(),
    /** The judge's thinking (reasoning models): on, off or a level; default the server's. */
    think: z.union([z.boolean(), z.enum(["low", "medium", "high"])]).optional(),
    /** The judge's per-request timeout in milliseconds. */
    timeoutMs: count.optional(),
    /** Where eval/ is written instead of the run directory (for read-only folders). */
    out: z.string().optional(),
    /** StableToolBench's checkout, whose ToolEval template and function schemas the judge sends; none: our own wording. */
    stb: z.string().optional(),
    /** Also judge FAC (StableToolBench-MirrorAPI's final-answer correctness), with the prompt of the stb checkout. */
    fac: z.boolean().default(false),
    /** A Redis URL: each decision goes to `smurfs worker` processes. */
    queue: z.string().optional(),
    /** Judge again where labels of the same settings are stored. */
    force: z.boolean().default(false),
    /** How a win round gets the answers' statuses. */
    winStatuses: z.enum(WIN_STATUSES).default("rejudge")
  })
  .superRefine((s, ctx) => {
    if (s.k > MAX_JUDGE_RUNS)
      ctx.addIssue({ code: "custom", message: `--k is at most ${MAX_JUDGE_RUNS} judge runs (got ${s.k})` })
    if (s.fac && s.stb === undefined)
      ctx.addIssue({
        code: "custom",
        message: `--fac sends the prompt of StableToolBench's ${STB_FILES.facEval}: give --stb <checkout> (or ${STB_ENV})`
      })
    else if (s.fac && s.queue !== undefined)
      ctx.addIssue({ code: "custom", message: "--fac is judged in this process: run it without --queue" })
    if (
      s.queue !== undefined &&
      (s.temperature !== undefined || s.numCtx !== undefined || s.think !== undefined || s.timeoutMs !== undefined)
    )
      ctx.addIssue({
        code: "custom",
        message:
          "--temperature, --num-ctx, --think and --timeout set the judge model of this process; with --queue the workers' judge decides: run the workers with --model <spec> and their server's settings, or judge here without --queue"
      })
  })
  .transform((s) => ({
    ...s,
    concurrency: s.concurrency ?? (s.queue === undefined ? EVAL_DEFAULTS.concurrency : QUEUE_CONCURRENCY)
  }))

export type EvalSettings = z.infer<typeof EvalSettings>
/** What a caller gives: every field with a default may be left out. */
export type EvalSettingsInput = z.input<typeof EvalSettings>

/** Settings that cannot be used together; the message names each problem. */
export class InvalidEvalSettings extends Error {
  override readonly name = "InvalidEvalSettings"
}

/** Validate settings and fill in the defaults; throws InvalidEvalSettings naming what is wrong. */
export const evalSettings = (input: EvalSettingsInput): EvalSettings => {
  const parsed = EvalSettings.safeParse(input)
  if (!parsed.success)
    throw new InvalidEvalSettings(
      parsed.error.issues
        .map((i) => (i.path.length > 0 && i.code !== "custom" ? `${i.path.join(".")}: ${i.message}` : i.message))
        .join("; ")
    )
  return parsed.data
}

/** An --out that cannot hold the labels; the message says what to give. */
export class LabelFolderError extends Data.TaggedError("LabelFolderError")<{ readonly message: string }> {
  get kind(): FailureKind {
    return "bad-input"
  }
}

/** A reference that has no method to set against a judged one; the message says which to choose. */
export class ReferenceMethodError extends Error {
  override readonly name = "ReferenceMethodError"
  readonly kind = "usage" as const
}

/** The reference's method a judged method is set against: the one asked for, its only one, or the one of the same name. */
export const pickReferenceMethod = (reference: Source, method: string, wanted: string | undefined): string => {
  const methods = methodsOf(reference)
  if (wanted !== undefined) {
    if (!methods.includes(wanted))
      throw new ReferenceMethodError(
        `the reference has no method "${wanted}" (it has: ${methods.join(", ") || "none"})`
      )
    return wanted
  }
  if (methods.length === 1) return methods[0]!
  if (methods.includes(method)) return method
  throw new ReferenceMethodError(
    `the reference has several methods (${methods.join(", ")}); choose one with --reference-method`
  )
}

/** An eval's input, read and checked: what is judged, against what, with which texts, and where the labels go. */
export interface EvalInput {
  readonly settings: EvalSettings
  /** The entries to judge (--method/--group applied). */
  readonly source: Source
  readonly reference: Source | undefined
  /** The folder eval/ is written to: --out, else the run directory. */
  readonly store: string
  readonly prompts: JudgePrompts
  /** With fac: the FAC prompt (fac_eval.py) judged after the pass labels. */
  readonly fac: FacPrompt | undefined
}

/**
 * Read what an eval judges and check it before anything is judged: the queue's URL, the sources (a skipped
 * invalid record is told to `warn`), the reference's methods, --out, the judge texts. Throws what is wrong:
 * a SourceError, LabelFolderError or QueueUrlError, a ReferenceMethodError, or an unreadable checkout's error.
 */
export const prepareEval = (settings: EvalSettings, warn: (line: string) => void = () => {}): EvalInput => {
  if (settings.queue !== undefined) connectionOf(settings.queue) // a bad URL is bad input, before anything is judged
  // a benchmark that scores its records as they are written (τ²: the reward) has nothing for ToolEval's judge
  const benchmark = readJsonIf(runConfigPath(settings.run), RunConfig)?.options["benchmark"]
  if (typeof benchmark === "string" && benchmark !== "stabletoolbench")
    throw new SourceError({
      message: `${settings.run} is a ${benchmark} run: its conversations were scored as they ran (τ²'s reward, stored as the judge "${benchmark}"). See them with \`smurfs compare ${settings.run}\` or \`smurfs results ${settings.run}\`.`
    })
  const loaded = loadSource(settings.run)
  const keep = (e: { method: string; group: string }) =>
    (!settings.methods || settings.methods.includes(e.method)) &&
    (!settings.groups || settings.groups.includes(e.group))
  const source: Source = { ...loaded, entries: loaded.entries.filter(keep) }
  for (const problem of loaded.invalid) warn(`warning: skipped an invalid task record: ${problem}`)
  if (source.entries.length === 0)
    throw new SourceError({
      message: `${settings.run} has no answered tasks${settings.methods || settings.groups ? " for the chosen --method/--group" : ""}.`
    })
  const reference = settings.reference ? loadSource(settings.reference) : undefined
  if (reference) for (const m of methodsOf(source)) pickReferenceMethod(reference, m, settings.referenceMethod)
  if (settings.out !== undefined && existsSync(settings.out) && !statSync(settings.out).isDirectory())
    throw new LabelFolderError({
      message: `--out ${settings.out} is a file; give a directory for the labels (it is created when missing)`
    })
  const prompts = judgePrompts(settings.stb)
  const fac = settings.fac && settings.stb !== undefined ? facPrompt(settings.stb) : undefined
  return { settings, source, reference, store: settings.out ?? settings.run, prompts, fac }
}

/** What an eval tells as it goes (the CLI shows it; the library may pass nothing). */
export interface EvalObserver {
  /** Judging starts (the label folder is this eval's), with these texts. */
  readonly started?: ((prompts: JudgePrompts) => void) | undefined
  /** A stage starts ("pass (<judge>)", "win <method> vs <reference>"); its progress in tasks, stopped at its end. */
  readonly stage?:
    | ((label: string) => { readonly update: (done: number, total: number) => void; readonly stop: () => void })
    | undefined
  /** A stage's decisions ("pass", "win <method>"). */
  readonly judged?: ((what: string, summary: EvalSummary) => void) | undefined
  /** The FAC labels. */
  readonly fac?: ((summary: FacSummary) => void) | undefined
  /** Something to tell the user before judging (the judge's server serves any model name, its window is small). */
  readonly warn?: ((text: string) => void) | undefined
}

/** What an eval ends with: the result rows of its judge, from the label folder. */
export interface EvalOutcome {
  readonly runDir: string
  readonly store: string
  readonly judge: string
  readonly rows: ReadonlyArray<Row>
}

/** The judge model's layer: Ollama serves OLLAMA_NUM_PARALLEL requests at once, other servers get one slot per judged task (as in bench). */
export const judgeLayerOf = (settings: EvalSettings): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  modelLayer(settings.judge, {
    concurrency: settings.judge.startsWith("ollama:") ? undefined : settings.concurrency,
    ...judgeModelOptions(settings)
  })

/** The judge model's options from the eval's flags (those the model check before judging reads too). */
export const judgeModelOptions = (settings: EvalSettings): ModelOptions => ({
  temperature: settings.temperature,
  numCtx: settings.numCtx,
  think: settings.think,
  timeoutMs: settings.timeoutMs
})

const noStage = { update: () => {}, stop: () => {} }

/** The pass labels, then each method's win rounds against the reference. */
const decide = <R, E>(input: EvalInput, decider: Decider<R, E>, observer: EvalObserver) =>
  Effect.gen(function* () {
    const { source, store, prompts, settings } = input
    const { judge, k, concurrency, seed, force } = settings
    observer.started?.(prompts)
    const bar = observer.stage?.(`pass (${judge})`) ?? noStage
    const profile = sourceProfile(source.dir)
    const pass = yield* evaluatePass(source.entries, {
      store,
      judge,
      k,
      concurrency,
      prompts,
      seed,
      decider,
      force,
      profile,
      onProgress: bar.update
    }).pipe(Effect.ensuring(Effect.sync(bar.stop)))
    observer.judged?.("pass", pass)
    yield* someDecisions("pass", judge, pass)
    const reference = input.reference
    if (!reference) return
    for (const method of methodsOf(source)) {
      const referenceMethod = pickReferenceMethod(reference, method, settings.referenceMethod)
      const referenceName = `${resolve(reference.dir).split("/").pop()}-${referenceMethod}`
      const winBar = observer.stage?.(`win ${method} vs ${referenceName}`) ?? noStage
      const win = yield* evaluateWin(
        source.entries.filter((e) => e.method === method),
        reference.entries.filter((e) => e.method === referenceMethod),
        {
          store,
          judge,
          k,
          concurrency,
          seed,
          prompts,
          decider,
          force,
          profile,
          referenceProfile: sourceProfile(reference.dir),
          statuses: settings.winStatuses,
          referenceName,
          referenceSource: resolve(reference.dir),
          referenceMethod,
          referenceInStore: resolve(reference.dir) === resolve(store),
          onProgress: winBar.update
        }
      ).pipe(Effect.ensuring(Effect.sync(winBar.stop)))
      observer.judged?.(`win ${method}`, win)
      yield* someDecisions(`win ${method}`, judge, win)
    }
  })

/**
 * The whole eval once its input is read: the label folder's pointer (with --out), the decisions (here with
 * the judge's layer, `judgeLayer` or the settings', or by the workers of the queue), FAC, then the rows.
 */
export const runEval = (
  input: EvalInput,
  options: {
    readonly observer?: EvalObserver | undefined
    readonly judgeLayer?: Layer.Layer<LanguageModel, InvalidModelSpec> | undefined
  } = {}
) => {
  const { settings, store } = input
  const observer = options.observer ?? {}
  // a misspelled judge fails here, before any label or pointer is written (with a queue the judge is the workers')
  const present =
    settings.queue === undefined
      ? Effect.tap(checkModelPresent(settings.judge, judgeModelOptions(settings)), (warnings) =>
          Effect.sync(() => {
            for (const warning of warnings) observer.warn?.(`${settings.judge}: ${warning}`)
          })
        )
      : Effect.void
  const pointer =
    resolve(store) === resolve(settings.run)
      ? Effect.void
      : writeJsonAtomic(join(store, EVAL_SOURCE_FILE), { source: resolve(settings.run) })
  const queue = settings.queue
  const evaluation: Effect.Effect<
    void,
    | Effect.Error<ReturnType<typeof decide<LanguageModel, ProviderError>>>
    | QueueUnavailable
    | InvalidModelSpec
    | MissingPeerPackage
  > =
    queue === undefined
      ? Effect.gen(function* () {
          yield* decide(input, inProcessDecider(input.prompts), observer)
          if (input.fac)
            observer.fac?.(
              yield* evaluateFac(input.source.entries, {
                store,
                judge: settings.judge,
                prompt: input.fac,
                concurrency: settings.concurrency,
                force: settings.force
              })
            )
        }).pipe(Effect.provide(options.judgeLayer ?? judgeLayerOf(settings)))
      : // the judge model is the workers': nothing here talks to it
        // (the queue's packages are optional peers, loaded only here)
        Effect.scoped(
          Effect.flatMap(
            loadWithPeers(QUEUE_PEERS, () => import("../queue/judge-queue.ts")),
            ({ makeQueueDecider }) =>
              Effect.flatMap(makeQueueDecider({ ...QUEUE_DEFAULTS, queueUrl: queue }), (decider) =>
                decide(input, decider, observer)
              )
          )
        )
  // one writer per label folder, as for a bench run: a second eval with the same judge would judge everything again;
  // the temp files of an eval that was killed mid-write are removed once the folder is ours
  const labels = join(store, "eval", slug(settings.judge))
  const locked = Effect.scoped(
    Effect.gen(function* () {
      yield* acquireRunLock(labels, "smurfs eval with this judge", "label folder", store, { note: observer.warn })
      removeStrayTemps(labels)
      yield* evaluation
    })
  )
  return Effect.andThen(present, Effect.andThen(pointer, locked)).pipe(
    Effect.map(
      (): EvalOutcome => ({
        runDir: resolve(settings.run),
        store: resolve(store),
        judge: settings.judge,
        rows: collectRows([store]).filter((r) => r.judge === slug(settings.judge))
      })
    )
  )
}
