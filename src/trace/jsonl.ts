// Appending JSON lines to files that outlive a run (the model-reply cache, the simulated environment's store).
// A process killed in the middle of an append leaves a torn last line without its newline. The first append of
// the next process starts a fresh line, so the torn line stays on its own and readers skip it, instead of the
// new entry being glued onto it and lost too. The file is opened without following a symbolic link and
// without blocking, and must be a regular file: a link or a FIFO put in a cache folder is refused.
import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from "node:fs"
import { UnreadableFile } from "./guarded-fs.ts"

const checked = new Set<string>()

const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK

/** True when the open file is not empty and its last byte is not a newline. */
const endsTorn = (file: string): boolean => {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile() || stat.size === 0) return false
    const last = Buffer.alloc(1)
    readSync(fd, last, 0, 1, stat.size - 1)
    return last[0] !== 0x0a
  } finally {
    closeSync(fd)
  }
}

/** Append `text` to a regular file (made if missing), never through a symbolic link (ELOOP) nor to a FIFO or device. */
const append = (file: string, text: string): void => {
  const fd = openSync(file, APPEND, 0o644)
  try {
    if (!fstatSync(fd).isFile()) throw new UnreadableFile(file, "not a regular file, so nothing is appended to it")
    const bytes = Buffer.from(text, "utf8")
    for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset, bytes.length - offset)
  } finally {
    closeSync(fd)
  }
}

/** Append `value` as one JSON line; throws what the file system throws (callers decide what a failed write costs). */
export const appendJsonLine = (file: string, value: unknown): void => {
  const line = `${JSON.stringify(value)}\n`
  if (!checked.has(file)) {
    checked.add(file)
    append(file, "") // made if missing, refused if it is a link, a FIFO or a device
    if (endsTorn(file)) {
      append(file, `\n${line}`)
      return
    }
  }
  append(file, line)
}

/**
 * The entries of a JSON-lines file this project appended to: lines that do not parse are torn writes of an
 * interrupted run and are skipped (counted in `torn`), never an error.
 */
export const parseAppendedLines = (
  text: string
): { readonly entries: ReadonlyArray<unknown>; readonly torn: number } => {
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
