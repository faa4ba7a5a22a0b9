// The simulator's shared cache folder (`--cache-dir`, StableToolBench's layout) under attack: a full disk, a torn or
// `null` file, a planted symbolic link at a temp name, and locks that are future-dated, directories, left by a killed
// writer or held by a live one (issue 36, points 1, 3, 6 and the `null` file of 9).
import { execFileSync, spawnSync } from "node:child_process"
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { hostname, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import * as Effect from "effect/Effect"
import { afterAll, describe, expect, it } from "vitest"
import { addCacheEntry, cacheFilePath } from "../../src/tools/environments/cache-store.ts"
import { makeReplayIndex } from "../../src/tools/environments/recorded.ts"
import { loadCacheDir } from "../../src/tools/environments/replay.ts"
import { nodeSyncWriteFs, type SyncWriteFs, TEMP_OPEN_FLAGS, tempPathOf } from "../../src/trace/temp-file.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-hostile-cache-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

let n = 0
const freshCache = () => {
  const dir = join(scratch, `cache-${n++}`)
  const file = cacheFilePath(dir, "Data", "keyword_analysis", "popularsitesforquery")
  mkdirSync(dirname(file), { recursive: true })
  return { dir, file }
}

/** A cache file of `count` entries, as their server writes it. */
const entries = (count: number, prefix = "old") =>
  Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`{'q': '${prefix}-${i}'}`, { error: "", response: `r${i}` }])
  )

/** The synchronous file system, except that the disk fills after `capacity` bytes: short writes, then ENOSPC. */
const fillingDisk = (capacity: number): SyncWriteFs => {
  let used = 0
  return {
    ...nodeSyncWriteFs,
    writeSync: (fd, buffer, offset, length) => {
      const room = capacity - used
      if (room <= 0) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" })
      const written = nodeSyncWriteFs.writeSync(fd, buffer, offset, Math.min(room, length, 4096))
      used += written
      return written
    }
  }
}

describe("point 1: a full disk never tears the shared simulator cache", () => {
  it("a write the disk cannot take whole fails saying so, keeps the old file byte for byte, and leaves no temp file", async () => {
    const { file } = freshCache()
    const before = JSON.stringify(entries(600), null, 4)
    writeFileSync(file, before)
    await expect(
      addCacheEntry(file, "{'q': 'new'}", { error: "", response: "x" }, { fs: fillingDisk(10_000) })
    ).rejects.toThrow(/disk is full \(ENOSPC\).*kept as it was/)
    expect(readFileSync(file, "utf8")).toBe(before)
    expect(readdirSync(dirname(file))).toEqual(["popularsitesforquery.json"])
  })

  it("on a real full disk (a tmpfs) too", async (ctx) => {
    const mount = join(scratch, "tmpfs")
    mkdirSync(mount, { recursive: true })
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", mount], { stdio: "ignore" })
    } catch {
      ctx.skip() // mounting needs root on Linux
    }
    try {
      const file = cacheFilePath(mount, "Data", "keyword_analysis", "popularsitesforquery")
      mkdirSync(dirname(file), { recursive: true })
      const before = JSON.stringify(entries(1500), null, 4) // ~100 KB
      writeFileSync(file, before)
      writeFileSync(join(mount, "filler"), Buffer.alloc(256 * 1024 - before.length - 60 * 1024))
      await expect(addCacheEntry(file, "{'q': 'new'}", { error: "", response: "x" })).rejects.toThrow(/ENOSPC/)
      expect(readFileSync(file, "utf8")).toBe(before)
      expect(readdirSync(dirname(file)).sort()).toEqual(["popularsitesforquery.json"])
    } finally {
      execFileSync("umount", [mount], { stdio: "ignore" })
    }
  })

  it("a torn or `null` cache file is skipped with a warning naming it; the other files still load", async () => {
    const { dir, file } = freshCache()
    const good = cacheFilePath(dir, "Data", "keyword_analysis", "other")
    writeFileSync(good, JSON.stringify(entries(3)))
    writeFileSync(file, JSON.stringify(entries(50)).slice(0, 700)) // torn mid-write
    const nullFile = cacheFilePath(dir, "Data", "keyword_analysis", "nothing")
    writeFileSync(nullFile, "null")
    const warnings: Array<string> = []
    const read = await Effect.runPromise(loadCacheDir(makeReplayIndex(), dir, (line) => warnings.push(line)))
    expect(read).toBe(3)
    expect(warnings).toHaveLength(2)
    expect(warnings.find((w) => w.includes(file))).toMatch(/not valid JSON/)
    expect(warnings.find((w) => w.includes(nullFile))).toMatch(/holds null/)
  })

  it("the next write sets a torn file aside (kept, not lost) and says so", async () => {
    const { file } = freshCache()
    const torn = JSON.stringify(entries(50)).slice(0, 700)
    writeFileSync(file, torn)
    const notes: Array<string> = []
    await addCacheEntry(file, "{'q': 'new'}", { error: "", response: "x" }, { note: (l) => notes.push(l) })
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ "{'q': 'new'}": { error: "", response: "x" } })
    const aside = readdirSync(dirname(file)).filter((f) => f.includes(".unreadable-"))
    expect(aside).toHaveLength(1)
    expect(readFileSync(join(dirname(file), aside[0]!), "utf8")).toBe(torn)
    expect(notes.join("\n")).toContain(`set aside as ${join(dirname(file), aside[0]!)}`)
  })
})

describe("point 3: temp files are unpredictable and created exclusively", () => {
  it("a symbolic link planted at the old predictable temp name is not written through", async () => {
    const { file } = freshCache()
    writeFileSync(file, JSON.stringify(entries(2)))
    const victim = join(scratch, `victim-${n++}`)
    writeFileSync(victim, "precious\n")
    // every name the old writer could have used in this process
    symlinkSync(victim, `${file}.${process.pid}.tmp`)
    await addCacheEntry(file, "{'q': 'new'}", { error: "", response: "x" })
    expect(readFileSync(victim, "utf8")).toBe("precious\n")
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")) as object)).toHaveLength(3)
  })

  it("temp names hold 96 random bits and no pid; opening one that exists (a planted link) fails", () => {
    const a = tempPathOf("/x/y.json")
    expect(a).not.toBe(tempPathOf("/x/y.json"))
    expect(a).toMatch(/^\/x\/y\.json\.tmp-[0-9a-f]{24}$/)
    expect(a).not.toContain(String(process.pid))
    const link = join(scratch, `planted-${n++}`)
    symlinkSync(join(scratch, "nowhere"), link)
    expect(() => nodeSyncWriteFs.openSync(link, TEMP_OPEN_FLAGS, 0o644)).toThrow(/EEXIST/)
    expect(existsSync(join(scratch, "nowhere"))).toBe(false)
  })
})

/**
 * addCacheEntry in a child process (as a second writer would run it), killed after `limitMs`: the old lock
 * spun synchronously, deaf to signals, so only a child can show that it never ends.
 */
const writerInChild = (file: string, limitMs: number, extra = "") => {
  const moduleUrl = new URL("../../src/tools/environments/cache-store.ts", import.meta.url).href
  const code = `const { addCacheEntry } = await import(${JSON.stringify(moduleUrl)});
${extra}
try {
  await addCacheEntry(${JSON.stringify(file)}, "{'q': 'child'}", { error: "", response: "c" }, { note: (l) => console.log(l), signal: globalThis.signal })
  console.log("done")
} catch (e) { console.log("failed", e.name, e.message) }`
  const started = Date.now()
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
    encoding: "utf8",
    timeout: limitMs
  })
  return { ...result, ms: Date.now() - started }
}

describe("point 6: cache locks have an owner; stale ones are taken over, waiting is bounded and interruptible", () => {
  it("a lock dated in the future is taken over with a message", () => {
    const { file } = freshCache()
    writeFileSync(`${file}.lock`, "")
    const future = new Date("2099-01-01T00:00:00Z")
    utimesSync(`${file}.lock`, future, future)
    const child = writerInChild(file, 15_000)
    expect(child.signal).toBeNull()
    expect(child.stdout).toMatch(/took over the stale lock .*dated in the future/)
    expect(child.stdout).toContain("done")
    expect(JSON.parse(readFileSync(file, "utf8"))).toHaveProperty(["{'q': 'child'}"])
  }, 30_000)

  it("a lock that is a directory is taken over with a message", () => {
    const { file } = freshCache()
    mkdirSync(`${file}.lock`)
    const child = writerInChild(file, 15_000)
    expect(child.signal).toBeNull()
    expect(child.stdout).toMatch(/took over the stale lock .*is a directory/)
    expect(existsSync(`${file}.lock`)).toBe(false)
  }, 30_000)

  it("a lock left by a killed writer (its pid gone) is taken over at once, not after 30 s", () => {
    const { file } = freshCache()
    const dead = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid!
    writeFileSync(
      `${file}.lock`,
      JSON.stringify({ pid: dead, host: hostname(), startedAt: new Date().toISOString(), token: "t" })
    )
    const child = writerInChild(file, 15_000)
    expect(child.stdout).toMatch(new RegExp(`took over the stale lock .*pid ${dead}, is gone`))
    expect(child.ms).toBeLessThan(10_000)
  }, 30_000)

  it("a live holder is waited for at most the bound, then named; an abort (Ctrl-C) stops the wait at once", async () => {
    const { file } = freshCache()
    const owner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), token: "live" }
    writeFileSync(`${file}.lock`, JSON.stringify(owner))
    await expect(addCacheEntry(file, "{'q': 'x'}", 1, { maxWaitMs: 300 })).rejects.toThrow(
      new RegExp(`held by pid ${process.pid} on .* if that process is gone, delete the lock`)
    )
    // interrupted: the child's wait is aborted after 200 ms and it ends, where the old spin never did
    const child = writerInChild(file, 15_000, "globalThis.signal = AbortSignal.timeout(200)")
    expect(child.signal).toBeNull()
    expect(child.stdout).toMatch(/failed (AbortError|TimeoutError)/)
    expect(child.ms).toBeLessThan(8_000)
    expect(statSync(`${file}.lock`).isFile()).toBe(true) // the live owner's lock is left alone
  }, 30_000)
})
