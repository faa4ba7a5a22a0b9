// A recorded trajectory read back for `smurfs show`: a trajectory file (`smurfs run --json`) or a run directory's task
// records of one task id, with the judges' labels; errors name the file and what to give instead.
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { fromSafeName, safeName } from "../../src/trace/file-names.ts"
import { readFileBounded } from "../../src/trace/guarded-fs.ts"
import type { RunEvent, Totals } from "../../src/trace/record.ts"
import { conversationHtml } from "../benchmarks/tau2/transcript-html.ts"
import { conversationLines } from "../benchmarks/tau2/transcript-text.ts"
import { InvalidStoredFile } from "../eval/store.ts"
import { runFileName } from "../run-format.ts"
import { type TaskLabel, taskLabels } from "./results.ts"

/** A trajectory file or run directory that cannot be shown as asked; the message says what to give instead. Exit code 3. */
export class RecordedInputError extends Error {
  override readonly name = "RecordedInputError"
  readonly kind = "bad-input" as const
}

/** What show needs of a trajectory or a task record. */
export interface Recorded {
  readonly label: string
  readonly method?: string | undefined
  readonly query?: string | undefined
  readonly labels?: ReadonlyArray<TaskLabel> | undefined
  readonly events: ReadonlyArray<RunEvent>
  readonly finalAnswer?: string | undefined
  readonly finishType?: string | undefined
  readonly totals?: Partial<Totals> | undefined
  /** A benchmark's own view of the record (τ²: the conversation and the database against the gold state), as HTML. */
  readonly benchmarkHtml?: string | undefined
  /** The same as text lines for a terminal, short and whole. */
  readonly benchmarkLines?: { readonly short: ReadonlyArray<string>; readonly full: ReadonlyArray<string> } | undefined
}

/** A trajectory file, or one task record of a run directory, read for show under `label`. */
export const readRecorded = (file: string, label: string): Recorded => {
  let value: unknown
  try {
    value = JSON.parse(readFileBounded(file))
  } catch (e) {
    throw new RecordedInputError(`${file}: cannot read it as JSON (${(e as Error).message.split("\n")[0]})`)
  }
  const record = value as Partial<Recorded> & { trajectory?: Partial<Recorded> }
  const t = Array.isArray(record.events) ? record : record.trajectory
  if (!t || !Array.isArray(t.events))
    throw new RecordedInputError(
      `${file}: not a trajectory (no events); give a file written by \`smurfs run --json\` or a run directory's task`
    )
  const text = (v: unknown) => (typeof v === "string" ? v : undefined)
  return {
    label,
    method: text(record.method),
    query: text(record.query) ?? text(t.query),
    events: t.events,
    finalAnswer: t.finalAnswer,
    finishType: t.finishType,
    totals: t.totals,
    benchmarkHtml: conversationHtml(record as { benchmark?: unknown }),
    benchmarkLines: {
      short: conversationLines(record as { benchmark?: unknown }),
      full: conversationLines(record as { benchmark?: unknown }, true)
    }
  }
}

/** The agent runs of a task whose record files a method's group folder holds (`<id>.json`, `<id>.run<r>.json`), in order. */
const agentRunsIn = (folder: string, taskId: string): Array<number> => {
  const base = safeName(taskId)
  return readdirSync(folder)
    .flatMap((f) => {
      if (f === `${base}.json`) return [0]
      const m = f.startsWith(`${base}.run`) ? /^\.run([1-9][0-9]*)\.json$/.exec(f.slice(base.length)) : null
      return m ? [Number(m[1])] : []
    })
    .sort((a, b) => a - b)
}

/** The judges' labels of a task in a run directory; a label file that does not validate is refused by name. */
const labelsOf = (
  dir: string,
  method: string,
  group: string,
  taskId: string,
  agentRun = 0
): ReadonlyArray<TaskLabel> => {
  try {
    return taskLabels(dir, method, group, taskId, agentRun)
  } catch (e) {
    if (e instanceof InvalidStoredFile)
      throw new RecordedInputError(`${e.message}. Fix or remove that file (\`smurfs eval\` judges its task again).`)
    throw e
  }
}

/** True for an existing directory. */
export const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory()

/** The records of a task id in a run directory, narrowed by method and group. */
export const findInRun = (
  dir: string,
  taskId: string,
  methods: ReadonlyArray<string> | undefined,
  group: string | undefined
): Array<Recorded> => {
  const tasks = join(dir, "tasks")
  if (!isDir(tasks))
    throw new RecordedInputError(
      `${dir} is not a run directory (it has no tasks/); give one made by \`smurfs bench\`, or a trajectory file`
    )
  const found: Array<Recorded> = []
  // folders and files are named by safeName: `a/b` is `a%2Fb.json`; the name given may be either
  const named = (entry: string, wanted: string | undefined) =>
    wanted === undefined || entry === safeName(wanted) || entry === wanted
  const shown = (entry: string) => fromSafeName(entry) ?? entry
  const methodDirs = readdirSync(tasks).filter(
    (m) => (methods === undefined || methods.some((w) => named(m, w))) && isDir(join(tasks, m))
  )
  // methods in the order asked for (smurfs,react: smurfs on the left)
  const rank = (m: string) => (methods === undefined ? 0 : methods.findIndex((w) => named(m, w)))
  for (const m of methodDirs.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)))
    for (const g of readdirSync(join(tasks, m)).filter((g) => named(g, group) && isDir(join(tasks, m, g)))) {
      // agent run 0 (`<id>.json`), then runs 1.. of `bench --runs N` (`<id>.run<r>.json`), each labelled with its run
      const agentRuns = agentRunsIn(join(tasks, m, g), taskId)
      for (const agentRun of agentRuns) {
        const file = join(tasks, m, g, runFileName(taskId, agentRun))
        const label = `${shown(m)} ${shown(g)}/${taskId}${agentRuns.length > 1 || agentRun > 0 ? ` run ${agentRun}` : ""}`
        const recorded = readRecorded(file, label)
        found.push({ ...recorded, method: shown(m), labels: labelsOf(dir, shown(m), shown(g), taskId, agentRun) })
      }
    }
  if (found.length === 0)
    throw new RecordedInputError(
      `${dir} has no task "${taskId}"${methods || group ? ` for ${[methods?.join(","), group].filter(Boolean).join(" ")}` : ""}; the ids are the tasks' query ids (file names under ${tasks}/<method>/<group>/, with characters other than letters, digits, _ and - written %XX)`
    )
  return found
}
