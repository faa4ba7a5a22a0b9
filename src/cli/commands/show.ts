// `smurfs show`: print a recorded trajectory (a run directory's task, or `smurfs run --json` output) as the live view showed it, or as one HTML page.
import { existsSync, readdirSync, statSync } from "node:fs"
import { visibleText } from "../../trace/visible-text.ts"
import { join, resolve } from "node:path"
import type { ParseArgsOptionsConfig } from "node:util"
import { plural } from "../../plural.ts"
import { kindOf } from "../../trace/events.ts"
import type { RunEvent, Totals } from "../../trace/record.ts"
import { fromSafeName, safeName } from "../../trace/file-names.ts"
import { readFileBounded } from "../../trace/guarded-fs.ts"
import { writeOutputFile } from "../output-file.ts"
import { ExitCode } from "../exit-codes.ts"
import { liveView } from "../live-view.ts"
import { BadInput, runCommand, UsageError } from "../options.ts"

const HELP = `usage: smurfs show <run dir> <task id> [options]
       smurfs show <trajectory.json> [options]

Print a recorded trajectory as \`smurfs run\` showed it live: the plan, each subtask's steps, tool
calls and their results, the verifier's verdicts, backtracks and the answer. A run directory's task
is found under tasks/<method>/<group>/<task id>.json; a trajectory file is what \`smurfs run --json\`
prints.

options:
  --method <m>      the task's method when the run has several (default: every method that has it)
  --group <g>       the task's group when several groups have the id
  --full            show tool results, thoughts and answers whole (the view cuts them to 160 characters)
  --html <file>     also write the view as one self-contained HTML page
  -h, --help        show this help

exit codes: 0 shown, 2 bad usage, 3 no such run directory, task or trajectory file`

/** The options of `smurfs show`, in node:util parseArgs' shape. */
const OPTIONS = {
  method: { type: "string" },
  group: { type: "string" },
  full: { type: "boolean" },
  html: { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "show", help: HELP, options: OPTIONS, positionals: true } as const

/** What show needs of a trajectory or a task record. */
interface Recorded {
  readonly label: string
  readonly events: ReadonlyArray<RunEvent>
  readonly finalAnswer?: string | undefined
  readonly finishType?: string | undefined
  readonly totals?: Partial<Totals> | undefined
}

const readRecorded = (file: string, label: string): Recorded => {
  let value: unknown
  try {
    value = JSON.parse(readFileBounded(file))
  } catch (e) {
    throw new BadInput(`${file}: cannot read it as JSON (${(e as Error).message.split("\n")[0]})`)
  }
  const record = value as Partial<Recorded> & { trajectory?: Partial<Recorded> }
  const t = Array.isArray(record.events) ? record : record.trajectory
  if (!t || !Array.isArray(t.events)) throw new BadInput(`${file}: not a trajectory (no events); give a file written by \`smurfs run --json\` or a run directory's task`)
  return { label, events: t.events, finalAnswer: t.finalAnswer, finishType: t.finishType, totals: t.totals }
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory()

/** The records of a task id in a run directory, narrowed by method and group. */
const findInRun = (dir: string, taskId: string, method: string | undefined, group: string | undefined): Array<Recorded> => {
  const tasks = join(dir, "tasks")
  if (!isDir(tasks)) throw new BadInput(`${dir} is not a run directory (it has no tasks/); give one made by \`smurfs bench\`, or a trajectory file`)
  const found: Array<Recorded> = []
  // folders and files are named by safeName: `a/b` is `a%2Fb.json`; the name given may be either
  const named = (entry: string, wanted: string | undefined) => wanted === undefined || entry === safeName(wanted) || entry === wanted
  const shown = (entry: string) => fromSafeName(entry) ?? entry
  for (const m of readdirSync(tasks).filter((m) => named(m, method) && isDir(join(tasks, m))))
    for (const g of readdirSync(join(tasks, m)).filter((g) => named(g, group) && isDir(join(tasks, m, g)))) {
      const file = join(tasks, m, g, `${safeName(taskId)}.json`)
      if (existsSync(file)) found.push(readRecorded(file, `${shown(m)} ${shown(g)}/${taskId}`))
    }
  if (found.length === 0)
    throw new BadInput(`${dir} has no task "${taskId}"${method || group ? ` for ${[method, group].filter(Boolean).join(" ")}` : ""}; the ids are the tasks' query ids (file names under ${tasks}/<method>/<group>/, with characters other than letters, digits, _ and - written %XX)`)
  return found
}

/** The lines of a recorded trajectory, as the live view printed them, then its answer and totals. */
export const renderRecorded = (recorded: Recorded, full = false): Array<string> => {
  const lines: Array<string> = []
  const view = liveView((line) => lines.push(line), { maxChars: full ? Number.MAX_SAFE_INTEGER : undefined })
  for (const event of recorded.events) view(event)
  lines.push("")
  if (recorded.finishType === "give_answer" || (recorded.finalAnswer && !recorded.events.some((e) => kindOf(e) === "give_up"))) lines.push(`Answer: ${visibleText(recorded.finalAnswer ?? "")}`)
  else if (recorded.finishType) lines.push(`Finished: ${recorded.finishType}`)
  const t = recorded.totals
  if (t)
    lines.push(
      `${plural(t["modelCalls"] ?? 0, "model call")}, ${plural((t["promptTokens"] ?? 0) + (t["completionTokens"] ?? 0), "token")}, ${plural(t["toolCalls"] ?? 0, "tool call")}, ${plural(t["backtracks"] ?? 0, "backtrack")}, ${((t["wallMs"] ?? 0) / 1000).toFixed(1)} s`
    )
  return lines
}

const escape = (text: string) => text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!)

/** A line's look on the page, from the words the live view starts it with. */
const classOf = (line: string): string => {
  const t = line.trim()
  if (/^(Query|Plan|Subtask \d+|Answer):?/.test(t)) return "head"
  if (t.startsWith("call ")) return "call"
  if (t.startsWith("-> ok")) return "ok"
  if (t.startsWith("-> failed") || t.startsWith("Gave up") || / failed:/.test(t)) return "fail"
  if (t.startsWith("verifier:")) return "verdict"
  if (t.startsWith("backtrack") || t.startsWith("guardrail")) return "back"
  return "text"
}

/** One self-contained page of the views. */
export const renderHtml = (views: ReadonlyArray<{ label: string; lines: ReadonlyArray<string> }>): string =>
  [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8"><title>smurfs show</title>',
    "<style>body{font:14px/1.45 ui-monospace,Menlo,Consolas,monospace;margin:2em;max-width:110ch;color:#222}h2{font-size:1.1em;border-bottom:1px solid #ccc}",
    ".l{white-space:pre-wrap;margin:0}.head{font-weight:bold}.call{color:#8a6d00}.ok{color:#1f7a1f}.fail{color:#b00020}.verdict{color:#1f5fa8}.back{color:#8e24aa}</style></head><body>",
    ...views.flatMap((v) => [`<h2>${escape(v.label)}</h2>`, ...v.lines.map((l) => `<p class="l ${classOf(l)}">${escape(l) || "&nbsp;"}</p>`)]),
    "</body></html>"
  ].join("\n")

export const run = (argv: string[]): Promise<number> =>
  runCommand(COMMAND, argv, async ({ values, positionals }) => {
    if (positionals.length === 0 || positionals.length > 2) throw new UsageError("give a run directory and a task id, or a trajectory file")
    const [target, taskId] = positionals as [string, string | undefined]
    const path = resolve(target)
    if (!existsSync(path)) throw new BadInput(`${target} does not exist; give a run directory made by \`smurfs bench\` and a task id, or a trajectory file`)
    let recorded: Array<Recorded>
    if (isDir(path)) {
      if (taskId === undefined) throw new UsageError(`${target} is a run directory: give the task id too (smurfs show ${target} <task id>)`)
      recorded = findInRun(path, taskId, values.method, values.group)
    } else {
      if (taskId !== undefined) throw new UsageError(`${target} is a file: a task id goes with a run directory`)
      recorded = [readRecorded(path, target)]
    }
    const views = recorded.map((r) => ({ label: r.label, lines: renderRecorded(r, values.full === true) }))
    for (const [i, view] of views.entries()) {
      if (views.length > 1) console.log(`${i > 0 ? "\n" : ""}== ${visibleText(view.label)} ==`)
      console.log(view.lines.join("\n"))
    }
    if (values.html !== undefined) {
      const problem = await writeOutputFile(values.html, renderHtml(views))
      if (problem !== undefined) throw new BadInput(`${values.html}: ${problem}; the previous file, if any, is kept as it was`)
      console.error(`wrote ${values.html}`)
    }
    return ExitCode.Ok
  })
