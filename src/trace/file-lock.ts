// A short-lived lock beside a shared file (`<file>.lock`), so that processes adding to the same file merge
// instead of overwriting each other. The lock names its owner (pid, host, start time); one whose owner is
// gone, that is dated in the future, or that is no regular file (a directory) is taken over, saying so;
// waiting is bounded and stops at once when the caller is interrupted (Ctrl-C, SIGTERM).
import { randomBytes } from "node:crypto"
import { closeSync, linkSync, lstatSync, openSync, renameSync, rmSync, unlinkSync, writeSync } from "node:fs"
import { hostname } from "node:os"
import { setTimeout as sleep } from "node:timers/promises"
import { readFileBounded } from "./guarded-fs.ts"
import { TEMP_OPEN_FLAGS, tempPathOf } from "./temp-file.ts"

export interface LockOwner {
  readonly pid: number
  readonly host: string
  readonly startedAt: string
  readonly token: string
}

/** A lock held longer than this was left by a process that died (or hangs) mid-write: writes under it take milliseconds. */
export const STALE_LOCK_MS = 30_000
/** How long a writer waits for a live holder before giving up (the caller reports it; nothing is lost but a cache entry). */
export const LOCK_WAIT_MS = 10_000
/** A lock dated more than this ahead of our clock is not a live one (clocks of hosts sharing a disk differ a little). */
const FUTURE_SLACK_MS = 60_000
/** A lock file just created is written at once; one still empty or unreadable after this is a leftover. */
const UNREADABLE_GRACE_MS = 2_000

/** The lock stayed held by a live owner for the whole wait. */
export class LockBusy extends Error {
  readonly code = "ELOCKED"
  readonly lock: string
  readonly owner: LockOwner | undefined
  constructor(lock: string, owner: LockOwner | undefined, waitedMs: number) {
    super(
      `${lock} is held by ${owner ? `pid ${owner.pid} on ${owner.host} since ${owner.startedAt}` : "another process"} ` +
        `(waited ${Math.round(waitedMs / 1000)} s); if that process is gone, delete the lock`
    )
    this.lock = lock
    this.owner = owner
  }
}

const readOwner = (path: string): LockOwner | undefined => {
  try {
    const value = JSON.parse(readFileBounded(path, 4096)) as Partial<LockOwner> | null
    return typeof value?.pid === "number" &&
      typeof value.host === "string" &&
      typeof value.startedAt === "string" &&
      typeof value.token === "string"
      ? (value as LockOwner)
      : undefined
  } catch {
    return undefined
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Why the lock at `path` is stale, or undefined while its owner may still hold it. */
const staleReason = (path: string, now: number): string | undefined => {
  let stat: ReturnType<typeof lstatSync>
  try {
    stat = lstatSync(path)
  } catch {
    return undefined // released meanwhile: the next attempt takes it
  }
  if (stat.isDirectory()) return "it is a directory"
  if (stat.isSymbolicLink()) return "it is a symbolic link"
  if (!stat.isFile()) return "it is not a regular file"
  if (stat.mtimeMs > now + FUTURE_SLACK_MS) return `it is dated in the future (${stat.mtime.toISOString()})`
  const owner = readOwner(path)
  if (owner === undefined)
    return now - stat.mtimeMs > UNREADABLE_GRACE_MS
      ? "it names no owner (a leftover of another version or a crash)"
      : undefined
  if (owner.host === hostname() && !alive(owner.pid)) return `its owner, pid ${owner.pid}, is gone`
  if (now - stat.mtimeMs > STALE_LOCK_MS)
    return `it has been held since ${owner.startedAt}, longer than any write takes`
  return undefined
}

/** Create the lock complete (its owner written before it appears), exclusively; false when one exists. */
const tryCreate = (path: string, owner: LockOwner): boolean => {
  const tmp = tempPathOf(path)
  const fd = openSync(tmp, TEMP_OPEN_FLAGS, 0o644)
  try {
    const bytes = Buffer.from(`${JSON.stringify(owner)}\n`)
    for (let offset = 0; offset < bytes.length; ) {
      const n = writeSync(fd, bytes, offset, bytes.length - offset)
      if (n <= 0) throw new Error(`cannot write the lock ${path}`)
      offset += n
    }
  } finally {
    closeSync(fd)
  }
  try {
    linkSync(tmp, path) // fails with EEXIST on anything at that name, a link or a directory included
    return true
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false
    throw e
  } finally {
    rmSync(tmp, { force: true })
  }
}

/** Move a stale lock out of the way (a directory too); false when someone else did first. */
const setAside = (path: string): boolean => {
  const aside = `${path}.stale-${randomBytes(6).toString("hex")}`
  try {
    renameSync(path, aside)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false
    throw e
  }
  rmSync(aside, { recursive: true, force: true })
  return true
}

export interface FileLockOptions {
  /** Aborted when the caller is interrupted: the wait stops at once (an AbortError is thrown). */
  readonly signal?: AbortSignal | undefined
  /** How long to wait for a live holder; LOCK_WAIT_MS by default. */
  readonly maxWaitMs?: number | undefined
  /** Told when a stale lock is taken over, with the reason. */
  readonly note?: ((line: string) => void) | undefined
}

/**
 * Hold `lock` while `body` runs (released after it, failed or not). A stale lock is taken over and `note`
 * told why; a live holder is waited for at most `maxWaitMs`, then LockBusy names it.
 */
export const withFileLock = async <A>(lock: string, body: () => A, options: FileLockOptions = {}): Promise<A> => {
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    token: randomBytes(8).toString("hex")
  }
  const start = Date.now()
  const maxWait = options.maxWaitMs ?? LOCK_WAIT_MS
  for (let attempt = 0; !tryCreate(lock, owner); attempt++) {
    options.signal?.throwIfAborted()
    if (Date.now() - start >= maxWait) throw new LockBusy(lock, readOwner(lock), Date.now() - start)
    const reason = staleReason(lock, Date.now())
    if (reason !== undefined) {
      if (setAside(lock)) options.note?.(`took over the stale lock ${lock}: ${reason}`)
      continue
    }
    await sleep(Math.min(50, 2 + attempt), undefined, { signal: options.signal })
  }
  try {
    return body()
  } finally {
    if (readOwner(lock)?.token === owner.token)
      try {
        unlinkSync(lock)
      } catch {
        // gone already
      }
  }
}
