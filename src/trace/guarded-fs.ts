// What a run directory may hold and what smurfs does with it: writes never follow a symbolic link below
// the directory's root, and reads take only regular files, never blocking and never past a size cap.
//
// A run directory may come from someone else (a shared disk, an archive): a `tasks/<method>/<group>`
// folder that is a link to another project, a record that is a FIFO or a link to /dev/zero, must not
// make smurfs write elsewhere, hang in open(2) or read without end.
import { lstatSync, mkdirSync, realpathSync, rmdirSync } from "node:fs"
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
const expectedReal = (realRoot: string, root: string, path: string) =>
  join(realRoot, relative(resolve(root), resolve(path)))

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

export {
  openRegularFile,
  READ_CAP_BYTES,
  readFileBounded,
  SOURCE_FILE_CAP_BYTES,
  UnreadableFile
} from "../text/regular-file.ts"
