// The atomic writer runs off the event loop: other work (timers, model replies) goes on while a write is pending,
// and an interrupted write still ends with the old file or the whole new one.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Fiber } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { diskWith } from "../../test/disk.ts"
import { writeJsonAtomic, writeTextAtomic } from "./atomic-write.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-atomic-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A gate that a test opens by hand: until then every write to the file system waits. */
const gate = () => {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { open, opened }
}

/**
 * The real file system, whose writes wait for `until` (a slow disk); `entered` resolves when the first write
 * waits, `finished` when the last step of a write (closing the directory after its fsync) is done.
 */
const slowDisk = (until: Promise<void>) => {
  const entered = gate()
  const finished = gate()
  const fs = diskWith({
    close: async (file, flags) => {
      await file.close()
      if (flags === "r") finished.open()
    },
    write: async (file, buffer, offset, length) => {
      entered.open()
      await until
      return file.write(buffer, offset, length)
    }
  })
  return { fs, entered: entered.opened, finished: finished.opened }
}

describe("atomic writes do not block the event loop", () => {
  it("a timer fires while a write to a slow disk is pending, and the write then commits the whole file", async () => {
    const dir = join(scratch, "timer")
    const file = join(dir, "1.json")
    const disk = gate()
    const slow = slowDisk(disk.opened)
    const order: Array<string> = []
    const writing = Effect.runPromise(writeJsonAtomic(file, { answer: "new" }, slow.fs)).then(() =>
      order.push("written")
    )
    await slow.entered
    // A synchronous writer would hold the event loop until the disk answered: this timer could not run, and the
    // disk (opened by the timer) would never answer.
    setTimeout(() => {
      order.push("timer")
      disk.open()
    }, 0)
    await writing
    expect(order).toEqual(["timer", "written"])
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ answer: "new" })
    expect(readdirSync(dir)).toEqual(["1.json"])
  })

  it("an interrupted write still finishes before the fiber ends: the file is then whole and no temp file is left", async () => {
    const dir = join(scratch, "interrupt")
    const file = join(dir, "1.json")
    const disk = gate()
    const slow = slowDisk(disk.opened)
    const fiber = Effect.runFork(writeJsonAtomic(file, { answer: "new" }, slow.fs))
    await slow.entered
    const interrupted = Effect.runPromise(Fiber.interrupt(fiber))
    disk.open()
    await interrupted
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ answer: "new" })
    expect(readdirSync(dir)).toEqual(["1.json"])
  })

  it("a value JSON cannot render fails as a RunDirError and keeps the old file", async () => {
    const dir = join(scratch, "cycle")
    const file = join(dir, "1.json")
    await Effect.runPromise(writeTextAtomic(file, '{"old": true}\n'))
    const cyclic: Record<string, unknown> = {}
    cyclic["self"] = cyclic
    const error = await Effect.runPromise(Effect.flip(writeJsonAtomic(file, cyclic)))
    expect(error._tag).toBe("RunDirError")
    expect(error.message).toContain(file)
    expect(readFileSync(file, "utf8")).toBe('{"old": true}\n')
    expect(readdirSync(dir)).toEqual(["1.json"])
  })

  it("a directory that cannot be made (a file stands in its way) is named with its cause", async () => {
    const blocker = join(scratch, "blocker")
    writeFileSync(blocker, "")
    const error = await Effect.runPromise(Effect.flip(writeTextAtomic(join(blocker, "sub", "1.json"), "x")))
    expect(error.problem).toMatch(/a file stands where a directory should be \((ENOTDIR|EEXIST)\)/)
  })
})
