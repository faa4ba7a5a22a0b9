// What a failed file-system call means for the user: the cause named by its errno, and what to do about it.
import { existsSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import { dirname, resolve } from "node:path"
import { BadPathError } from "../bad-path.ts"
import { SymlinkBelowRoot } from "./guarded-fs.ts"

/** A run directory (or another file smurfs keeps) cannot be written or used as asked. */
export class RunDirError extends BadPathError("RunDirError") {}

export interface FsProblem {
  /** The cause, e.g. "the file system is read-only (EROFS)". */
  readonly problem: string
  /** What to do next. */
  readonly hint: string
}

/** Problem and hint for a failed write (mkdir, open, write, rename) of a run directory's files. */
export const writeProblem = (error: unknown): FsProblem => {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined
  if (error instanceof SymlinkBelowRoot)
    return {
      problem: `refusing to write through ${error.link}: it is a symbolic link, and a write there could land outside ${error.root}`,
      hint: "Replace the link with a plain folder (or remove it), or choose another directory."
    }
  switch (code) {
    case "EROFS":
      return {
        problem: "cannot write: the file system is read-only (EROFS)",
        hint: "Choose a directory on a writable file system (--out), or remount this one read-write."
      }
    case "ENOSPC":
      return {
        problem: "cannot write: the disk is full (ENOSPC)",
        hint: "Free some space (or choose another --out), then run the same command again."
      }
    case "EDQUOT":
      return {
        problem: "cannot write: the disk quota is exceeded (EDQUOT)",
        hint: "Free some space within your quota (or choose another --out), then run the same command again."
      }
    case "EACCES":
    case "EPERM":
      return {
        problem: `cannot write: permission denied (${code})`,
        hint: "Choose a directory you can write to (--out), or fix its permissions."
      }
    case "ENOTDIR":
    case "EEXIST":
      return {
        problem: `cannot write: a file stands where a directory should be (${code})`,
        hint: "Choose another --out, or move that file away."
      }
    default:
      return {
        problem: `cannot write (${error instanceof Error ? error.message : String(error)})`,
        hint: "Check that the run directory is writable and the disk is not full."
      }
  }
}

/**
 * `mkdir -p` that fails with the real cause: Node's recursive mkdir reports ENOENT on a read-only
 * file system (and some other refusals), so on ENOENT the first missing directory is made alone to
 * surface EROFS, EACCES or ENOSPC.
 */
export const makeDirectory = async (dir: string): Promise<void> => {
  try {
    await mkdir(dir, { recursive: true })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e
    let first = resolve(dir)
    while (!existsSync(dirname(first)) && dirname(first) !== first) first = dirname(first)
    await mkdir(first) // throws the real cause
    throw e
  }
}
