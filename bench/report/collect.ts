// The rows of a comparison: one per source, judge, method and group, with pass and win rates and mean costs.

import { existsSync, readdirSync, statSync } from "node:fs"
import { basename, join, resolve } from "node:path"
import * as Data from "effect/Data"
import { DEFAULT_PROFILE } from "../../src/agents/profile.ts"
import type { FailureKind } from "../../src/failure.ts"
import { safeName } from "../../src/trace/file-names.ts"
import { type PassRate, passRate, type WinRate, winRate } from "../eval/aggregate.ts"
import { storedFac } from "../eval/fac.ts"
import { type JudgeInput, missCounts } from "../eval/judge-input.ts"
import {
  type AnswerStatus,
  EVAL_SOURCE_FILE,
  EvalSource,
  PassLabels,
  passLabelsPath,
  WinVerdicts
} from "../eval/labels.ts"
import { loadSource, sourceKind, sourceProfile } from "../eval/sources.ts"
import { InvalidStoredFile, readJsonChecked, readJsonIf } from "../eval/store.ts"
import { hasToolEvalResults, readToolEvalResults } from "../eval/tooleval-results.ts"
import { newerRunFormat, newerRunProblem } from "../run-dir.ts"
import { RunConfig, runConfigPath, runOf } from "../run-format.ts"
import { byTaskAndRun, padRounds, type RowSamples, winRounds } from "./samples.ts"

export interface Row {
  /** The directory the row comes from (its base name). */
  readonly source: string
  readonly method: string
  /** The run's profile (`--profile`) when it is not ours: "reference" runs the references' methods as they ran. */
  readonly profile?: string | undefined
  readonly model: string
  readonly group: string
  /** The judge's label folder, or "ToolEval" for ToolEval's published labels; empty when not judged. */
  readonly judge: string
  /** Which judge texts made the labels: "ToolEval" (its template, --stb), "ours" (our wording), or both. */
  readonly judgeTexts?: string | undefined
  /** Tasks with an answer or a give-up (the ones a judge can label). */
  readonly n: number
  /** Of those, the tasks this judge labelled (at least one run); the pass rate is over these only. */
  readonly judged: number
  /** Every task of the method and group: recorded, failed by the model server (`errors`), or planned and not run yet. */
  readonly total: number
  /** Tasks recorded as `error` (the model server failed; `smurfs bench --resume` redoes them). */
  readonly errors: number
  readonly pass?: PassRate | undefined
  /**
   * Win rate over the tasks both sides have (`n` of WinRate); a task only one side answered is not counted.
   * `incomplete` (only when something is missing): tasks judged in fewer rounds than K, and answered tasks with no round.
   */
  readonly win?: (WinRate & { readonly reference: string; readonly incomplete?: WinIncomplete | undefined }) | undefined
  /** Answered tasks of the row with no pass label of this judge (and texts); their ids, for the missing work. */
  readonly unjudgedTasks?: ReadonlyArray<string> | undefined
  /** Labelled tasks with fewer judge runs than K (each missing run scores 0, as in ToolEval). */
  readonly partialPass?:
    | { readonly k: number; readonly tasks: ReadonlyArray<{ readonly taskId: string; readonly runs: number }> }
    | undefined
  /** Mean per task, when the source records it. */
  readonly modelCalls?: number | undefined
  readonly promptTokens?: number | undefined
  readonly completionTokens?: number | undefined
  readonly toolCalls?: number | undefined
  readonly wallMs?: number | undefined
  /**
   * Of all tool calls of the row's tasks, the share nothing recorded or simulated (they failed, so the
   * pass rate counts them against the method); undefined when the source does not record misses.
   */
  readonly missRate?: number | undefined
  /** The calls behind `missRate`: missed and all. */
  readonly missedToolCalls?: number | undefined
  /** Of all tool calls of the row's tasks, the share a simulator answered (undefined when the records do not say). */
  readonly simulatedRate?: number | undefined
  readonly simulatedToolCalls?: number | undefined
  /** With `compare --allow-env-mismatch`: the row's run was served by another tool environment than the first run's. */
  readonly environmentMismatch?: ReadonlyArray<string> | undefined
  /** Tasks a guard of ours, not the method, ended (or ended the planning of), by guard; absent when none. */
  readonly guarded?: { readonly tasks: number; readonly byGuard: Readonly<Record<string, number>> } | undefined
  /** FAC (fac_eval.py's final-answer correctness) of this judge, over the tasks it labelled. */
  readonly fac?: { readonly rate: number; readonly n: number } | undefined
  /** The row's labels and costs task by task and run by run, for the statistics (`compare` leaves them out of --json). */
  readonly samples?: RowSamples | undefined
}

const dirs = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((d) => statSync(join(dir, d)).isDirectory())
        .sort()
    : []
const files = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .sort()
    : []

const mean = (values: ReadonlyArray<number | undefined>): number | undefined => {
  const present = values.filter((v): v is number => v !== undefined)
  return present.length === 0 ? undefined : present.reduce((a, b) => a + b, 0) / present.length
}

const misses = (entries: ReadonlyArray<JudgeInput>) => {
  const m = missCounts(entries)
  if (m.tasks === 0) return {}
  return {
    missedToolCalls: m.missedToolCalls,
    missRate: m.toolCalls === 0 ? 0 : m.missedToolCalls / m.toolCalls,
    ...simulatedShare(entries)
  }
}

/** The share of tool calls a simulator answered, over the entries whose records say (the environment ledger). */
const simulatedShare = (entries: ReadonlyArray<JudgeInput>) => {
  let simulated = 0,
    calls = 0
  for (const e of entries) {
    if (e.cost.simulatedToolCalls === undefined) continue
    simulated += e.cost.simulatedToolCalls
    calls += e.cost.toolCalls
  }
  return calls === 0 ? {} : { simulatedToolCalls: simulated, simulatedRate: simulated / calls }
}

/** The tasks a guard ended, counted per guard; nothing when none did. */
const guarded = (entries: ReadonlyArray<JudgeInput>) => {
  const byGuard: Record<string, number> = {}
  let tasks = 0
  for (const e of entries) {
    if (e.cost.guards === undefined || e.cost.guards.length === 0) continue
    tasks++
    for (const g of e.cost.guards) byGuard[g] = (byGuard[g] ?? 0) + 1
  }
  return tasks === 0 ? {} : { guarded: { tasks, byGuard } }
}

const costs = (entries: ReadonlyArray<JudgeInput>) => ({
  ...misses(entries),
  ...guarded(entries),
  modelCalls: mean(entries.map((e) => e.cost.modelCalls)),
  promptTokens: mean(entries.map((e) => e.cost.promptTokens)),
  completionTokens: mean(entries.map((e) => e.cost.completionTokens)),
  toolCalls: mean(entries.map((e) => e.cost.toolCalls)),
  wallMs: mean(entries.map((e) => e.cost.wallMs))
})

const groupBy = <A>(items: ReadonlyArray<A>, key: (a: A) => string) => {
  const out = new Map<string, Array<A>>()
  for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item])
  return out
}

/** Judge texts as a row names them: "ToolEval texts", "our texts". */
export const judgeTextsLabel = (texts: string): string => `${texts === "ours" ? "our" : texts} texts`

/** Which judge texts a label file names: "ToolEval" (its template, --stb) or "ours"; files from before this was recorded say nothing (they were ours). */
const textsOf = (prompts: string | undefined): string | undefined =>
  prompts === undefined ? undefined : prompts.startsWith("stabletoolbench:") ? "ToolEval" : "ours"

/** Whether a label file was made from answers of this profile (undefined: any; files without the field are of `improved`). */
export const ofProfile = (stored: string | undefined, profile: string | undefined) =>
  profile === undefined || (stored ?? DEFAULT_PROFILE) === profile

/** One task's stored pass labels, with the settings that decide which row they belong to. */
interface StoredPass {
  readonly taskId: string
  /** The agent run the labels judged (0 in a run of one). */
  readonly run: number
  readonly texts: string | undefined
  readonly k: number | undefined
  readonly runs: PassLabels["runs"]
}

/** The stored pass labels of these tasks with at least one run; labels made from another profile's answers are not these answers'. */
const storedPass = (
  store: string,
  judgeSlug: string,
  entries: ReadonlyArray<JudgeInput>,
  profile?: string
): Array<StoredPass> =>
  entries.flatMap((e) => {
    const l = readJsonChecked(passLabelsPath(store, judgeSlug, e.method, e.group, e.taskId, runOf(e)), PassLabels)
    if (!l || Object.keys(l.runs).length === 0 || !ofProfile(l.profile, profile)) return []
    return [{ taskId: e.taskId, run: runOf(e), texts: textsOf(l.prompts), k: l.k, runs: l.runs }]
  })

/** The judge runs asked for: the recorded K, or the most runs any task has. */
const runsOf = (
  labels: ReadonlyArray<{ readonly k?: number | undefined; readonly runs: Readonly<Record<string, unknown>> }>
) => Math.max(0, ...labels.map((l) => Math.max(l.k ?? 0, Math.max(-1, ...Object.keys(l.runs).map(Number)) + 1)))

/** SoPR from stored pass labels; within a labelled task, a run without a label scores 0 as in ToolEval. */
const passRateOf = (labels: ReadonlyArray<StoredPass>): PassRate | undefined => {
  const runs = Math.max(0, ...labels.map((l) => Math.max(-1, ...Object.keys(l.runs).map(Number)) + 1))
  if (runs === 0) return undefined
  const table: Array<Array<AnswerStatus | undefined>> = labels.map((l) =>
    Array.from({ length: runs }, (_, r) => l.runs[String(r)]?.label)
  )
  return passRate(table, runs)
}

/**
 * SoPR of one method and group from the stored labels, over the tasks the judge labelled (an
 * unjudged task is not counted as Unsolved; the rate's `n` says how many are in); K is the most runs any task has.
 */
export const storedPassRate = (
  store: string,
  judgeSlug: string,
  entries: ReadonlyArray<JudgeInput>
): PassRate | undefined => passRateOf(storedPass(store, judgeSlug, entries))

/** Which judge texts made the stored labels of these tasks (labels from before this was recorded say nothing). */
export const storedJudgeTexts = (
  store: string,
  judgeSlug: string,
  entries: ReadonlyArray<JudgeInput>
): string | undefined => {
  const texts = new Set(storedPass(store, judgeSlug, entries).flatMap((l) => (l.texts ? [l.texts] : [])))
  return texts.size === 0 ? undefined : [...texts].sort().join("+")
}

/** Decisions a win rate lacks: tasks with fewer rounds than K, and answered tasks with no round at all. */
export interface WinIncomplete {
  /** Rounds asked for per task (K). */
  readonly k: number
  readonly partial: ReadonlyArray<{ readonly taskId: string; readonly rounds: number }>
  readonly unjudged: ReadonlyArray<string>
}

/** One reference's win rounds of one method and group, made with one set of judge texts. */
interface StoredWins {
  readonly reference: string
  readonly texts: string | undefined
  readonly tasks: Array<{
    readonly taskId: string
    /** The agent run the rounds judged (0 in a run of one). */
    readonly run: number
    readonly candidate: number
    readonly reference: number
    readonly rounds: number
    readonly k: number | undefined
  }>
  /** Every task with a verdict file of these texts, those decided without the judge (one side has no answer) included. */
  readonly decided: Set<string>
}

/** The stored win rounds per reference and judge texts (of `taskIds`, when given); rounds made from another profile's answers are left out. */
const storedWins = (
  store: string,
  judgeSlug: string,
  method: string,
  group: string,
  taskIds?: ReadonlySet<string>,
  profile?: string
): Array<StoredWins> =>
  dirs(join(store, "eval", judgeSlug, "win")).flatMap((reference) => {
    // the evaluator names these folders by safeName (labels.ts): a group `a/b` is `a%2Fb`
    const dir = join(store, "eval", judgeSlug, "win", reference, "rounds", safeName(method), safeName(group))
    const byTexts = new Map<string, StoredWins>()
    for (const f of files(dir)) {
      const v = readJsonChecked(join(dir, f), WinVerdicts)
      if (!v || (taskIds && !taskIds.has(v.taskId)) || !ofProfile(v.profile, profile)) continue
      const rounds = Object.values(v.rounds)
      const texts = textsOf(v.prompts)
      // files from before the texts were recorded were made with ours
      const key = texts ?? "ours"
      const known = byTexts.get(key)
      // (the tasks and the set are shared with the stored entry, which only learns the texts' name here)
      const wins: StoredWins = {
        reference,
        texts: known?.texts ?? texts,
        tasks: known?.tasks ?? [],
        decided: known?.decided ?? new Set<string>()
      }
      byTexts.set(key, wins)
      if (rounds.length === 0) continue
      wins.decided.add(v.taskId)
      // a task only one side answered was decided without the judge: it is not a comparison
      if (rounds.some((r) => r.stage === "missing")) continue
      wins.tasks.push({
        taskId: v.taskId,
        run: runOf(v),
        candidate: rounds.filter((r) => r.winner === "candidate").length,
        reference: rounds.filter((r) => r.winner === "reference").length,
        rounds: rounds.length,
        k: v.k
      })
    }
    return [...byTexts.values()].filter((w) => w.tasks.length > 0)
  })

/** A win rate with what it lacks (`incomplete`, only when something does), over the tasks both sides have of `answered`. */
const winRateOf = (wins: StoredWins, answered: ReadonlyArray<string> | undefined) => {
  const k = Math.max(0, ...wins.tasks.map((t) => Math.max(t.k ?? 0, t.rounds)))
  const partial = wins.tasks.filter((t) => t.rounds < k).map((t) => ({ taskId: t.taskId, rounds: t.rounds }))
  // (a task the reference does not answer has a verdict of stage "missing": decided, not missing work)
  const unjudged = (answered ?? []).filter((id) => !wins.decided.has(id))
  const incomplete: WinIncomplete | undefined =
    partial.length + unjudged.length > 0 ? { k, partial, unjudged } : undefined
  return { ...winRate(wins.tasks), reference: wins.reference, ...(incomplete ? { incomplete } : {}) }
}

/** A row's samples: every answered task's runs with this judge's labels (of one set of texts) and costs; win rounds when given. */
const samplesOf = (
  entries: ReadonlyArray<JudgeInput>,
  labels: ReadonlyArray<StoredPass>,
  k: number,
  wins?: StoredWins
): RowSamples => {
  const labelled = new Map(labels.map((l) => [`${l.taskId}\u0000${l.run}`, l.runs]))
  const tasks = byTaskAndRun(entries, (e) => e.taskId, runOf).map((t) => ({
    taskId: t.taskId,
    runs: t.runs.map(({ run, item }) => ({
      run,
      labels: padRounds(labelled.get(`${t.taskId}\u0000${run}`), k),
      cost: item.cost
    }))
  }))
  const win =
    wins &&
    byTaskAndRun(
      wins.tasks,
      (w) => w.taskId,
      (w) => w.run
    ).map((t) => ({
      taskId: t.taskId,
      runs: t.runs.map(({ run, item }) => ({ run, rounds: winRounds(item.candidate, item.reference) }))
    }))
  return { k, tasks, ...(win ? { win } : {}) }
}

/** SoWR of one method and group from stored verdicts, per reference, over the tasks both sides have (of `taskIds`, when given). */
export const storedWinRates = (
  store: string,
  judgeSlug: string,
  method: string,
  group: string,
  taskIds?: ReadonlySet<string>
) => storedWins(store, judgeSlug, method, group, taskIds).map((w) => winRateOf(w, taskIds ? [...taskIds] : undefined))

/** Tasks per group the run planned (run.json), when it says. */
const plannedCounts = (dir: string): Readonly<Record<string, number>> =>
  readJsonIf(runConfigPath(dir), RunConfig)?.taskCounts ?? {}

/** Rows of a run directory or a converted-predictions folder, one per judge found in its eval/ (or one unjudged). */
const sourceRows = (dir: string, store: string): Array<Row> => {
  const source = loadSource(dir)
  const judges = judgesOf(store)
  const planned = source.kind === "run" ? plannedCounts(dir) : {}
  // labels are keyed by the profile of the answers they judged (a label folder may hold another run's)
  const labelProfile = sourceProfile(dir)
  const profile = labelProfile !== DEFAULT_PROFILE ? labelProfile : undefined
  const undone = source.undone ?? []
  const rows: Array<Row> = []
  const keyOf = (e: { method: string; group: string }) => `${e.method}\u0000${e.group}`
  const byKey = groupBy(source.entries, keyOf)
  // a method and group whose every task failed on the server still gets its row
  for (const u of undone) if (!byKey.has(keyOf(u))) byKey.set(keyOf(u), [])
  for (const [key, entries] of byKey) {
    const [method, group] = key.split("\u0000") as [string, string]
    const errors = undone.filter((u) => keyOf(u) === key).length
    const model = [...new Set(entries.map((e) => e.model))].join(", ")
    const total = Math.max(entries.length + errors, Object.hasOwn(planned, group) ? (planned[group] ?? 0) : 0)
    const base = {
      source: basename(resolve(dir)),
      method,
      ...(profile ? { profile } : {}),
      model,
      group,
      n: entries.length,
      total,
      errors,
      ...costs(entries)
    }
    const ids = new Set(entries.map((e) => e.taskId))
    const judged = judges.flatMap((judge) => {
      const passLabels = storedPass(store, judge, entries, labelProfile)
      const wins = storedWins(store, judge, method, group, ids, labelProfile)
      const fac = storedFac(store, judge, entries)
      if (passLabels.length === 0 && wins.length === 0 && !fac) return []
      // one row per judge texts: labels made with ToolEval's texts never share a row with ours (files that do not say were ours)
      const keyOf = (texts: string | undefined) => texts ?? "ours"
      const textsKeys = [
        ...new Set([...passLabels.map((l) => keyOf(l.texts)), ...wins.map((w) => keyOf(w.texts))])
      ].sort()
      // FAC is judged with ToolEval's texts (--fac needs --stb)
      const facKey = textsKeys.includes("ToolEval") ? "ToolEval" : textsKeys[0]
      return (textsKeys.length === 0 ? ["ours"] : textsKeys).flatMap((key) => {
        const labels = passLabels.filter((l) => keyOf(l.texts) === key)
        const pass = passRateOf(labels)
        const said = [
          ...labels.map((l) => l.texts),
          ...wins.filter((w) => keyOf(w.texts) === key).map((w) => w.texts)
        ].some((t) => t !== undefined)
        const rowWins = wins.filter((w) => keyOf(w.texts) === key)
        const k = runsOf(labels)
        const partialPass = labels
          .filter((l) => Object.keys(l.runs).length < k)
          .map((l) => ({ taskId: l.taskId, runs: Object.keys(l.runs).length }))
        const labelled = new Set(labels.map((l) => l.taskId))
        const unjudgedTasks = entries.filter((e) => !labelled.has(e.taskId)).map((e) => e.taskId)
        // (only when something is missing: a complete row reads as before)
        const missingPass = {
          ...(unjudgedTasks.length > 0 ? { unjudgedTasks } : {}),
          ...(partialPass.length > 0 ? { partialPass: { k, tasks: partialPass } } : {})
        }
        return (rowWins.length === 0 ? [undefined] : rowWins).map((w) => ({
          ...base,
          judge,
          judgeTexts: said ? key : undefined,
          judged: pass?.n ?? 0,
          pass,
          win: w && winRateOf(w, [...ids]),
          ...missingPass,
          ...(fac && key === facKey ? { fac } : {}),
          samples: samplesOf(entries, labels, k, w)
        }))
      })
    })
    rows.push(...(judged.length > 0 ? judged : [{ ...base, judge: "", judged: 0, samples: samplesOf(entries, [], 0) }]))
  }
  return rows
}

/** Rows of ToolEval's published labels; costs come from the converted predictions beside them, when present. */
const toolEvalRows = (dir: string, converted: ReadonlyArray<JudgeInput>): Array<Row> => {
  let results
  try {
    results = readToolEvalResults(dir)
  } catch (e) {
    throw new CompareInputError({
      message: `${(e as Error).message}\nFix or remove that file, then run compare again.`
    })
  }
  const { pass, preference } = results
  const rows: Array<Row> = []
  for (const p of pass) {
    const entries = converted.filter((e) => e.method === p.method && e.group === p.group)
    const ids = [...p.labels.keys()]
    const win = preference.find((w) => w.candidate === p.method && w.group === p.group)
    const costById = new Map(entries.map((e) => [e.taskId, e.cost]))
    rows.push({
      source: basename(resolve(dir)),
      method: p.method,
      model: [...new Set(entries.map((e) => e.model))].join(", "),
      group: p.group,
      judge: "ToolEval",
      n: Math.max(ids.length, entries.length),
      judged: ids.length,
      total: Math.max(ids.length, entries.length),
      errors: 0,
      pass: passRate(
        ids.map((id) => p.labels.get(id)!),
        p.runs
      ),
      win: win ? { ...winRate([...win.tasks.values()]), reference: win.reference } : undefined,
      ...costs(entries),
      samples: {
        k: p.runs,
        tasks: ids.map((taskId) => ({
          taskId,
          runs: [
            {
              run: 0,
              labels: Array.from({ length: p.runs }, (_, r) => p.labels.get(taskId)![r]),
              cost: costById.get(taskId)
            }
          ]
        })),
        ...(win
          ? {
              win: [...win.tasks].map(([taskId, t]) => ({
                taskId,
                runs: [{ run: 0, rounds: winRounds(t.candidate, t.reference) }]
              }))
            }
          : {})
      }
    })
  }
  return rows
}

/** The directory cannot be read as asked; the message says what it should contain. */
export class CompareInputError extends Data.TaggedError("CompareInputError")<{ readonly message: string }> {
  get kind(): FailureKind {
    return "bad-input"
  }
}

/** Where an input's answers and labels are: a run, a converted-predictions folder or ToolEval results. */
export interface ResolvedInput {
  /** The answers' directory (a label folder written by `smurfs eval --out` points back to it). */
  readonly dir: string
  /** Where the labels are (the input itself). */
  readonly store: string
  readonly kind: ReturnType<typeof sourceKind>
  readonly toolEval: boolean
}

/** Check that `input` can be read and say where its answers and labels are; CompareInputError says what it should contain. */
export const resolveInput = (input: string): ResolvedInput => {
  if (!existsSync(input))
    throw new CompareInputError({
      message: `${input} does not exist. Pass run directories made by \`smurfs bench\` or folders with ToolEval results.`
    })
  // a label folder written by `smurfs eval --out` points back to the answers it judged
  const pointer = readJsonIf(join(input, EVAL_SOURCE_FILE), EvalSource)
  const dir = pointer?.source ?? input
  const kind = sourceKind(dir)
  const toolEval = hasToolEvalResults(dir)
  if (!kind && !toolEval)
    throw new CompareInputError({
      message: `${input} is not a run directory (tasks/, run.json), a StableToolBench folder (model_predictions_converted/) or ToolEval results (pass_rate_results/, preference_results/).`
    })
  const newer = kind === "run" ? newerRunFormat(dir) : undefined
  if (newer !== undefined)
    throw new CompareInputError({ message: `${input}: ${newerRunProblem(newer)}. Upgrade smurfs to read it.` })
  return { dir, store: input, kind, toolEval }
}

/** The judges' label folders of a store (`<store>/eval/<judge>`). */
export const judgesOf = (store: string): Array<string> => dirs(join(store, "eval"))

/** Read a store's labels; a label file that does not validate (a run key "1e9") is refused by name, never counted or skipped. */
export const refusingInvalid = <A>(read: () => A): A => {
  try {
    return read()
  } catch (e) {
    if (e instanceof InvalidStoredFile)
      throw new CompareInputError({
        message: `${e.message}. Fix or remove that file (\`smurfs eval\` judges its task again), then run compare again.`
      })
    throw e
  }
}

/** All rows of the given directories: run dirs, converted-predictions folders, ToolEval result folders. */
export const collectRows = (inputs: ReadonlyArray<string>): Array<Row> =>
  inputs.flatMap((input) => {
    const { dir, kind, toolEval } = resolveInput(input)
    const rows: Array<Row> = kind ? refusingInvalid(() => sourceRows(dir, input)) : []
    const converted = kind === "converted" ? loadSource(dir).entries : []
    // Unjudged rows of a folder that has ToolEval's labels add nothing beside them.
    return toolEval ? [...rows.filter((r) => r.judge !== ""), ...toolEvalRows(dir, converted)] : rows
  })
