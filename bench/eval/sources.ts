// Answered tasks to evaluate: our run directories (task records), StableToolBench converted
// predictions, or StableToolBench's raw answers (converted here as convert_to_answer_format.py does).

import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import * as Data from "effect/Data"
import { DEFAULT_PROFILE } from "../../src/agents/profile.ts"
import type { FailureKind } from "../../src/failure.ts"
import { convertAnswerFile } from "../../src/trace/converters/stabletoolbench-answers.ts"
import { readFileBounded } from "../../src/trace/guarded-fs.ts"
import { newerRunFormat, newerRunProblem, readRecord } from "../run-dir.ts"
import { RunConfig, runConfigPath, runOf, type TaskRecord } from "../run-format.ts"
import { judgeInputFromConverted, readConvertedFile } from "./converted.ts"
import { costOfRecord, type JudgeCost, type JudgeInput, judgeInputFromRecord, missCounts } from "./judge-input.ts"
import { readJsonIf } from "./store.ts"

export type SourceKind = "run" | "converted" | "answers"

export interface Source {
  readonly dir: string
  readonly kind: SourceKind
  /** Every answered task, sorted by method, group and task id. */
  readonly entries: ReadonlyArray<JudgeInput>
  /** Task records that did not validate (path and problem), skipped with a warning. */
  readonly invalid: ReadonlyArray<string>
  /** Tasks recorded as `error` (the model server failed): not answers, so never judged; `smurfs bench --resume` redoes them. */
  readonly undone?:
    | ReadonlyArray<{
        readonly method: string
        readonly group: string
        readonly taskId: string
        readonly run?: number | undefined
      }>
    | undefined
}

/** The directory cannot be read as asked; the message says what it should contain. */
export class SourceError extends Data.TaggedError("SourceError")<{ readonly message: string }> {
  get kind(): FailureKind {
    return "bad-input"
  }
}

const dirs = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((d) => statSync(join(dir, d)).isDirectory())
        .sort()
    : []

const byKey = (a: JudgeInput, b: JudgeInput) =>
  a.method.localeCompare(b.method) ||
  a.group.localeCompare(b.group) ||
  a.taskId.localeCompare(b.taskId, undefined, { numeric: true }) ||
  runOf(a) - runOf(b)

/** Which kind of directory `dir` is, or undefined when it is neither. */
export const sourceKind = (dir: string): SourceKind | undefined => {
  if (existsSync(join(dir, "tasks")) || existsSync(join(dir, "run.json"))) return "run"
  if (existsSync(join(dir, "model_predictions_converted"))) return "converted"
  if (existsSync(join(dir, "answer"))) return "answers"
  return undefined
}

/**
 * The task record files of a run directory, each read when it is reached (undefined: not a complete record, or one
 * `skip` says is not to be read).
 */
function* runRecords(
  dir: string,
  skip?: (path: string) => boolean
): Generator<{ readonly path: string; readonly record: TaskRecord | undefined }> {
  const tasks = join(dir, "tasks")
  for (const method of dirs(tasks))
    for (const group of dirs(join(tasks, method)))
      for (const file of readdirSync(join(tasks, method, group)).filter((f) => f.endsWith(".json"))) {
        const path = join(tasks, method, group, file)
        yield { path, record: skip?.(path) ? undefined : readRecord(path) }
      }
}

/** Read the task records of a run directory. */
const readRun = (dir: string): Source => {
  const entries: Array<JudgeInput> = []
  const invalid: Array<string> = []
  const undone: Array<{ method: string; group: string; taskId: string; run?: number }> = []
  for (const { path, record } of runRecords(dir)) {
    if (record?.finishType === "error")
      undone.push({
        method: record.method,
        group: record.group,
        taskId: record.taskId,
        ...(record.run === undefined ? {} : { run: record.run })
      })
    else if (record) entries.push(judgeInputFromRecord(record))
    else invalid.push(`${path} is not a complete task record (a crash mid-write, or another format version)`)
  }
  return { dir, kind: "run", entries: entries.sort(byKey), invalid, undone }
}

/**
 * The misses of a run directory's answered tasks (as `missCounts` over `loadSource(dir).entries`), its
 * records read one at a time: a long run's records are never all held at once.
 */
export const runMissCounts = (
  dir: string,
  known?: (path: string) => { readonly result: boolean; readonly cost: JudgeCost } | undefined
): ReturnType<typeof missCounts> => {
  const newer = sourceKind(dir) === "run" ? newerRunFormat(dir) : undefined
  if (newer !== undefined)
    throw new SourceError({ message: `${dir}: ${newerRunProblem(newer)}. Upgrade smurfs to read it.` })
  function* costs() {
    for (const { path, record } of runRecords(
      dir,
      known === undefined ? undefined : (path) => known(path) !== undefined
    )) {
      // a record this process wrote: its cost as it was written, not read back
      const summary = known?.(path)
      if (summary !== undefined) {
        if (summary.result) yield { cost: summary.cost }
      } else if (record !== undefined && record.finishType !== "error") yield { cost: costOfRecord(record) }
    }
  }
  return missCounts(costs())
}

/** Read `model_predictions_converted/<method>/<group>.json` files. */
const readConverted = (dir: string): Source => {
  const entries: Array<JudgeInput> = []
  const root = join(dir, "model_predictions_converted")
  for (const method of dirs(root))
    for (const file of readdirSync(join(root, method)).filter((f) => f.endsWith(".json"))) {
      const group = file.slice(0, -".json".length)
      for (const [taskId, example] of Object.entries(readConvertedFile(join(root, method, file))))
        entries.push(judgeInputFromConverted(taskId, method, group, example))
    }
  return { dir, kind: "converted", entries: entries.sort(byKey), invalid: [] }
}

/** Read `answer/<model>/<group>/<qid>_<method>.json` files, converted as ToolEval's converter would. */
const readAnswers = (dir: string): Source => {
  const entries: Array<JudgeInput> = []
  const invalid: Array<string> = []
  const root = join(dir, "answer")
  for (const model of dirs(root))
    for (const group of dirs(join(root, model)))
      for (const file of readdirSync(join(root, model, group)).filter((f) => f.endsWith(".json") && f.includes("_"))) {
        const taskId = file.slice(0, file.indexOf("_"))
        const method = file.slice(file.indexOf("_") + 1, -".json".length)
        const path = join(root, model, group, file)
        try {
          entries.push(
            judgeInputFromConverted(taskId, model, group, convertAnswerFile(method, JSON.parse(readFileBounded(path))))
          )
        } catch (e) {
          invalid.push(`${path} is not a StableToolBench answer file (${(e as Error).message.split("\n")[0]})`)
        }
      }
  return { dir, kind: "answers", entries: entries.sort(byKey), invalid }
}

/** Load a source directory; a SourceError says what was expected when it is neither kind. */
export const loadSource = (dir: string): Source => {
  if (!existsSync(dir))
    throw new SourceError({
      message: `${dir} does not exist. Pass a run directory made by \`smurfs bench\`, or a StableToolBench folder with model_predictions_converted/.`
    })
  const kind = sourceKind(dir)
  const newer = kind === "run" ? newerRunFormat(dir) : undefined
  if (newer !== undefined)
    throw new SourceError({ message: `${dir}: ${newerRunProblem(newer)}. Upgrade smurfs to read it.` })
  if (kind === "run") return readRun(dir)
  if (kind === "converted") return readConverted(dir)
  if (kind === "answers") return readAnswers(dir)
  throw new SourceError({
    message: `${dir} is neither a run directory (tasks/, run.json) nor a StableToolBench folder (model_predictions_converted/ or answer/).`
  })
}

/** The methods of a source. */
export const methodsOf = (source: Source): Array<string> => [...new Set(source.entries.map((e) => e.method))].sort()

/**
 * The profile that made a source's answers (run.json `options.profile.name`): `improved` when the run does
 * not say (runs from before profiles) and for folders that are not our runs; `improved+fused` for a run with
 * Smurfs' fused executor (`options.executor`), whose answers are not the three-call executor's. Labels are keyed by it.
 */
export const sourceProfile = (dir: string): string => {
  if (sourceKind(dir) !== "run") return DEFAULT_PROFILE
  const config = readJsonIf(runConfigPath(dir), RunConfig)
  const options = config?.options
  const profile = options?.["profile"] as { name?: unknown } | undefined
  const name = typeof profile?.name === "string" ? profile.name : DEFAULT_PROFILE
  // only a run with smurfs has an executor that made answers (a react run recorded one before it was left out)
  return options?.["executor"] === "fused" && (config?.methods ?? []).includes("smurfs") ? `${name}+fused` : name
}
