// The temp files of atomic writes, one way for the whole project: a name no one can predict, created exclusively
// (O_CREAT | O_EXCL | O_NOFOLLOW), so a symbolic link or a file planted at that name is never written through;
// and the synchronous atomic write built on it (the simulator's shared cache, the run lock).
//
// A shared folder (a team's `--cache-dir`) may be writable by others: with a predictable temp name
// (`<file>.<pid>.tmp`) opened with "w", anyone could plant a link there and have a user overwrite any file
// that user can write.
import { randomBytes } from "node:crypto"
import { closeSync, constants, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { assertStillInsideSync, refuseSymlinksSync } from "./guarded-fs.ts"

/** Temporary files of an unfinished atomic write carry this marker; a run directory removes them when it is opened. */
export const TMP_MARK = ".tmp-"

/** A temp file's path beside `file`: the file's name, TMP_MARK and 96 random bits (no pid, no clock, no Math.random). */
export const tempPathOf = (file: string): string =>
  join(dirname(file), `${basename(file)}${TMP_MARK}${randomBytes(12).toString("hex")}`)

/** How a temp file is opened: new (EEXIST otherwise), never through a symbolic link (ELOOP), write only. */
export const TEMP_OPEN_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

/** The synchronous file-system calls of an atomic write; tests pass a faulty one (a disk that fills mid-write). */
export interface SyncWriteFs {
  readonly openSync: (path: string, flags: number, mode: number) => number
  readonly writeSync: (fd: number, buffer: Uint8Array, offset: number, length: number) => number
  readonly fsyncSync: (fd: number) => void
  readonly closeSync: (fd: number) => void
  readonly renameSync: (from: string, to: string) => void
  readonly unlinkSync: (path: string) => void
}

export const nodeSyncWriteFs: SyncWriteFs = {
  openSync: (path, flags, mode) => openSync(path, flags, mode),
  writeSync: (fd, buffer, offset, length) => writeSync(fd, buffer, offset, length),
  fsyncSync,
  closeSync,
  renameSync,
  unlinkSync
}

/** A write that stopped short: the file system took fewer bytes than asked and then none (a full disk). */
export class ShortWrite extends Error {
  readonly code = "ENOSPC"
  constructor(path: string, written: number, total: number) {
    super(`only ${written} of ${total} bytes of ${path} could be written (the disk is full?)`)
  }
}

export interface AtomicSyncOptions {
  /** The file system of the write; tests pass a faulty one. */
  readonly fs?: SyncWriteFs | undefined
  readonly mode?: number | undefined
  /** A folder the file must stay in (a run directory): no symbolic link below it is followed, before or after the open. */
  readonly root?: string | undefined
}

/**
 * Write `data` to `file` all or nothing: an exclusive temp file beside it, every byte written and counted,
 * fsync, then the rename. When any step fails (ENOSPC, a short write, EIO) the temp file is removed, the
 * old file is left as it was, and the error is thrown for the caller to report.
 */
export const writeFileAtomicSync = (file: string, data: string | Uint8Array, options: AtomicSyncOptions = {}): void => {
  const fs = options.fs ?? nodeSyncWriteFs
  const root = options.root
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data
  const tmp = tempPathOf(file)
  if (root !== undefined) refuseSymlinksSync(root, dirname(file))
  let fd: number | undefined = fs.openSync(tmp, TEMP_OPEN_FLAGS, options.mode ?? 0o644)
  try {
    // a folder swapped for a link between the check and the open (a race) gets no byte, and no rename into it
    if (root !== undefined) assertStillInsideSync(root, dirname(file))
    for (let offset = 0; offset < bytes.length; ) {
      const n = fs.writeSync(fd, bytes, offset, bytes.length - offset)
      if (n <= 0) throw new ShortWrite(file, offset, bytes.length)
      offset += n
    }
    fs.fsyncSync(fd)
    const opened = fd
    fd = undefined
    fs.closeSync(opened)
    if (root !== undefined) assertStillInsideSync(root, dirname(file))
    fs.renameSync(tmp, file)
  } catch (e) {
    if (fd !== undefined)
      try {
        fs.closeSync(fd)
      } catch {
        // the write's own error is the one to report
      }
    try {
      fs.unlinkSync(tmp)
    } catch {
      // already gone
    }
    throw e
  }
}
