// Appending JSON lines to files that outlive a run (the model-reply cache, the simulated environment's store).
// A process killed in the middle of an append leaves a torn last line without its newline. The first append of
// the next process starts a fresh line, so the torn line stays on its own and readers skip it, instead of the
// new entry being glued onto it and lost too.
import { appendFileSync, closeSync, fstatSync, openSync, readSync } from "node:fs"

const checked = new Set<string>()

/** True when `file` exists, is not empty and its last byte is not a newline. */
const endsTorn = (file: string): boolean => {
  let fd: number
  try {
    fd = openSync(file, "r")
  } catch {
    return false
  }
  try {
    const size = fstatSync(fd).size
    if (size === 0) return false
    const last = Buffer.alloc(1)
    readSync(fd, last, 0, 1, size - 1)
    return last[0] !== 0x0a
  } finally {
    closeSync(fd)
  }
}

/** Append `value` as one JSON line; throws what the file system throws (callers decide what a failed write costs). */
export const appendJsonLine = (file: string, value: unknown): void => {
  const line = `${JSON.stringify(value)}\n`
  if (!checked.has(file)) {
    checked.add(file)
    if (endsTorn(file)) return appendFileSync(file, `\n${line}`)
  }
  appendFileSync(file, line)
}

/**
 * The entries of a JSON-lines file this project appended to: lines that do not parse are torn writes of an
 * interrupted run and are skipped (counted in `torn`), never an error.
 */
export const parseAppendedLines = (text: string): { readonly entries: ReadonlyArray<unknown>; readonly torn: number } => {
  const entries: Array<unknown> = []
  let torn = 0
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    try {
      entries.push(JSON.parse(line))
    } catch {
      torn++
    }
  }
  return { entries, torn }
}
