// Progress of a benchmark run on stderr: a live bar on a terminal, one line per task otherwise; model calls and tokens count as they happen.

import cliProgress from "cli-progress"
import { plural } from "../src/plural.ts"
import { visibleText } from "../src/trace/visible-text.ts"

/** What the runner reports when a task (one query, one method) finishes. */
export interface TaskDone {
  readonly method: string
  readonly group: string
  readonly taskId: string
  readonly finishType: "give_answer" | "give_up" | "error" | "unreachable" | "failed"
  readonly modelCalls: number
  readonly tokens: number
  readonly wallMs: number
}

/** Which task: a method on a query. */
export type TaskKey = Pick<TaskDone, "method" | "group" | "taskId">

const keyOf = (task: TaskKey) => `${task.method}\u0000${task.group}\u0000${task.taskId}`

export interface Progress {
  /** The run starts: `total` tasks, of which `skipped` were already done (resume). */
  readonly start: (total: number, skipped: number) => void
  readonly taskDone: (done: TaskDone) => void
  /** A model call ended (the count moves while a task is still running); `tokens` is its prompt + completion. */
  readonly modelCall?: ((tokens: number) => void) | undefined
  /**
   * A task that runs elsewhere (a queue worker) made `modelCalls` calls and used `tokens` tokens so far; when it
   * is done, what its record counts beyond the last report is added, so no call is missed or counted twice.
   */
  readonly taskCalls?: ((task: TaskKey, modelCalls: number, tokens: number) => void) | undefined
  /** A line of text that must not tear the bar. */
  readonly log: (text: string) => void
  readonly stop: () => void
  /** What this run did so far, for the summary at the end. */
  readonly totals?: (() => ProgressTotals) | undefined
}

export interface ProgressTotals {
  /** Tasks finished by this invocation (answered, given up or failed). */
  readonly finished: number
  /** Of those, the ones with an answer (not yet judged: "answered", never "solved"). */
  readonly answered: number
  readonly modelCalls: number
  readonly tokens: number
  readonly wallMs: number
}

export interface ProgressOptions {
  /** Where to write; stderr by default. */
  readonly stream?: NodeJS.WriteStream | undefined
  /** Force the live bar (true) or the line log (false); by default the bar when the stream is a terminal. */
  readonly tty?: boolean | undefined
  /** The clock, in milliseconds (tests). */
  readonly now?: (() => number) | undefined
}

/** Progress that prints nothing (tests, library use). */
export const silentProgress: Progress = { start: () => {}, taskDone: () => {}, log: () => {}, stop: () => {} }

const compact = (n: number): string =>
  n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n)

/** A duration as a person reads it: 45s, 3m05s, 1h02m. */
export const formatDuration = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
}

/** Tasks finished in this invocation before an ETA is shown: fewer say nothing about the rate. */
const ETA_AFTER_TASKS = 2

/**
 * The remaining time from this invocation's own rate (skipped tasks took no time), or undefined while
 * there is too little to estimate from.
 */
export const estimateRemaining = (finishedNow: number, remaining: number, elapsedMs: number): number | undefined =>
  finishedNow < ETA_AFTER_TASKS || elapsedMs <= 0 ? undefined : (elapsedMs / finishedNow) * remaining

/** What the live bar shows, as text. */
export interface BarFields {
  readonly value: number
  readonly total: number
  readonly answered: number
  readonly calls: string
  readonly tokens: string
  readonly remaining: string
}

const BAR_MAX = 40
const BAR_MIN = 10

/**
 * The live bar's line fitted to a terminal of `columns` (one column is left free, so the terminal never
 * wraps it): the bar shrinks first, then the least useful fields go (tokens, answered, the bar itself,
 * model calls); the task count and the ETA stay.
 */
export const fitProgressLine = (columns: number, f: BarFields, progress: number): string => {
  const width = Math.max(1, columns - 1)
  const tasks = `${f.value}/${f.total} tasks`,
    eta = `ETA ${f.remaining}`
  const answered = `answered ${f.answered}`,
    calls = `model calls ${f.calls}`,
    tokens = `tokens ${f.tokens}`
  const bar = (size: number) => {
    const done = Math.round(Math.min(1, Math.max(0, progress)) * size)
    return "\u2588".repeat(done) + "\u2591".repeat(size - done)
  }
  const withBar: ReadonlyArray<ReadonlyArray<string>> = [
    [tasks, answered, calls, tokens, eta],
    [tasks, answered, calls, eta],
    [tasks, calls, eta]
  ]
  for (const fields of withBar) {
    const text = fields.join(" | ")
    if (text.length + 1 + BAR_MIN <= width) return `${bar(Math.min(BAR_MAX, width - text.length - 1))} ${text}`
  }
  for (const fields of [
    [tasks, calls, eta],
    [tasks, eta]
  ]) {
    const text = fields.join(" | ")
    if (text.length <= width) return text
  }
  return `${tasks} | ${eta}`.slice(0, width)
}

/**
 * A long message wrapped at spaces to a terminal of `columns`, continuation lines indented, so the
 * terminal never breaks it mid-number: a number stays on the line of the word after it ("103 model calls").
 * Without a width (not a terminal) it stays one line.
 */
export const wrapToWidth = (text: string, columns: number | undefined): string => {
  if (columns === undefined || columns <= 20 || text.length < columns) return text
  // a number and the word after it are one piece
  const pieces = text.split(" ").reduce<Array<string>>((acc, word) => {
    const last = acc.at(-1)
    if (last !== undefined && /^\(?[\d.,]+%?$/.test(last.split("\u0000").at(-1)!))
      acc[acc.length - 1] = `${last}\u0000${word}`
    else acc.push(word)
    return acc
  }, [])
  const lines: Array<string> = []
  let line = ""
  for (const piece of pieces.map((p) => p.replace(/\u0000/g, " "))) {
    if (line !== "" && line.length + 1 + piece.length > columns - 1) {
      lines.push(line)
      line = `  ${piece}`
    } else line = line === "" ? piece : `${line} ${piece}`
  }
  lines.push(line)
  return lines.join("\n")
}

export const makeProgress = (options: ProgressOptions = {}): Progress => {
  const stream = options.stream ?? process.stderr
  const tty = options.tty ?? stream.isTTY === true
  const now = options.now ?? Date.now
  let total = 0,
    skipped = 0,
    finished = 0,
    answered = 0,
    calls = 0,
    tokens = 0,
    started = now()
  // calls reported live by this process's model; a runner that does not report them live still counts through taskDone
  let live = false
  // calls of tasks run elsewhere, as their workers reported them so far (taskDone adds the rest)
  const reported = new Map<string, { calls: number; tokens: number }>()
  let bar: cliProgress.SingleBar | undefined
  const eta = () => {
    const ms = estimateRemaining(finished, total - skipped - finished, now() - started)
    return ms === undefined ? "estimating" : formatDuration(ms)
  }
  // `remaining`, not `eta`: cli-progress fills its own `{eta}` (seconds, or "INF"), which would hide ours
  const payload = () => ({ answered, calls: compact(calls), tokens: compact(tokens), remaining: eta() })
  return {
    start: (all, done) => {
      total = all
      skipped = done
      started = now()
      if (tty) {
        bar = new cliProgress.SingleBar(
          {
            stream,
            // fitted to the terminal's width (cli-progress cuts a longer line at the edge, ETA first); the counts are
            // read when the bar is drawn (every 100 ms at most), not handed to it on every model call
            format: (_options, params) =>
              fitProgressLine(
                params.maxWidth,
                { ...payload(), value: params.value, total: params.total },
                params.progress
              ),
            hideCursor: true
          },
          cliProgress.Presets.shades_classic
        )
        bar.start(total, skipped, payload())
      } else {
        stream.write(`${plural(total, "task")}${skipped > 0 ? `, ${skipped} already done` : ""}\n`)
      }
    },
    modelCall: (used) => {
      // the bar draws the counts as they are when it next draws (format above)
      live = true
      calls++
      tokens += used
    },
    taskCalls: (task, soFarCalls, soFarTokens) => {
      const key = keyOf(task)
      const seen = reported.get(key) ?? { calls: 0, tokens: 0 }
      calls += Math.max(0, soFarCalls - seen.calls)
      tokens += Math.max(0, soFarTokens - seen.tokens)
      reported.set(key, { calls: Math.max(seen.calls, soFarCalls), tokens: Math.max(seen.tokens, soFarTokens) })
    },
    taskDone: (done) => {
      finished++
      if (done.finishType === "give_answer") answered++
      if (!live) {
        const seen = reported.get(keyOf(done)) ?? { calls: 0, tokens: 0 }
        reported.delete(keyOf(done))
        calls += Math.max(0, done.modelCalls - seen.calls)
        tokens += Math.max(0, done.tokens - seen.tokens)
      }
      if (bar) bar.update(skipped + finished, payload())
      else
        stream.write(
          `[${skipped + finished}/${total}] ${visibleText(`${done.method} ${done.group}/${done.taskId}`)} ${done.finishType === "give_answer" ? "answered" : done.finishType} ` +
            `${done.modelCalls} calls ${done.tokens} tokens ${(done.wallMs / 1000).toFixed(1)}s | answered ${answered} | ETA ${eta()}\n`
        )
    },
    log: (text) => {
      if (bar) bar.stop()
      stream.write(`${visibleText(text)}\n`)
      if (bar) bar.start(total, skipped + finished, payload())
    },
    stop: () => {
      bar?.stop()
      bar = undefined
    },
    totals: () => ({ finished, answered, modelCalls: calls, tokens, wallMs: now() - started })
  }
}
