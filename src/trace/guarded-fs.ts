// What a run directory may hold and what smurfs does with it: writes never follow a symbolic link below
// the directory's root, and reads take only regular files, never blocking and never past a size cap.
//
// A run directory may come from someone else (a shared disk, an archive): a `tasks/<method>/<group>`
// folder that is a link to another project, a record that is a FIFO or a link to /dev/zero, must not
// make smurfs write elsewhere, hang in open(2) or read without end.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  realpathSync,
  rmdirSync,
  statSync
} from "node:fs"
import { lstat, mkdir, realpath, rmdir } from "node:fs/promises"
import { join, relative, resolve, sep } from "node:path"

/** A path with the directory it must stay in: a write to it follows no symbolic link below `root`. */
export interface RootedPath {
  readonly root: string
  readonly path: string
}

/** A write would go through a symbolic link inside a run directory (or another folder smurfs keeps). */
export class SymlinkBelowRoot extends Error {
  readonly code = "ESYMLINK"
  readonly link: string
  readonly root: string
  constructor(link: string, root: string) {
    super(`${link} is a symbolic link inside ${root}`)
    this.link = link
    this.root = root
  }
}

/** The folders from `root` (excluded) down to `path` (included): the ones a write must not find as links. */
const below = (root: string, path: string): Array<string> => {
  const rel = relative(resolve(root), resolve(path))
  if (rel === "" || rel.startsWith("..")) return []
  const parts = rel.split(sep)
  return parts.map((_, i) => join(resolve(root), ...parts.slice(0, i + 1)))
}

/**
 * Throw SymlinkBelowRoot when a folder between `root` and `path` (`path` included) is a symbolic link.
 * What does not exist yet is fine: it is made as a plain folder. `root` itself may be a link (a user's
 * `--out` on another disk); only what is below it is the run directory's own.
 */
export const refuseSymlinks = async (root: string, path: string): Promise<void> => {
  for (const p of below(root, path)) {
    let isLink: boolean
    try {
      isLink = (await lstat(p)).isSymbolicLink()
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return
      throw e
    }
    if (isLink) throw new SymlinkBelowRoot(p, root)
  }
}

/** refuseSymlinks for synchronous writers (JSON-lines appends): throws SymlinkBelowRoot naming the link. */
export const refuseSymlinksSync = (root: string, path: string): void => {
  for (const p of below(root, path)) {
    let isLink: boolean
    try {
      isLink = lstatSync(p).isSymbolicLink()
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return
      throw e
    }
    if (isLink) throw new SymlinkBelowRoot(p, root)
  }
}

/** Where `path` must really be: `root` as the system resolves it (a user's link to another disk is fine), then the rest. */
const expectedReal = (realRoot: string, root: string, path: string) => join(realRoot, relative(resolve(root), resolve(path)))

/**
 * Re-check, after an open or a mkdir, that `dir` is still where it was checked to be: a folder below `root`
 * swapped for a symbolic link between the lstat and the open (a race) shows as another real path.
 */
export const assertStillInside = async (root: string, dir: string): Promise<void> => {
  const [realRoot, realDir] = await Promise.all([realpath(root), realpath(dir)])
  if (realDir !== expectedReal(realRoot, root, dir)) throw new SymlinkBelowRoot(dir, root)
}

export const assertStillInsideSync = (root: string, dir: string): void => {
  if (realpathSync(dir) !== expectedReal(realpathSync(root), root, dir)) throw new SymlinkBelowRoot(dir, root)
}

/**
 * Make `dir` below `root` one folder at a time, never through a symbolic link: each existing folder on the way
 * is checked with lstat, each new one is made alone (mkdir does not follow a link at its own name), and at the
 * end the real path is checked again; folders this call made where a race put them elsewhere are removed.
 */
export const makeDirectoryInside = async (root: string, dir: string): Promise<void> => {
  await mkdir(root, { recursive: true })
  const made: Array<string> = []
  for (const p of below(root, dir)) {
    try {
      await mkdir(p)
      made.push(p)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    }
    if ((await lstat(p)).isSymbolicLink()) throw new SymlinkBelowRoot(p, root)
  }
  try {
    await assertStillInside(root, dir)
  } catch (e) {
    for (const p of made.reverse()) await rmdir(p).catch(() => undefined)
    throw e
  }
}

export const makeDirectoryInsideSync = (root: string, dir: string): void => {
  mkdirSync(root, { recursive: true })
  const made: Array<string> = []
  for (const p of below(root, dir)) {
    try {
      mkdirSync(p)
      made.push(p)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    }
    if (lstatSync(p).isSymbolicLink()) throw new SymlinkBelowRoot(p, root)
  }
  try {
    assertStillInsideSync(root, dir)
  } catch (e) {
    for (const p of made.reverse())
      try {
        rmdirSync(p)
      } catch {
        // not ours to keep or remove any more
      }
    throw e
  }
}

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
