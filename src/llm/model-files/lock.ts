// One download of a file at a time across processes: a lock file beside it, kept fresh while held, taken over when its holder died.
import { randomUUID } from "node:crypto"
import { mkdir, open, readFile, rename, stat, unlink, utimes } from "node:fs/promises"
import { hostname } from "node:os"
import { dirname } from "node:path"

/** What a lock file holds: who holds it, so that a waiter can tell a live holder from a dead one. */
interface LockOwner {
  readonly pid: number
  readonly host: string
  readonly token: string
  readonly since: string
}

export interface LockOptions {
  /** A lock whose file was not refreshed for this long is stale (its holder hung or died elsewhere): 30 s. */
  readonly staleMs?: number | undefined
  /** How often the holder refreshes the file (its mtime): a third of staleMs. */
  readonly refreshMs?: number | undefined
  /** How often a waiter looks again: 250 ms. */
  readonly pollMs?: number | undefined
  /** Told once when the lock is held by another process and this one waits. */
  readonly onWait?: ((holder: { pid: number; host: string }) => void) | undefined
  readonly signal?: AbortSignal | undefined
}

/** A held lock: `release()` removes the file (only if it is still ours). */
export interface HeldLock {
  readonly path: string
  readonly release: () => Promise<void>
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: the process exists but is another user's
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readOwner = async (path: string): Promise<LockOwner | undefined> => {
  try {
    const owner = JSON.parse(await readFile(path, "utf8")) as Partial<LockOwner>
    return typeof owner.pid === "number" && typeof owner.token === "string" ? (owner as LockOwner) : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether a lock file is stale: its holder was on this machine and is gone, or the file went unrefreshed for
 * `staleMs` (a holder on another machine sharing the folder, or one that hung). A file we cannot parse is judged by
 * its age alone (its writer may be between creating and writing it).
 */
const isStale = async (path: string, staleMs: number): Promise<{ stale: boolean; owner?: LockOwner }> => {
  let mtimeMs: number
  try {
    mtimeMs = (await stat(path)).mtimeMs
  } catch {
    return { stale: false }
  }
  const owner = await readOwner(path)
  if (owner && owner.host === hostname() && !alive(owner.pid)) return { stale: true, owner }
  return { stale: Date.now() - mtimeMs > staleMs, ...(owner ? { owner } : {}) }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(done, ms)
    function done() {
      signal?.removeEventListener("abort", abort)
      resolve()
    }
    function abort() {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener("abort", abort, { once: true })
  })

/**
 * Take the lock at `path` (created with O_EXCL), waiting while another live process holds it. A stale lock (its
 * process gone, or unrefreshed for `staleMs`) is taken over: it is renamed aside first and checked to be the one
 * judged stale, so two waiters never both take it.
 */
export const acquireLock = async (path: string, options: LockOptions = {}): Promise<HeldLock> => {
  const staleMs = options.staleMs ?? 30_000
  const refreshMs = options.refreshMs ?? Math.max(50, Math.floor(staleMs / 3))
  const pollMs = options.pollMs ?? 250
  await mkdir(dirname(path), { recursive: true })
  const owner: LockOwner = { pid: process.pid, host: hostname(), token: randomUUID(), since: new Date().toISOString() }
  let told = false
  for (;;) {
    options.signal?.throwIfAborted()
    try {
      const handle = await open(path, "wx")
      try {
        await handle.writeFile(JSON.stringify(owner))
      } finally {
        await handle.close()
      }
      break
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    }
    const judged = await isStale(path, staleMs)
    if (judged.stale) {
      const aside = `${path}.stale-${owner.token}`
      try {
        await rename(path, aside)
        const moved = await readOwner(aside)
        // another waiter took it over between our look and the rename: put its fresh lock back
        if (judged.owner && moved && moved.token !== judged.owner.token) await rename(aside, path).catch(() => {})
        else await unlink(aside).catch(() => {})
      } catch {
        // gone already: released or taken over by another waiter
      }
      continue
    }
    if (!told && judged.owner) {
      told = true
      options.onWait?.({ pid: judged.owner.pid, host: judged.owner.host })
    }
    await sleep(pollMs, options.signal)
  }
  const timer = setInterval(() => {
    const now = new Date()
    utimes(path, now, now).catch(() => {})
  }, refreshMs)
  timer.unref()
  let released = false
  return {
    path,
    release: async () => {
      if (released) return
      released = true
      clearInterval(timer)
      const current = await readOwner(path)
      if (current?.token === owner.token) await unlink(path).catch(() => {})
    }
  }
}

/** Run `f` holding the lock at `path`; the lock is released however `f` ends. */
export const withLock = async <A>(path: string, options: LockOptions, f: () => Promise<A>): Promise<A> => {
  const lock = await acquireLock(path, options)
  try {
    return await f()
  } finally {
    await lock.release()
  }
}
