// Judge a whole source: K pass labels per task and, against a reference, K win rounds per task; resumable.
import { renameSync } from "node:fs"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { DEFAULT_PROFILE } from "../../src/agents/profile.ts"
import type { FailureKind } from "../../src/failure.ts"
import type { ProviderError } from "../../src/llm/errors.ts"
import type { LanguageModel } from "../../src/llm/language-model.ts"
import { writeJsonAtomic } from "../../src/trace/atomic-write.ts"
import type { RunDirError } from "../../src/trace/fs-problem.ts"
import { redactText, redactValue } from "../../src/trace/redact.ts"
import { runOf } from "../run-format.ts"
import type { JudgeInput } from "./judge-input.ts"
import { type Decider, inProcessDecider, type PassJob, type RoundJob } from "./judge-job.ts"
import { type JudgePrompts, smurfsJudgePrompts } from "./judge-prompts.ts"
import {
  type AnswerStatus,
  PassLabels,
  passLabelsPath,
  referencePassPath,
  WinVerdicts,
  winVerdictsPath
} from "./labels.ts"
import { hashSeed, rngFor } from "./rng.ts"
import { readJsonIf } from "./store.ts"
import { passLabel } from "./win-rate.ts"

/** The profile field of a label file: written only when it is not the default, so older files read the same. */
const profileField = (profile: string | undefined) =>
  profile !== undefined && profile !== DEFAULT_PROFILE ? { profile } : {}

/** Defaults of an evaluation, in one place. */
export const EVAL_DEFAULTS = { k: 3, concurrency: 4, seed: 0 } as const

export interface PassOptions<R = LanguageModel, E = ProviderError> {
  /** Where `eval/` is written: the run directory itself, or another folder for read-only sources. */
  readonly store: string
  /** The judge's model spec; its slug names the label folder so judges never mix. */
  readonly judge: string
  /** Judge runs per task (ToolEval's evaluate_times). */
  readonly k?: number | undefined
  /** Tasks judged at the same time. */
  readonly concurrency?: number | undefined
  /** Called after each task with the tasks done so far. */
  readonly onProgress?: ((done: number, total: number) => void) | undefined
  /** Where labels go; the default is the pass folder of `store`. Used to keep a reference's labels apart. */
  readonly pathOf?: ((input: JudgeInput) => string) | undefined
  /** The judge's texts: ToolEval's (--stb) or ours (the default). */
  readonly prompts?: JudgePrompts | undefined
  /** Base seed: judge run r samples with its own seed derived from it, and shuffles win rounds with it. */
  readonly seed?: number | undefined
  /** Where the judge decisions are made: by default here, with the LanguageModel in context; `smurfs eval --queue` gives the queue's. */
  readonly decider?: Decider<R, E> | undefined
  /** Judge again even where labels of the same settings are stored (the stored ones are set aside, not lost). */
  readonly force?: boolean | undefined
  /** The profile of the run whose answers are judged (run.json's `--profile`); `improved` when not given. */
  readonly profile?: string | undefined
}

/**
 * Whether stored labels were made with the settings that decide them now: the judge (its folder), the
 * texts, K, the seed (each run's recorded seed is derived from it) and the profile of the judged run.
 * Labels from before a field was recorded are taken as made with its default.
 */
const sameSettings = (
  stored: {
    readonly prompts?: string | undefined
    readonly k?: number | undefined
    readonly profile?: string | undefined
  },
  runs: Readonly<Record<string, { readonly seed?: number | undefined }>>,
  want: { readonly prompts: string; readonly k: number; readonly seed: number; readonly profile: string | undefined }
): boolean =>
  (stored.prompts ?? "smurfs") === want.prompts &&
  (stored.profile ?? DEFAULT_PROFILE) === (want.profile ?? DEFAULT_PROFILE) &&
  (stored.k === undefined || stored.k === want.k) &&
  Object.entries(runs).every(([r, run]) => run.seed === undefined || run.seed === judgeSeed(want.seed, Number(r)))

/**
 * Labels made with other settings are moved beside the file (`<task>.json.before-<time>`, which no
 * report reads) so that new labels never mix with them and nothing judged is lost.
 */
let asides = 0
const setAside = (path: string) =>
  Effect.sync(() => {
    try {
      // (the counter keeps two set-asides of one file in the same millisecond apart)
      renameSync(path, `${path}.before-${new Date().toISOString().replace(/[:.]/g, "-")}-${process.pid}-${asides++}`)
    } catch {
      // already gone: nothing to keep
    }
  })

/**
 * The sampling seed of judge run (or win round) r. ToolEval's K runs differ because its judge
 * samples at temperature 0.2; each of ours gets its own seed so that they differ too, reproducibly.
 */
export const judgeSeed = (seed: number, run: number): number =>
  hashSeed(`${seed}\u0000judge run\u0000${run}`) & 0x7fffffff

export interface EvalSummary {
  /** Judge decisions made now (rules included); existing ones are not counted. */
  readonly judged: number
  /** Decisions found on disk and kept. */
  readonly kept: number
  /** Tasks whose judge reply stayed malformed; they have no label for that run and can be retried. */
  readonly failed: ReadonlyArray<{ taskId: string; method: string; group: string; error: string }>
}

type Failure = EvalSummary["failed"][number]

/** Every judge decision asked for failed and none is on disk: there is nothing to show, and the judge is the problem. */
export class NoJudgeDecisions extends Data.TaggedError("NoJudgeDecisions")<{
  readonly what: string
  readonly judge: string
  readonly failed: EvalSummary["failed"]
}> {
  get kind(): FailureKind {
    return "failed"
  }
  override get message() {
    const first = this.failed[0]
    return (
      `no ${this.what} judge decision could be made: all ${this.failed.length} failed` +
      (first ? ` (the first, ${first.method}/${first.group}/${first.taskId}: ${first.error})` : "") +
      `. Check the judge with \`smurfs doctor --model ${this.judge}\` (a model that cannot follow the judge's reply format fails so), then run the same command again.`
    )
  }
}

/** Fails with NoJudgeDecisions when every decision of `summary` failed and none was made or kept. */
export const someDecisions = (
  what: string,
  judge: string,
  summary: EvalSummary
): Effect.Effect<EvalSummary, NoJudgeDecisions> =>
  summary.judged + summary.kept === 0 && summary.failed.length > 0
    ? Effect.fail(new NoJudgeDecisions({ what, judge, failed: summary.failed }))
    : Effect.succeed(summary)

// without a decider, R is LanguageModel (the default of the options' type parameter)
const deciderOf = <R, E>(options: PassOptions<R, E>): Decider<R, E> =>
  options.decider ?? (inProcessDecider(options.prompts ?? smurfsJudgePrompts()) as unknown as Decider<R, E>)

/** K pass labels for every entry; labels already on disk are kept, so an interrupted eval resumes. */
export const evaluatePass = <R = LanguageModel, E = ProviderError>(
  entries: ReadonlyArray<JudgeInput>,
  options: PassOptions<R, E>
): Effect.Effect<EvalSummary, E | RunDirError, R> =>
  Effect.gen(function* () {
    const k = options.k ?? EVAL_DEFAULTS.k
    const pathOf =
      options.pathOf ??
      ((e: JudgeInput) => passLabelsPath(options.store, options.judge, e.method, e.group, e.taskId, runOf(e)))
    let judged = 0,
      kept = 0,
      done = 0
    const failed: Array<Failure> = []
    const decider = deciderOf(options)
    const prompts = options.prompts ?? smurfsJudgePrompts()
    yield* Effect.forEach(
      entries,
      (entry) =>
        Effect.gen(function* () {
          const path = pathOf(entry)
          const fresh: PassLabels = {
            taskId: entry.taskId,
            method: entry.method,
            group: entry.group,
            judge: options.judge,
            ...(options.prompts ? { prompts: options.prompts.source } : {}),
            k,
            ...profileField(options.profile),
            ...(runOf(entry) > 0 ? { agentRun: runOf(entry) } : {}),
            runs: {}
          }
          const stored = readJsonIf(path, PassLabels)
          const reusable =
            stored !== undefined &&
            !options.force &&
            sameSettings(stored, stored.runs, {
              prompts: prompts.source,
              k,
              seed: options.seed ?? EVAL_DEFAULTS.seed,
              profile: options.profile
            })
          if (stored !== undefined && !reusable) yield* setAside(path)
          const labels: PassLabels = reusable ? stored : fresh
          for (let r = 0; r < k; r++) {
            if (labels.runs[String(r)]) {
              kept++
              continue
            }
            const job: PassJob = {
              kind: "pass",
              judge: options.judge,
              prompts: prompts.source,
              seed: judgeSeed(options.seed ?? EVAL_DEFAULTS.seed, r),
              input: entry
            }
            const result = yield* decider.pass(job)
            if ("error" in result) {
              failed.push({
                taskId: entry.taskId,
                method: entry.method,
                group: entry.group,
                error: redactText(result.error)
              })
              continue
            }
            // label files outlive the eval: a judge that echoed a key is stored redacted
            labels.runs[String(r)] = redactValue(result.decision)
            judged++
            yield* writeJsonAtomic({ root: options.store, path }, labels)
            if (decider.settled) yield* decider.settled(job)
          }
          options.onProgress?.(++done, entries.length)
        }),
      { concurrency: options.concurrency ?? EVAL_DEFAULTS.concurrency, discard: true }
    )
    return { judged, kept, failed }
  })

export interface WinOptions<R = LanguageModel, E = ProviderError> extends Omit<PassOptions<R, E>, "pathOf"> {
  /** Names the reference in paths and files (its directory and method). */
  readonly referenceName: string
  readonly referenceSource: string
  readonly referenceMethod: string
  /** The profile of the reference's run; `improved` when not given. */
  readonly referenceProfile?: string | undefined
  /** The reference's answers live in `store` too (a method of the same run): share its pass labels instead of judging them again. */
  readonly referenceInStore?: boolean | undefined
  /**
   * How a round gets the answers' statuses. `rejudge` (the default): check_is_solved on both answers in
   * every round, nothing taken from the pass labels. `pass-labels`: ToolBench's eval_preference.py with
   * use_pass_rate: the per-task pass labels decide first (passed beats failed: the majority of the K runs,
   * Unsure and ties coin tosses), then the stored statuses of the same judge run. `stabletoolbench`: their
   * eval_preference.py as it runs when it finds the pass-rate CSVs: the same pass-label step, then a
   * re-judge (the is_solved column it reads back is a dict's text, which maps to no status).
   */
  readonly statuses?: WinStatuses | undefined
}

export const WIN_STATUSES = ["rejudge", "pass-labels", "stabletoolbench"] as const
export type WinStatuses = (typeof WIN_STATUSES)[number]

/** Reads the pass labels of the given file, by run. */
const statusOf = (path: string) => readJsonIf(path, PassLabels)?.runs ?? {}

/**
 * K win rounds per task of `candidates` (one method) against the reference's answers (one method).
 * The reference's own pass labels are judged first and kept beside the verdicts. A task answered
 * by only one side is decided without the judge.
 */
export const evaluateWin = <R = LanguageModel, E = ProviderError>(
  candidates: ReadonlyArray<JudgeInput>,
  references: ReadonlyArray<JudgeInput>,
  options: WinOptions<R, E>
): Effect.Effect<EvalSummary, E | RunDirError, R> =>
  Effect.gen(function* () {
    const k = options.k ?? EVAL_DEFAULTS.k
    const seed = options.seed ?? EVAL_DEFAULTS.seed
    const method = candidates[0]?.method ?? ""
    const refPath = (e: JudgeInput) =>
      options.referenceInStore
        ? passLabelsPath(options.store, options.judge, e.method, e.group, e.taskId, runOf(e))
        : referencePassPath(options.store, options.judge, options.referenceName, e.method, e.group, e.taskId, runOf(e))
    const candPath = (e: JudgeInput) =>
      passLabelsPath(options.store, options.judge, e.method, e.group, e.taskId, runOf(e))
    const groups = new Set(candidates.map((c) => c.group))
    const refs = references.filter((r) => groups.has(r.group))
    const mode: WinStatuses = options.statuses ?? "rejudge"
    // the reference's pass rate, as ToolEval's workflow computes it before a preference run (the pass-label modes read it)
    const refSummary = yield* evaluatePass(refs, {
      ...options,
      profile: options.referenceProfile,
      pathOf: refPath,
      onProgress: undefined
    })
    // agent run r of a task is set against the reference's run r, else its run 0 (a reference of one run)
    const key = (e: { group: string; taskId: string; run?: number | undefined }) =>
      `${e.group}\u0000${e.taskId}\u0000${runOf(e)}`
    const candByKey = new Map(candidates.map((c) => [key(c), c]))
    const refByKey = new Map(refs.map((r) => [key(r), r]))
    const refFor = (taskKey: string) => {
      const [group, taskId] = taskKey.split("\u0000") as [string, string]
      return refByKey.get(taskKey) ?? refByKey.get(key({ group, taskId }))
    }
    // the reference's other runs are rounds only where the candidate has that run
    const keys = [
      ...new Set([
        ...candByKey.keys(),
        ...[...refByKey.keys()].filter((k) => k.endsWith("\u00000") || candByKey.has(k))
      ])
    ].sort()
    let judged = 0,
      kept = 0,
      done = 0
    const failed: Array<Failure> = [...refSummary.failed]
    const decider = deciderOf(options)
    const prompts = options.prompts ?? smurfsJudgePrompts()
    yield* Effect.forEach(
      keys,
      (taskKey) =>
        Effect.gen(function* () {
          const [group, taskId, agentRunText] = taskKey.split("\u0000") as [string, string, string]
          const agentRun = Number(agentRunText)
          const candidate = candByKey.get(taskKey)
          const reference = refFor(taskKey)
          const path = winVerdictsPath(
            options.store,
            options.judge,
            options.referenceName,
            method,
            group,
            taskId,
            agentRun
          )
          const fresh: WinVerdicts = {
            taskId,
            method,
            group,
            judge: options.judge,
            reference: {
              source: options.referenceSource,
              method: options.referenceMethod,
              ...profileField(options.referenceProfile)
            },
            ...(options.prompts ? { prompts: options.prompts.source } : {}),
            ...profileField(options.profile),
            ...(agentRun > 0 ? { agentRun } : {}),
            statuses: mode,
            k,
            rounds: {}
          }
          const stored = readJsonIf(path, WinVerdicts)
          // rounds decided another way (files without the field used the pass labels) or with other settings are not this eval's
          const reusable =
            stored !== undefined &&
            !options.force &&
            (stored.statuses ?? "pass-labels") === mode &&
            (stored.reference.profile ?? DEFAULT_PROFILE) === (options.referenceProfile ?? DEFAULT_PROFILE) &&
            sameSettings(stored, stored.rounds, { prompts: prompts.source, k, seed, profile: options.profile })
          if (stored !== undefined && !reusable) yield* setAside(path)
          const verdicts: WinVerdicts = reusable ? stored : fresh
          const candStatus = candidate ? statusOf(candPath(candidate)) : {}
          const refStatus = reference ? statusOf(refPath(reference)) : {}
          // ToolEval's per-task pass labels, as in its pass-rate CSV (one per side, seeded coin tosses)
          const labelOf = (runs: Record<string, { label: AnswerStatus }>, side: string) =>
            Object.keys(runs).length === 0
              ? undefined
              : passLabel(
                  Array.from({ length: k }, (_, r) => runs[String(r)]?.label),
                  rngFor(seed, "pass label", side, method, group, taskId, ...(agentRun > 0 ? [agentRun] : []))
                )
          for (let r = 0; r < k; r++) {
            if (verdicts.rounds[String(r)]) {
              kept++
              continue
            }
            // plain data (no undefined fields), so that it reads back the same from the queue
            const job: RoundJob = JSON.parse(
              JSON.stringify({
                kind: "round",
                judge: options.judge,
                prompts: prompts.source,
                seed: judgeSeed(seed, r),
                candidate,
                reference,
                rng: { seed, key: [method, group, taskId, r, ...(agentRun > 0 ? [agentRun] : [])] },
                ...(mode === "rejudge"
                  ? {}
                  : {
                      candidatePassed: labelOf(candStatus, "candidate"),
                      referencePassed: labelOf(refStatus, "reference")
                    }),
                ...(mode === "pass-labels"
                  ? { candidateStatus: candStatus[String(r)]?.label, referenceStatus: refStatus[String(r)]?.label }
                  : { rejudge: true })
              })
            )
            const round = yield* decider.round(job)
            if ("error" in round) {
              failed.push({ taskId, method, group, error: redactText(round.error) })
              continue
            }
            verdicts.rounds[String(r)] = redactValue(round.decision)
            judged++
            yield* writeJsonAtomic({ root: options.store, path }, verdicts)
            if (decider.settled) yield* decider.settled(job)
          }
          options.onProgress?.(++done, keys.length)
        }),
      { concurrency: options.concurrency ?? EVAL_DEFAULTS.concurrency, discard: true }
    )
    // counts are of rounds; the reference's pass labels are a means to them
    return { judged, kept, failed }
  })
