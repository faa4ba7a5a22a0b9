// How a download shows: a progress bar on a terminal, a line every few seconds in a log or a pipe.
import { basename } from "node:path"
import cliProgress from "cli-progress"
import type { DownloadProgress } from "./download.ts"

/** Bytes as people read them: 1.28 GB, 512.0 kB, 17 B (decimal units, as Hugging Face shows sizes). */
export const formatBytes = (n: number): string => {
  if (n < 1000) return `${n} B`
  const units = ["kB", "MB", "GB", "TB"]
  let v = n / 1000
  let i = 0
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000
    i++
  }
  return `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[i]}`
}

export interface DownloadReporter {
  readonly onProgress: (progress: DownloadProgress) => void
  readonly onWait: (holder: { pid: number; host: string }) => void
  /** Stop the bar (call once, however the download ended). */
  readonly stop: () => void
}

export interface ReporterOptions {
  /** What is downloading, as the lines name it (default: the file's name, from the first progress). */
  readonly label?: string | undefined
  /** Where it shows: stderr. */
  readonly stream?: NodeJS.WriteStream | undefined
  /** A bar when the stream is a terminal (default: whether it is one). */
  readonly tty?: boolean | undefined
  /** Seconds between lines when not a terminal: 5. */
  readonly intervalMs?: number | undefined
  readonly now?: (() => number) | undefined
}

/**
 * A reporter for `downloadFile`/`resolveModelSource`'s `onProgress`: a cli-progress bar on a terminal
 * (received/total, percent, speed), else a line on the first bytes, every `intervalMs` and at the end.
 */
export const downloadReporter = (options: ReporterOptions): DownloadReporter => {
  const stream = options.stream ?? process.stderr
  const tty = options.tty ?? stream.isTTY === true
  const interval = options.intervalMs ?? 5000
  const now = options.now ?? Date.now
  let bar: cliProgress.SingleBar | undefined
  let lastLine = Number.NEGATIVE_INFINITY
  let started = now()
  let startBytes = 0
  let finished = false
  let label = options.label
  const speed = (received: number) => {
    const s = (now() - started) / 1000
    return s > 0.5 ? `${formatBytes(Math.round((received - startBytes) / s))}/s` : ""
  }
  const line = (p: DownloadProgress) =>
    p.total
      ? `${label}: ${formatBytes(p.received)} of ${formatBytes(p.total)} (${Math.floor((100 * p.received) / p.total)}%)${speed(p.received) ? `, ${speed(p.received)}` : ""}`
      : `${label}: ${formatBytes(p.received)}`
  return {
    onProgress: (p) => {
      if (finished) return
      label ??= basename(p.path)
      if (p.done) {
        finished = true
        if (bar) {
          bar.update(p.received, { size: formatBytes(p.received), speed: "" })
          bar.stop()
        } else stream.write(`${label}: done, ${formatBytes(p.received)}\n`)
        return
      }
      if (tty) {
        if (!bar) {
          started = now()
          startBytes = p.resumedFrom
          bar = new cliProgress.SingleBar(
            {
              stream,
              format: (_o, params, fields) => {
                const f = fields as { size: string; speed: string }
                return `${label} ${cliProgress.Format.BarFormat(params.progress, _o)} ${Math.floor(params.progress * 100)}% ${formatBytes(params.value)}/${f.size} ${f.speed}`
              },
              hideCursor: true
            },
            cliProgress.Presets.shades_classic
          )
          bar.start(p.total ?? 0, p.received, { size: p.total ? formatBytes(p.total) : "?", speed: "" })
        }
        if (p.total) bar.setTotal(p.total)
        bar.update(p.received, { size: p.total ? formatBytes(p.total) : "?", speed: speed(p.received) })
        return
      }
      const t = now()
      if (lastLine === Number.NEGATIVE_INFINITY) {
        started = t
        startBytes = p.resumedFrom
        stream.write(
          `${label}: downloading${p.total ? ` ${formatBytes(p.total)}` : ""}${p.resumedFrom > 0 ? `, resuming at ${formatBytes(p.resumedFrom)}` : ""}\n`
        )
        lastLine = t
      } else if (t - lastLine >= interval) {
        stream.write(`${line(p)}\n`)
        lastLine = t
      }
    },
    onWait: (holder) =>
      stream.write(
        `${label ?? "the download"}: another process (pid ${holder.pid}${holder.host ? ` on ${holder.host}` : ""}) is downloading it; waiting for it\n`
      ),
    stop: () => {
      if (bar && !finished) bar.stop()
      finished = true
    }
  }
}
