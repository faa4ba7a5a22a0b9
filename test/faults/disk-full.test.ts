// A disk that fills mid-write never leaves a committed torn file or a temp file, and the error says "disk full" only on ENOSPC.
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { type AtomicWriteFs, writeJsonAtomic } from "../../src/trace/atomic-write.ts"
import { diskWith } from "../disk.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-disk-full-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const errno = (code: string) => Object.assign(new Error(`${code}: simulated`), { code })

/** The real file system, except that the disk "fills" after `capacity` bytes: short writes, then `fault`. */
const fillingDisk = (capacity: number, fault = "ENOSPC"): AtomicWriteFs => {
  let used = 0
  return diskWith({
    write: async (file, buffer, offset, length) => {
      const room = capacity - used
      if (room <= 0) throw errno(fault)
      const n = Math.min(room, length, 8192)
      used += n
      return file.write(buffer, offset, n)
    }
  })
}

const big = { answer: "x".repeat(50_000) }

const attempt = async (dir: string, fs: AtomicWriteFs) => {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, "1.json")
  writeFileSync(file, '{"old": true}\n')
  const error = await Effect.runPromise(Effect.flip(writeJsonAtomic(file, big, fs)))
  return { file, error }
}

describe("atomic writes on a filling disk (simulated)", () => {
  it("a short write then ENOSPC keeps the old file whole, leaves no temp file, and says disk full with the path", async () => {
    const { file, error } = await attempt(join(scratch, "enospc"), fillingDisk(8192))
    expect(readFileSync(file, "utf8")).toBe('{"old": true}\n')
    expect(readdirSync(join(scratch, "enospc"))).toEqual(["1.json"])
    expect(error.message).toContain("disk is full")
    expect(error.message).toContain(file)
  })

  it("short writes that all succeed still commit the whole file", async () => {
    const dir = join(scratch, "short")
    mkdirSync(dir, { recursive: true })
    const file = join(dir, "1.json")
    await Effect.runPromise(writeJsonAtomic(file, big, fillingDisk(Number.POSITIVE_INFINITY)))
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(big)
    expect(readdirSync(dir)).toEqual(["1.json"])
  })

  it("another error (EIO) is not called a full disk", async () => {
    const { file, error } = await attempt(join(scratch, "eio"), fillingDisk(100, "EIO"))
    expect(readFileSync(file, "utf8")).toBe('{"old": true}\n')
    expect(readdirSync(join(scratch, "eio"))).toEqual(["1.json"])
    expect(error.message).not.toContain("disk is full")
    expect(error.message).toContain("EIO")
  })

  it("a failing rename removes the temp file", async () => {
    const fs: AtomicWriteFs = {
      ...fillingDisk(Number.POSITIVE_INFINITY),
      rename: async () => {
        throw errno("EXDEV")
      }
    }
    const { file } = await attempt(join(scratch, "rename"), fs)
    expect(readdirSync(join(scratch, "rename"))).toEqual(["1.json"])
    expect(readFileSync(file, "utf8")).toBe('{"old": true}\n')
  })
})

/** A 64 KiB tmpfs, when this process may mount one (root on Linux); undefined otherwise. */
const mountTmpfs = (): string | undefined => {
  const dir = join(scratch, "tmpfs")
  mkdirSync(dir, { recursive: true })
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "ignore" })
    return dir
  } catch {
    return undefined
  }
}
const tmpfs = process.platform === "linux" ? mountTmpfs() : undefined
afterAll(() => {
  if (tmpfs) execFileSync("umount", [tmpfs], { stdio: "ignore" })
})

describe.skipIf(tmpfs === undefined)(
  "atomic writes on a real full disk (64 KiB tmpfs; skipped: mounting needs root on Linux)",
  () => {
    it("a record larger than the free space is refused as disk full, the old record stays, no temp file is left", async () => {
      const dir = tmpfs!
      const file = join(dir, "1.json")
      writeFileSync(file, '{"old": true}\n')
      writeFileSync(join(dir, "filler"), Buffer.alloc(40 * 1024))
      const error = await Effect.runPromise(Effect.flip(writeJsonAtomic(file, big)))
      expect(error.message).toContain("disk is full")
      expect(readFileSync(file, "utf8")).toBe('{"old": true}\n')
      expect(readdirSync(dir).sort()).toEqual(["1.json", "filler"])
      // once space is freed the same write commits whole
      rmSync(join(dir, "filler"))
      await Effect.runPromise(writeJsonAtomic(file, big))
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(big)
    })
  }
)
