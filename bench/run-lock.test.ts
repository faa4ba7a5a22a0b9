import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { LOCK_FILE } from "./run-format.ts"
import { acquireRunLock } from "./run-lock.ts"

const dirs: Array<string> = []
const tempRun = () => {
  const dir = mkdtempSync(join(tmpdir(), "smurfs-lock-"))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const holding = <A>(run: string, body: Effect.Effect<A>) =>
  Effect.runPromiseExit(Effect.scoped(Effect.andThen(acquireRunLock(run), body)))
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

  it("takes over the lock of a dead process (kill -9) and an unreadable lock file", async () => {
    const run = tempRun()
    // a pid above the kernel's pid_max is never alive
    writeFileSync(join(run, LOCK_FILE), owner({ pid: 2 ** 22 + 1 }))
    expect(Exit.isSuccess(await holding(run, Effect.void))).toBe(true)
    writeFileSync(join(run, LOCK_FILE), "{ torn")
    expect(Exit.isSuccess(await holding(run, Effect.void))).toBe(true)
    expect(existsSync(join(run, LOCK_FILE))).toBe(false)
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
