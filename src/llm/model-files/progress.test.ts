import { PassThrough } from "node:stream"
import { expect, it } from "vitest"
import type { DownloadProgress } from "./download.ts"
import { downloadReporter, formatBytes } from "./progress.ts"

const sink = () => {
  const stream = new PassThrough() as unknown as NodeJS.WriteStream & PassThrough
  let text = ""
  stream.on("data", (d: Buffer) => {
    text += d.toString()
  })
  return { stream, text: () => text }
}
const at = (received: number, done = false): DownloadProgress => ({
  url: "http://h/m.gguf",
  path: "/c/m.gguf",
  received,
  total: 1_000_000,
  resumedFrom: 0,
  done
})

it("not on a terminal: a line at the start, one per interval, one at the end", () => {
  const out = sink()
  let now = 0
  const r = downloadReporter({ stream: out.stream, tty: false, intervalMs: 5000, now: () => now })
  r.onProgress(at(1000))
  now = 1000
  r.onProgress(at(200_000))
  now = 6000
  r.onProgress(at(500_000))
  now = 7000
  r.onProgress(at(600_000))
  r.onProgress(at(1_000_000, true))
  expect(out.text().split("\n")).toEqual([
    "m.gguf: downloading 1.00 MB",
    "m.gguf: 500 kB of 1.00 MB (50%), 83.3 kB/s",
    "m.gguf: done, 1.00 MB",
    ""
  ])
})

it("on a terminal: a bar with the percentage and the sizes", () => {
  const out = sink()
  Object.assign(out.stream, { isTTY: true, columns: 120 })
  const r = downloadReporter({ stream: out.stream, tty: true, label: "model" })
  r.onProgress(at(250_000))
  r.onProgress(at(1_000_000, true))
  expect(out.text()).toContain("model")
  expect(out.text()).toMatch(/100% 1\.00 MB\/1\.00 MB/)
})

it("bytes read as people read them", () => {
  expect(formatBytes(17)).toBe("17 B")
  expect(formatBytes(1_280_000_000)).toBe("1.28 GB")
  expect(formatBytes(236_000_000)).toBe("236 MB")
})
