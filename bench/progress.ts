// Progress of a benchmark run on stderr: a live bar on a terminal, one line per task otherwise.
import cliProgress from "cli-progress"

/** What the runner reports when a task (one query, one method) finishes. */
export interface TaskDone {
  readonly method: string
  readonly group: string
  readonly taskId: string
  readonly finishType: "give_answer" | "give_up" | "error" | "failed"
  readonly modelCalls: number
  readonly tokens: number
  readonly wallMs: number
}

export interface Progress {
  /** The run starts: `total` tasks, of which `skipped` were already done (resume). */
  readonly start: (total: number, skipped: number) => void
  readonly taskDone: (done: TaskDone) => void
  /** A line of text that must not tear the bar. */
  readonly log: (text: string) => void
  readonly stop: () => void
}

export interface ProgressOptions {
  /** Where to write; stderr by default. */
  readonly stream?: NodeJS.WriteStream | undefined
  /** Force the live bar (true) or the line log (false); by default the bar when the stream is a terminal. */
  readonly tty?: boolean | undefined
}

/** Progress that prints nothing (tests, library use). */
export const silentProgress: Progress = { start: () => {}, taskDone: () => {}, log: () => {}, stop: () => {} }

const compact = (n: number): string => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n))

export const makeProgress = (options: ProgressOptions = {}): Progress => {
  const stream = options.stream ?? process.stderr
  const tty = options.tty ?? stream.isTTY === true
  let total = 0, finished = 0, solved = 0, calls = 0, tokens = 0
  let bar: cliProgress.SingleBar | undefined
  const payload = () => ({ solved, calls: compact(calls), tokens: compact(tokens) })
  return {
    start: (all, skipped) => {
      total = all
      finished = skipped
      if (tty) {
        bar = new cliProgress.SingleBar(
          {
            stream,
            format: "{bar} {value}/{total} tasks | solved {solved} | model calls {calls} | tokens {tokens} | ETA {eta_formatted}",
            hideCursor: true,
            etaBuffer: 50
          },
          cliProgress.Presets.shades_classic
        )
        bar.start(total, finished, payload())
      } else {
        stream.write(`${total} tasks${skipped > 0 ? `, ${skipped} already done` : ""}\n`)
      }
    },
    taskDone: (done) => {
      finished++
      if (done.finishType === "give_answer") solved++
      calls += done.modelCalls
      tokens += done.tokens
      if (bar) bar.update(finished, payload())
      else
        stream.write(
          `[${finished}/${total}] ${done.method} ${done.group}/${done.taskId} ${done.finishType} ` +
            `${done.modelCalls} calls ${done.tokens} tokens ${(done.wallMs / 1000).toFixed(1)}s | solved ${solved}\n`
        )
    },
    log: (text) => {
      if (bar) bar.stop()
      stream.write(`${text}\n`)
      if (bar) bar.start(total, finished, payload())
    },
    stop: () => {
      bar?.stop()
      bar = undefined
    }
  }
}
