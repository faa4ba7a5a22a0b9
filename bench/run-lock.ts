// One writer per run directory: a lock file naming its owner (pid, host), so that a lock left by a killed run never blocks.
import { closeSync, linkSync, openSync, renameSync, rmSync, writeFileSync } from "node:fs"
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

/**
 * A lock whose owner is gone: a dead pid on this host. A lock from another host cannot be checked and
 * is held; a file that does not parse was cut by a kill between create and write (the lock is linked
 * into place complete, so only a foreign or hand-made file reads so), and is stale too.
 */
const isStale = (owner: LockOwner | undefined): boolean =>
  owner === undefined || (owner.host === hostname() && !alive(owner.pid))

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

/** Move a stale lock away; if another process replaced it meanwhile with a live lock, put that one back. */
const breakStale = (dir: string, path: string, stale: LockOwner | undefined, token: string) => {
  const aside = join(dir, `${LOCK_FILE}.${token}.stale`)
  try {
    renameSync(path, aside)
  } catch (e) {
    if (errno(e) === "ENOENT") return // someone else broke it first
    throw e
  }
  const moved = readOwner(aside)
  if (moved && moved.token !== stale?.token) {
    try {
      linkSync(aside, path)
    } catch {
      // a third writer holds the lock now; theirs stands
    }
  }
  rmSync(aside, { force: true })
}

const describe = (owner: LockOwner) => `pid ${owner.pid} on ${owner.host}, since ${owner.startedAt}`

/**
 * Take the run directory's lock for the scope (released when it closes, interrupted or not). Refused
 * with a message naming the other writer while a live one holds it; a lock whose process died
 * (kill -9, a crash, a reboot) is taken over at once. `writer` and `what` name the writer and the
 * folder in that message (an eval locks its judge's label folder, inside `root`, the run).
 */
export const acquireRunLock = (
  run: string,
  writer = "smurfs bench",
  what = "run directory",
  root?: string | undefined
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
          if (!isStale(current)) return { mine: false, owner: current! }
          breakStale(run, path, current, owner.token)
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
          ? Effect.succeed(owner)
          : Effect.fail(
              new RunDirError({
                path: run,
                problem: `another ${writer} is writing to this ${what} (${describe(owner)})`,
                hint: `Wait for it to finish or stop it, or choose another --out. If that process is gone (another machine sharing this disk), delete ${join(run, LOCK_FILE)} and retry.`
              })
            )
      )
    ),
    (owner) =>
      Effect.sync(() => {
        const path = join(run, LOCK_FILE)
        if (readOwner(path)?.token === owner.token) rmSync(path, { force: true })
      })
  ).pipe(Effect.asVoid)
