// Reading a file smurfs did not write (a user's checkout, data, a run directory from elsewhere): regular files only,
// never blocking in open(2) on a FIFO, never reading past a size cap, with a message naming the file.
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs"

/** A read refused: the path is no regular file, or is larger than the reader takes. */
export class UnreadableFile extends Error {
  readonly code = "EUNREADABLE"
  readonly path: string
  readonly problem: string
  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`)
    this.path = path
    this.problem = problem
  }
}

/** Larger than any file smurfs writes (a task record is at most 1 MiB by default; a converted file holds a group's). */
export const READ_CAP_BYTES = 512 * 1024 * 1024

const kindOf = (stat: {
  isDirectory(): boolean
  isFIFO(): boolean
  isCharacterDevice(): boolean
  isBlockDevice(): boolean
  isSocket(): boolean
}) =>
  stat.isDirectory()
    ? "a directory"
    : stat.isFIFO()
      ? "a FIFO (named pipe)"
      : stat.isCharacterDevice() || stat.isBlockDevice()
        ? "a device"
        : stat.isSocket()
          ? "a socket"
          : "not a regular file"

/** At most this much of one prompt or source file of a user's checkout is read (theirs are a few KiB). */
export const SOURCE_FILE_CAP_BYTES = 16 * 1024 * 1024

/**
 * A descriptor of a regular file for a streaming reader (a `responses.jsonl` of any size): refused before the
 * open when it is a FIFO, a device, a socket or a directory, opened non-blocking and checked again on the
 * descriptor. Throws UnreadableFile naming the file, or what the file system throws (ENOENT...).
 */
export const openRegularFile = (path: string): number => {
  const before = statSync(path)
  if (!before.isFile()) throw new UnreadableFile(path, `${kindOf(before)}, not a file smurfs reads`)
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const stat = fstatSync(fd)
  if (!stat.isFile()) {
    closeSync(fd)
    throw new UnreadableFile(path, `${kindOf(stat)}, not a file smurfs reads`)
  }
  return fd
}

/**
 * The text of a regular file, at most `maxBytes` long. A FIFO, a device, a socket or a directory is
 * refused before it is opened (and checked again on the open descriptor, which is opened non-blocking
 * so that a FIFO put in place meanwhile never blocks); a larger file is refused, not read. Throws
 * UnreadableFile, or what the file system throws (ENOENT...).
 */
export const readFileBounded = (path: string, maxBytes: number = READ_CAP_BYTES): string => {
  const before = statSync(path)
  if (!before.isFile()) throw new UnreadableFile(path, `${kindOf(before)}, not a file smurfs reads`)
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw new UnreadableFile(path, `${kindOf(stat)}, not a file smurfs reads`)
    if (stat.size > maxBytes)
      throw new UnreadableFile(path, `${stat.size} bytes, more than the ${maxBytes} smurfs reads of one file`)
    // read to the end, but never past the cap, even if the file grows meanwhile
    const chunks: Array<Buffer> = []
    let total = 0
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(Math.max(stat.size - total, 0) + 1, 1024 * 1024, maxBytes + 1 - total))
      const n = readSync(fd, chunk, 0, chunk.length, null)
      if (n === 0) break
      chunks.push(chunk.subarray(0, n))
      total += n
      if (total > maxBytes) throw new UnreadableFile(path, `more than the ${maxBytes} bytes smurfs reads of one file`)
    }
    return Buffer.concat(chunks, total).toString("utf8")
  } finally {
    closeSync(fd)
  }
}
