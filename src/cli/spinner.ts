// A one-line spinner on a terminal while the agents wait for the model: the calling role and the time waited (retry backoff included).
import type { ModelCallObserver } from "../llm/observe.ts"

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

export interface SpinnerOptions {
  /** Where the spinner draws; it must be a terminal (the caller decides). */
  readonly stream: Pick<NodeJS.WriteStream, "write">
  /** Redraw interval in milliseconds. */
  readonly intervalMs?: number | undefined
  readonly now?: (() => number) | undefined
}

export interface Spinner extends ModelCallObserver {
  /** Write lines without tearing the spinner: it is cleared first and drawn again after. */
  readonly writeLine: (line: string) => void
  readonly stop: () => void
}

/** The text of the spinner line: the latest call's role, how long the oldest pending call has waited, and how many are pending. */
export const spinnerText = (frame: number, roles: ReadonlyArray<string>, waitedMs: number): string =>
  `${FRAMES[frame % FRAMES.length]} ${roles.at(-1)}${roles.length > 1 ? ` (+${roles.length - 1} more)` : ""} waiting for the model ${(waitedMs / 1000).toFixed(1)}s`

export const makeSpinner = (options: SpinnerOptions): Spinner => {
  const now = options.now ?? Date.now
  const pending: Array<{ role: string; since: number }> = []
  let frame = 0
  let drawn = false
  let timer: ReturnType<typeof setInterval> | undefined
  const clear = () => {
    if (drawn) options.stream.write("\r\x1b[2K")
    drawn = false
  }
  const draw = () => {
    if (pending.length === 0) return clear()
    options.stream.write(
      `\r\x1b[2K${spinnerText(
        frame++,
        pending.map((p) => p.role),
        now() - pending[0]!.since
      )}`
    )
    drawn = true
  }
  const halt = () => {
    if (timer !== undefined) clearInterval(timer)
    timer = undefined
    clear()
  }
  return {
    onStart: (role) => {
      pending.push({ role, since: now() })
      if (timer === undefined) {
        timer = setInterval(draw, options.intervalMs ?? 100)
        // a spinner never keeps the process alive
        timer.unref()
      }
      draw()
    },
    onEnd: (role) => {
      const at = pending.findIndex((p) => p.role === role)
      if (at >= 0) pending.splice(at, 1)
      if (pending.length === 0) halt()
      else draw()
    },
    writeLine: (line) => {
      const was = drawn
      clear()
      options.stream.write(`${line}\n`)
      if (was) draw()
    },
    stop: () => {
      pending.length = 0
      halt()
    }
  }
}
