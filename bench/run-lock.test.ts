import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { LOCK_FILE } from "./run-format.ts"
import { acquireRunLock, RUN_LOCK_STALE_MS, type RunLockOptions } from "./run-lock.ts"

const dirs: Array<string> = []
const tempRun = () => {
  const dir = mkdtempSync(join(tmpdir(), "smurfs-lock-"))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const holding = <A>(run: string, body: Effect.Effect<A>, options?: RunLockOptions) =>
  Effect.runPromiseExit(
    Effect.scoped(Effect.andThen(acquireRunLock(run, undefined, undefined, undefined, options), body))
  )
const message = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit)
    ? String((exit.cause as unknown as { reasons: Array<{ error: Error }> }).reasons[0]!.error.message)
    : ""
const owner = (fields: object) =>
  JSON.stringify({ pid: 1, host: hostname(), startedAt: "2026-01-01T00:00:00.000Z", token: "t", ...fields })

describe("run lock", () => {
  it("is held for the scope, names its owner, and is released after", async () => {
    const run = tempRun()
    const inside = await holding(
      run,
      Effect.sync(() => JSON.parse(readFileSync(join(run, LOCK_FILE), "utf8")))
    )
    expect(Exit.isSuccess(inside) && inside.value).toMatchObject({ pid: process.pid, host: hostname() })
    expect(existsSync(join(run, LOCK_FILE))).toBe(false)
  })

  it("refuses a second writer while the first holds it", async () => {
    const run = tempRun()
    const nested = await holding(
      run,
      Effect.promise(() => holding(run, Effect.void))
    )
    expect(Exit.isSuccess(nested) && message(nested.value)).toContain(
      `another smurfs bench is writing to this run directory (pid ${process.pid} on ${hostname()}`
    )
  })

  it("takes over the lock of a dead process (kill -9) and an unreadable lock file, naming the owner it replaces", async () => {
    const run = tempRun()
    const notes: Array<string> = []
    const note = (line: string) => void notes.push(line)
    // a pid above the kernel's pid_max is never alive
    writeFileSync(join(run, LOCK_FILE), owner({ pid: 2 ** 22 + 1 }))
    expect(Exit.isSuccess(await holding(run, Effect.void, { note }))).toBe(true)
    writeFileSync(join(run, LOCK_FILE), "{ torn")
    expect(Exit.isSuccess(await holding(run, Effect.void, { note }))).toBe(true)
    expect(existsSync(join(run, LOCK_FILE))).toBe(false)
    expect(notes).toEqual([
      `took over the run directory's lock ${join(run, LOCK_FILE)} from smurfs bench pid ${2 ** 22 + 1} on ${hostname()}, since 2026-01-01T00:00:00.000Z: that process is no longer running`,
      `took over the run directory's lock ${join(run, LOCK_FILE)} from an unknown writer: its file is not a lock smurfs wrote (cut short, or written by hand)`
    ])
  })

  it("takes over, saying so, a lock from another machine left unrefreshed (or dated in the future) past the bound", async () => {
    const run = tempRun()
    const path = join(run, LOCK_FILE)
    const notes: Array<string> = []
    const note = (line: string) => void notes.push(line)
    writeFileSync(path, owner({ host: "another-machine", pid: 4242 }))
    const old = new Date(Date.now() - RUN_LOCK_STALE_MS - 60_000)
    utimesSync(path, old, old)
    expect(Exit.isSuccess(await holding(run, Effect.void, { note }))).toBe(true)
    writeFileSync(path, owner({ host: "another-machine", pid: 4343 }))
    const future = new Date(Date.now() + RUN_LOCK_STALE_MS + 60_000)
    utimesSync(path, future, future)
    expect(Exit.isSuccess(await holding(run, Effect.void, { note }))).toBe(true)
    expect(notes).toEqual([
      `took over the run directory's lock ${path} from smurfs bench pid 4242 on another-machine, since 2026-01-01T00:00:00.000Z: it has not refreshed the lock for 11 min (its machine is down, or it hung)`,
      `took over the run directory's lock ${path} from smurfs bench pid 4343 on another-machine, since 2026-01-01T00:00:00.000Z: the lock is dated 11 min in the future`
    ])
  })

  it("refreshes the lock it holds, so a writer elsewhere sees it alive; a live owner is refused, not taken over", async () => {
    const run = tempRun()
    const path = join(run, LOCK_FILE)
    const notes: Array<string> = []
    const refreshed = await holding(
      run,
      Effect.gen(function* () {
        const old = new Date(Date.now() - 20 * 60_000)
        utimesSync(path, old, old)
        yield* Effect.sleep("300 millis")
        // a second writer meanwhile: the holder is alive here, so it is refused whatever the file's age
        const second = yield* Effect.promise(() => holding(run, Effect.void, { note: (l) => void notes.push(l) }))
        return { age: Date.now() - statSync(path).mtimeMs, second }
      }),
      { refreshMs: 50 }
    )
    expect(Exit.isSuccess(refreshed) && refreshed.value.age).toBeLessThan(60_000)
    expect(Exit.isSuccess(refreshed) && message(refreshed.value.second)).toContain(
      `pid ${process.pid} on ${hostname()}`
    )
    expect(notes).toEqual([])
  })

  it("keeps a lock from another machine (its pid cannot be checked) and says how to clear it", async () => {
    const run = tempRun()
    writeFileSync(join(run, LOCK_FILE), owner({ host: "another-machine", pid: 4242 }))
    const exit = await holding(run, Effect.void)
    expect(message(exit)).toContain("pid 4242 on another-machine")
    expect(message(exit)).toContain(`delete ${join(run, LOCK_FILE)}`)
    expect(existsSync(join(run, LOCK_FILE))).toBe(true)
  })
})
