// Answered tasks to evaluate: our run directories (task records) or StableToolBench converted predictions.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { z } from "zod"
import { TaskRecord } from "../run-format.ts"
import { judgeInputFromConverted, readConvertedFile } from "./converted.ts"
import { type JudgeInput, judgeInputFromRecord } from "./judge-input.ts"

export type SourceKind = "run" | "converted"

export interface Source {
  readonly dir: string
  readonly kind: SourceKind
  /** Every answered task, sorted by method, group and task id. */
  readonly entries: ReadonlyArray<JudgeInput>
  /** Task records that did not validate (path and problem), skipped with a warning. */
  readonly invalid: ReadonlyArray<string>
}

export class SourceError extends Error {}

const dirs = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((d) => statSync(join(dir, d)).isDirectory()).sort() : [])

const byKey = (a: JudgeInput, b: JudgeInput) =>
  a.method.localeCompare(b.method) || a.group.localeCompare(b.group) || a.taskId.localeCompare(b.taskId, undefined, { numeric: true })

/** Which kind of directory `dir` is, or undefined when it is neither. */
export const sourceKind = (dir: string): SourceKind | undefined => {
  if (existsSync(join(dir, "tasks")) || existsSync(join(dir, "run.json"))) return "run"
  if (existsSync(join(dir, "model_predictions_converted"))) return "converted"
  return undefined
}

/** Read the task records of a run directory. */
const readRun = (dir: string): Source => {
  const entries: Array<JudgeInput> = []
  const invalid: Array<string> = []
  const tasks = join(dir, "tasks")
  for (const method of dirs(tasks))
    for (const group of dirs(join(tasks, method)))
      for (const file of readdirSync(join(tasks, method, group)).filter((f) => f.endsWith(".json"))) {
        const path = join(tasks, method, group, file)
        try {
          const parsed = TaskRecord.safeParse(JSON.parse(readFileSync(path, "utf8")))
          if (parsed.success) entries.push(judgeInputFromRecord(parsed.data))
          else invalid.push(`${path}: ${z.prettifyError(parsed.error)}`)
        } catch (e) {
          invalid.push(`${path}: ${(e as Error).message}`)
        }
      }
  return { dir, kind: "run", entries: entries.sort(byKey), invalid }
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

/** Load a source directory; a SourceError says what was expected when it is neither kind. */
export const loadSource = (dir: string): Source => {
  if (!existsSync(dir)) throw new SourceError(`${dir} does not exist. Pass a run directory made by \`smurfs bench\`, or a StableToolBench folder with model_predictions_converted/.`)
  const kind = sourceKind(dir)
  if (kind === "run") return readRun(dir)
  if (kind === "converted") return readConverted(dir)
  throw new SourceError(`${dir} is neither a run directory (tasks/, run.json) nor a StableToolBench folder (model_predictions_converted/).`)
}

/** The methods of a source. */
export const methodsOf = (source: Source): Array<string> => [...new Set(source.entries.map((e) => e.method))].sort()
