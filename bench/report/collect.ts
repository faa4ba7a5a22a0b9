// The rows of a comparison: one per source, judge, method and group, with pass and win rates and mean costs.

import { existsSync, readdirSync, statSync } from "node:fs"
import { basename, join, resolve } from "node:path"
import * as Data from "effect/Data"
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
import { loadSource, sourceKind } from "../eval/sources.ts"
import { InvalidStoredFile, readJsonChecked, readJsonIf } from "../eval/store.ts"
import { hasToolEvalResults, readToolEvalResults } from "../eval/tooleval-results.ts"
import { newerRunFormat, newerRunProblem } from "../run-dir.ts"
import { RunConfig, runConfigPath } from "../run-format.ts"

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
  /** Win rate over the tasks both sides have (`n` of WinRate); a task only one side answered is not counted. */
  readonly win?: (WinRate & { readonly reference: string }) | undefined
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
  /** FAC (fac_eval.py's final-answer correctness) of this judge, over the tasks it labelled. */
  readonly fac?: { readonly rate: number; readonly n: number } | undefined
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
  return { missedToolCalls: m.missedToolCalls, missRate: m.toolCalls === 0 ? 0 : m.missedToolCalls / m.toolCalls }
}

const costs = (entries: ReadonlyArray<JudgeInput>) => ({
  ...misses(entries),
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

/**
 * SoPR of one method and group from the stored labels, over the tasks the judge labelled (an
 * unjudged task is not counted as Unsolved; the rate's `n` says how many are in); K is the most runs any task has.
 */
export const storedPassRate = (
  store: string,
  judgeSlug: string,
  entries: ReadonlyArray<JudgeInput>
): PassRate | undefined => {
  const labels = entries
    .map((e) => readJsonChecked(passLabelsPath(store, judgeSlug, e.method, e.group, e.taskId), PassLabels)?.runs)
    .filter((l): l is NonNullable<typeof l> => l !== undefined && Object.keys(l).length > 0)
  const runs = Math.max(0, ...labels.map((l) => Math.max(-1, ...Object.keys(l).map(Number)) + 1))
  if (runs === 0) return undefined
  // within a labelled task, a run without a label scores 0 as in ToolEval
  const table: Array<Array<AnswerStatus | undefined>> = labels.map((l) =>
    Array.from({ length: runs }, (_, r) => l[String(r)]?.label)
  )
  return passRate(table, runs)
}

/** Which judge texts made the stored labels of these tasks (labels from before this was recorded say nothing). */
export const storedJudgeTexts = (
  store: string,
  judgeSlug: string,
  entries: ReadonlyArray<JudgeInput>
): string | undefined => {
  const texts = new Set<string>()
  for (const e of entries) {
    const prompts = readJsonChecked(passLabelsPath(store, judgeSlug, e.method, e.group, e.taskId), PassLabels)?.prompts
    if (prompts !== undefined) texts.add(prompts.startsWith("stabletoolbench:") ? "ToolEval" : "ours")
  }
  return texts.size === 0 ? undefined : [...texts].sort().join("+")
}

/** SoWR of one method and group from stored verdicts, per reference, over the tasks both sides have (of `taskIds`, when given). */
export const storedWinRates = (
  store: string,
  judgeSlug: string,
  method: string,
  group: string,
  taskIds?: ReadonlySet<string>
) =>
  dirs(join(store, "eval", judgeSlug, "win")).flatMap((reference) => {
    // the evaluator names these folders by safeName (labels.ts): a group `a/b` is `a%2Fb`
    const dir = join(store, "eval", judgeSlug, "win", reference, "rounds", safeName(method), safeName(group))
    const tasks = files(dir).flatMap((f) => {
      const v = readJsonChecked(join(dir, f), WinVerdicts)
      if (!v || (taskIds && !taskIds.has(v.taskId))) return []
      const rounds = Object.values(v.rounds)
      // a task only one side answered was decided without the judge: it is not a comparison
      if (rounds.length === 0 || rounds.some((r) => r.stage === "missing")) return []
      return [
        {
          candidate: rounds.filter((r) => r.winner === "candidate").length,
          reference: rounds.filter((r) => r.winner === "reference").length
        }
      ]
    })
    return tasks.length === 0 ? [] : [{ ...winRate(tasks), reference }]
  })

/** The profile a run recorded (run.json `options.profile.name`), when it is not the default `improved`. */
const profileOf = (dir: string): string | undefined => {
  const profile = readJsonIf(runConfigPath(dir), RunConfig)?.options["profile"] as { name?: unknown } | undefined
  return typeof profile?.name === "string" && profile.name !== "improved" ? profile.name : undefined
}

/** Tasks per group the run planned (run.json), when it says. */
const plannedCounts = (dir: string): Readonly<Record<string, number>> =>
  readJsonIf(runConfigPath(dir), RunConfig)?.taskCounts ?? {}

/** Rows of a run directory or a converted-predictions folder, one per judge found in its eval/ (or one unjudged). */
const sourceRows = (dir: string, store: string): Array<Row> => {
  const source = loadSource(dir)
  const judges = judgesOf(store)
  const planned = source.kind === "run" ? plannedCounts(dir) : {}
  const profile = source.kind === "run" ? profileOf(dir) : undefined
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
      const pass = storedPassRate(store, judge, entries)
      const wins = storedWinRates(store, judge, method, group, ids)
      const fac = storedFac(store, judge, entries)
      if (!pass && wins.length === 0 && !fac) return []
      const judgeTexts = storedJudgeTexts(store, judge, entries)
      return (wins.length === 0 ? [undefined] : wins).map((win) => ({
        ...base,
        judge,
        judgeTexts,
        judged: pass?.n ?? 0,
        pass,
        win,
        ...(fac ? { fac } : {})
      }))
    })
    rows.push(...(judged.length > 0 ? judged : [{ ...base, judge: "", judged: 0 }]))
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
      ...costs(entries)
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
