// One writer per run directory: a lock file naming its owner (pid, host), so that a lock left by a killed run never blocks.
import { closeSync, linkSync, openSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { z } from "zod"
import { makeDirectory, RunDirError, writeProblem } from "../src/trace/fs-problem.ts"
import { makeDirectoryInside, readFileBounded } from "../src/trace/guarded-fs.ts"
import { TEMP_OPEN_FLAGS, tempPathOf } from "../src/trace/temp-file.ts"
import { LOCK_FILE } from "./run-format.ts"

const LockOwner = z.object({ pid: z.number(), host: z.string(), startedAt: z.string(), token: z.string() })
type LockOwner = z.infer<typeof LockOwner>

const readOwner = (path: string): LockOwner | undefined => {
  try {
    const parsed = LockOwner.safeParse(JSON.parse(readFileBounded(path, 64 * 1024)))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

/** Whether a process with this pid runs on this machine (EPERM: it runs, as another user). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** A lock its holder has not refreshed for this long (its machine down, or the holder hung) is stale: 10 minutes. */
export const RUN_LOCK_STALE_MS = 10 * 60 * 1000

/** How often the holder refreshes its lock (the file's mtime): every minute. */
export const RUN_LOCK_REFRESH_MS = 60 * 1000

/** When the lock file was last refreshed; undefined when it is gone. */
const refreshedAt = (path: string): number | undefined => {
  try {
    return statSync(path).mtimeMs
  } catch {
    return undefined
  }
}

/**
 * Why a lock's owner is gone, or undefined while it holds: a dead pid on this host; on another host (whose pid
 * cannot be checked) a file unrefreshed for RUN_LOCK_STALE_MS, or dated that far in the future. A live pid on this
 * host holds however old the file is (a stopped process is still the writer). A file that does not parse was cut by
 * a kill between create and write (the lock is linked into place complete, so only a foreign or hand-made file
 * reads so), and is stale too.
 */
const staleReason = (owner: LockOwner | undefined, path: string): string | undefined => {
  if (owner === undefined) return "its file is not a lock smurfs wrote (cut short, or written by hand)"
  if (owner.host === hostname()) return alive(owner.pid) ? undefined : "that process is no longer running"
  const at = refreshedAt(path)
  if (at === undefined) return undefined
  const minutes = Math.round(Math.abs(Date.now() - at) / 60_000)
  if (Date.now() - at > RUN_LOCK_STALE_MS)
    return `it has not refreshed the lock for ${minutes} min (its machine is down, or it hung)`
  if (at - Date.now() > RUN_LOCK_STALE_MS) return `the lock is dated ${minutes} min in the future`
  return undefined
}

const errno = (e: unknown) => (e as NodeJS.ErrnoException).code

/** Put `owner` in place as the lock, atomically and complete (link fails when a lock exists); false when one does. */
const tryCreate = (path: string, owner: LockOwner): boolean => {
  // an unpredictable name, created exclusively: a link planted beside the lock is never written through
  const tmp = tempPathOf(path)
  const fd = openSync(tmp, TEMP_OPEN_FLAGS, 0o644)
  try {
    writeFileSync(fd, `${JSON.stringify(owner)}\n`)
  } finally {
    closeSync(fd)
  }
  try {
    linkSync(tmp, path)
    return true
  } catch (e) {
    if (errno(e) === "EEXIST") return false
    throw e
  } finally {
    rmSync(tmp, { force: true })
  }
}

/**
 * Move a stale lock away; if another process replaced it meanwhile with a live lock, put that one back. Whether the
 * stale one was ours to break (false: someone else broke it first, or it was replaced).
 */
const breakStale = (dir: string, path: string, stale: LockOwner | undefined, token: string): boolean => {
  const aside = join(dir, `${LOCK_FILE}.${token}.stale`)
  try {
    renameSync(path, aside)
  } catch (e) {
    if (errno(e) === "ENOENT") return false // someone else broke it first
    throw e
  }
  const moved = readOwner(aside)
  const replaced = moved !== undefined && moved.token !== stale?.token
  if (replaced) {
    try {
      linkSync(aside, path)
    } catch {
      // a third writer holds the lock now; theirs stands
    }
  }
  rmSync(aside, { force: true })
  return !replaced
}

const describe = (owner: LockOwner) => `pid ${owner.pid} on ${owner.host}, since ${owner.startedAt}`

export interface RunLockOptions {
  /** Told when a stale lock is taken over: its owner (pid, host, start time) and why it was stale. */
  readonly note?: ((message: string) => void) | undefined
  /** How often the held lock is refreshed (default RUN_LOCK_REFRESH_MS). */
  readonly refreshMs?: number | undefined
}

/**
 * Take the run directory's lock for the scope (released when it closes, interrupted or not), refreshing it while
 * held. Refused with a message naming the other writer while a live one holds it; a lock whose process died
 * (kill -9, a crash, a reboot) is taken over at once, and one from another machine left unrefreshed for
 * RUN_LOCK_STALE_MS, each saying so through `options.note` with its owner. `writer` and `what` name the writer and
 * the folder in these messages (an eval locks its judge's label folder, inside `root`, the run).
 */
export const acquireRunLock = (
  run: string,
  writer = "smurfs bench",
  what = "run directory",
  root?: string | undefined,
  options: RunLockOptions = {}
): Effect.Effect<void, RunDirError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        // a folder inside a run (an eval's label folder) is made without following a link below the run:
        // an `eval/` linked elsewhere is refused before anything is made there
        if (root === undefined) await makeDirectory(run)
        else await makeDirectoryInside(root, run)
        const path = join(run, LOCK_FILE)
        const owner: LockOwner = {
          pid: process.pid,
          host: hostname(),
          startedAt: new Date().toISOString(),
          token: `${process.pid}-${Math.random().toString(36).slice(2, 10)}`
        }
        for (let attempt = 0; attempt < 5; attempt++) {
          if (tryCreate(path, owner)) return { mine: true, owner }
          const current = readOwner(path)
          const reason = staleReason(current, path)
          if (reason === undefined) return { mine: false, owner: current! }
          if (breakStale(run, path, current, owner.token))
            options.note?.(
              `took over the ${what}'s lock ${path} from ${current ? `${writer} ${describe(current)}` : "an unknown writer"}: ${reason}`
            )
        }
        const holder = readOwner(path)
        return holder ? { mine: false, owner: holder } : { mine: false, owner }
      },
      catch: (e) => {
        const { problem, hint } = writeProblem(e)
        return new RunDirError({ path: run, problem, hint })
      }
    }).pipe(
      Effect.flatMap(({ mine, owner }) =>
        mine
          ? Effect.sync(() => {
              // refreshed while held, so that a writer on another machine sharing the disk sees this one alive
              const path = join(run, LOCK_FILE)
              const timer = setInterval(() => {
                if (readOwner(path)?.token !== owner.token) return
                const now = new Date()
                try {
                  utimesSync(path, now, now)
                } catch {
                  // gone or unwritable for a moment: the next refresh tries again
                }
              }, options.refreshMs ?? RUN_LOCK_REFRESH_MS)
              timer.unref()
              return { owner, timer }
            })
          : Effect.fail(
              new RunDirError({
                path: run,
                problem: `another ${writer} is writing to this ${what} (${describe(owner)})`,
                hint: `Wait for it to finish or stop it, or choose another --out. If that process is gone (another machine sharing this disk), delete ${join(run, LOCK_FILE)} and retry; a lock from another machine is taken over once it is left unrefreshed for ${RUN_LOCK_STALE_MS / 60_000} min.`
              })
            )
      )
    ),
    ({ owner, timer }) =>
      Effect.sync(() => {
        clearInterval(timer)
        const path = join(run, LOCK_FILE)
        if (readOwner(path)?.token === owner.token) rmSync(path, { force: true })
      })
  ).pipe(Effect.asVoid)
