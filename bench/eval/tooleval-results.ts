// ToolEval's own outputs: pass_rate_results/**/<group>_<method>.json and preference_results/<group>_<ref>_<out>.json.
import { existsSync, readdirSync, statSync } from "node:fs"
import { basename, join } from "node:path"
import { z } from "zod"
import { dataRecord } from "../../src/trace/data-record.ts"
import { readFileBounded } from "../../src/trace/guarded-fs.ts"
import { type AnswerStatus, RunKey } from "./labels.ts"

const GROUP = /^(G\d_(?:instruction|category|tool))_(.+)\.json$/

/** Task id -> its labels by judge run; run keys are small whole numbers (RunKey), any task id is kept (`__proto__` too). */
export const ToolEvalPassFile = dataRecord(
  z.string(),
  z.object({ query: z.string().optional(), is_solved: z.record(RunKey, z.string()).default({}) }).loose()
)

export interface ToolEvalPass {
  readonly file: string
  readonly method: string
  readonly group: string
  /** Labels per task id, indexed by judge run. */
  readonly labels: ReadonlyMap<string, ReadonlyArray<AnswerStatus | undefined>>
  /** Judge runs found in the file (the largest run index + 1). */
  readonly runs: number
}

export interface ToolEvalPreference {
  readonly file: string
  readonly group: string
  readonly reference: string
  readonly candidate: string
  /** Rounds won by each side per task id. */
  readonly tasks: ReadonlyMap<string, { candidate: number; reference: number }>
}

/** "AnswerStatus.Solved" -> "Solved"; anything else is no label. */
export const parseAnswerStatus = (text: string): AnswerStatus | undefined => {
  const name = text.replace(/^AnswerStatus\./, "")
  return name === "Solved" || name === "Unsolved" || name === "Unsure" ? name : undefined
}

const jsonFiles = (dir: string): Array<string> =>
  !existsSync(dir)
    ? []
    : readdirSync(dir)
        .sort()
        .flatMap((name) => {
          const path = join(dir, name)
          return statSync(path).isDirectory() ? jsonFiles(path) : name.endsWith(".json") ? [path] : []
        })

/** Read one pass-rate result file. */
export const readToolEvalPassFile = (file: string): ToolEvalPass => {
  const match = GROUP.exec(basename(file))
  if (!match) throw new Error(`${file}: expected a name like G1_instruction_<method>.json`)
  const parsed = ToolEvalPassFile.safeParse(JSON.parse(readFileBounded(file)))
  if (!parsed.success) throw new Error(`${file} is not a ToolEval pass-rate file:\n${z.prettifyError(parsed.error)}`)
  let runs = 0
  const labels = new Map<string, Array<AnswerStatus | undefined>>()
  for (const [taskId, entry] of Object.entries(parsed.data)) {
    const row: Array<AnswerStatus | undefined> = []
    for (const [run, status] of Object.entries(entry.is_solved)) {
      const index = Number(run)
      row[index] = parseAnswerStatus(status)
      runs = Math.max(runs, index + 1)
    }
    labels.set(taskId, row)
  }
  return { file, group: match[1]!, method: match[2]!, labels, runs }
}

/** Read one preference result file; the reference and candidate are told apart by the file name. */
export const readToolEvalPreferenceFile = (file: string): ToolEvalPreference => {
  const match = GROUP.exec(basename(file))
  if (!match) throw new Error(`${file}: expected a name like G1_instruction_<reference>_<candidate>.json`)
  const parsed = dataRecord(z.string(), z.record(z.string(), z.union([z.number(), z.string()]))).safeParse(
    JSON.parse(readFileBounded(file))
  )
  if (!parsed.success) throw new Error(`${file} is not a ToolEval preference file:\n${z.prettifyError(parsed.error)}`)
  const data = parsed.data
  const names = new Set<string>()
  for (const entry of Object.values(data))
    for (const [key, value] of Object.entries(entry)) if (typeof value === "number") names.add(key)
  const rest = match[2]!
  const reference = [...names].find((n) => rest.startsWith(`${n}_`) && names.has(rest.slice(n.length + 1)))
  if (!reference)
    throw new Error(`${file}: cannot tell the reference from the candidate (models found: ${[...names].join(", ")})`)
  const candidate = rest.slice(reference.length + 1)
  const tasks = new Map<string, { candidate: number; reference: number }>()
  for (const [taskId, entry] of Object.entries(data))
    tasks.set(taskId, { candidate: Number(entry[candidate] ?? 0), reference: Number(entry[reference] ?? 0) })
  return { file, group: match[1]!, reference, candidate, tasks }
}

/** Everything ToolEval wrote under a folder (the folder itself or its pass_rate_results/ and preference_results/). */
export const readToolEvalResults = (dir: string) => ({
  pass: jsonFiles(join(dir, "pass_rate_results")).map(readToolEvalPassFile),
  preference: jsonFiles(join(dir, "preference_results")).map(readToolEvalPreferenceFile)
})

/** Whether a folder holds ToolEval outputs. */
export const hasToolEvalResults = (dir: string): boolean =>
  existsSync(join(dir, "pass_rate_results")) || existsSync(join(dir, "preference_results"))
