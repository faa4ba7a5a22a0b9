// Atomic file writes off the event loop: readers (and a resumed run) see either the old file or the complete new one.
import { open, rename, unlink } from "node:fs/promises"
import { dirname } from "node:path"
import * as Effect from "effect/Effect"
import { makeDirectory, RunDirError, writeProblem } from "./fs-problem.ts"
import { assertStillInsideSync, makeDirectoryInside, type RootedPath, refuseSymlinksSync } from "./guarded-fs.ts"
import { TEMP_OPEN_FLAGS, TMP_MARK, tempPathOf } from "./temp-file.ts"

export { TMP_MARK }

/** The calls made on one open file; node's `FileHandle` is one. */
export interface AtomicWriteFile {
  /** Write from `buffer[offset, offset + length)` at the current position; may write fewer bytes (a filling disk). */
  readonly write: (buffer: Uint8Array, offset: number, length: number) => Promise<{ readonly bytesWritten: number }>
  readonly sync: () => Promise<void>
  readonly close: () => Promise<void>
}

/** The file-system calls of an atomic write; tests pass a faulty or slow one (a disk that fills mid-write). */
export interface AtomicWriteFs {
  readonly open: (path: string, flags: string | number) => Promise<AtomicWriteFile>
  readonly rename: (from: string, to: string) => Promise<void>
  readonly unlink: (path: string) => Promise<void>
}

/** The real file system, through node:fs/promises (the libuv thread pool), so a write never blocks the event loop. */
export const nodeAtomicWriteFs: AtomicWriteFs = { open: (path, flags) => open(path, flags), rename, unlink }

/** Write every byte or throw: `write(2)` may write fewer bytes than asked (a filling disk), and 0 bytes is no progress. */
const writeAll = async (file: AtomicWriteFile, bytes: Uint8Array): Promise<void> => {
  for (let offset = 0; offset < bytes.length; ) {
    const { bytesWritten } = await file.write(bytes, offset, bytes.length - offset)
    if (bytesWritten <= 0) throw new Error(`the file system accepted no byte at offset ${offset} of ${bytes.length}`)
    offset += bytesWritten
  }
}

/** fsync the directory so the rename itself survives a power cut. */
const syncDirectory = async (fs: AtomicWriteFs, dir: string): Promise<void> => {
  const handle = await fs.open(dir, "r")
  try {
    await handle.sync()
  } catch {
    // some file systems cannot fsync a directory; the rename is still atomic
  } finally {
    await handle.close()
  }
}

/**
 * Open the temp file, making its directory only when it is missing: a run's writes go to a few directories,
 * so most need no mkdir. TEMP_OPEN_FLAGS (O_EXCL | O_NOFOLLOW): the temp file is new, never a link or a file
 * someone put in its place.
 */
const openTemp = async (
  fs: AtomicWriteFs,
  dir: string,
  tmp: string,
  root: string | undefined
): Promise<AtomicWriteFile> => {
  try {
    return await fs.open(tmp, TEMP_OPEN_FLAGS)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e
    // fails with the real cause (EROFS, EACCES, ENOSPC...) when it cannot be made; inside a root, never through a link
    if (root === undefined) await makeDirectory(dir)
    else await makeDirectoryInside(root, dir)
    return await fs.open(tmp, TEMP_OPEN_FLAGS)
  }
}

/** A file to write: a path of the user's choice, or one inside a folder smurfs keeps, where no symbolic link is followed. */
export type WriteTarget = string | RootedPath

const pathOf = (target: WriteTarget): string => (typeof target === "string" ? target : target.path)

/**
 * The whole write as one promise, so that an interrupted fiber never cuts it short: a temp file in the
 * same directory, every byte written and checked, fsync, rename, fsync of the directory. A write that
 * fails (a full disk) never renames, and removes its temp file. Inside a root, a folder on the way that
 * is a symbolic link is refused before anything is made or written (the rename replaces a link at the
 * file's own name, it never writes through it).
 */
const writeAtomically = async (target: WriteTarget, bytes: Uint8Array, fs: AtomicWriteFs): Promise<void> => {
  const file = pathOf(target)
  const dir = dirname(file)
  // the checks of the folders are lstat and realpath calls the kernel answers from its caches: made here, each costs
  // the event loop a few microseconds, where a trip to the thread pool and back costs it twenty (a record's write
  // made seven of them, of fifteen)
  if (typeof target !== "string") refuseSymlinksSync(target.root, dir)
  const root = typeof target === "string" ? undefined : target.root
  const tmp = tempPathOf(file)
  let handle: AtomicWriteFile | undefined = await openTemp(fs, dir, tmp, root)
  try {
    // a folder swapped for a link between the check and the open (a race) gets no byte, and no rename into it
    if (root !== undefined) assertStillInsideSync(root, dir)
    await writeAll(handle, bytes)
    await handle.sync()
    const opened = handle
    handle = undefined
    await opened.close()
    if (root !== undefined) assertStillInsideSync(root, dir)
    await fs.rename(tmp, file)
  } catch (e) {
    // nothing half-written may stay behind, let alone be renamed into place
    if (handle !== undefined) await handle.close().catch(() => undefined) // the write's own error is the one to report
    await fs.unlink(tmp).catch(() => undefined) // already gone
    throw e
  }
  await syncDirectory(fs, dir)
}

/**
 * Render, then write atomically; a value that cannot be rendered (a cycle) fails the same typed way.
 * Uninterruptible: a run stopped (Ctrl-C, another task's failure) waits the few milliseconds until its
 * writes have committed or cleaned up, so none is left half-done behind it.
 */
const writeRendered = Effect.fn("writeAtomic")(function* (file: WriteTarget, render: () => string, fs: AtomicWriteFs) {
  yield* Effect.uninterruptible(
    Effect.tryPromise({
      try: () => writeAtomically(file, Buffer.from(render(), "utf8"), fs),
      catch: (e) => new RunDirError({ path: pathOf(file), ...writeProblem(e) })
    })
  )
})

/**
 * Write `text` to `file` atomically: a kill -9 at any point leaves the old file or the new one, never a
 * torn one. Runs off the event loop (the model calls of other tasks go on meanwhile). Failures are a
 * RunDirError naming the cause and what to do: a full disk (ENOSPC), a read-only file system (EROFS), a quota (EDQUOT),
 * a symbolic link inside the root it must stay in...
 */
export const writeTextAtomic = (
  file: WriteTarget,
  text: string,
  fs: AtomicWriteFs = nodeAtomicWriteFs
): Effect.Effect<void, RunDirError> => writeRendered(file, () => text, fs)

/** `value` as indented JSON and a final newline, written atomically (see writeTextAtomic). */
export const writeJsonAtomic = (
  file: WriteTarget,
  value: unknown,
  fs: AtomicWriteFs = nodeAtomicWriteFs
): Effect.Effect<void, RunDirError> => writeRendered(file, () => `${JSON.stringify(value, null, 2)}\n`, fs)
