import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { writeJsonAtomic } from "./atomic-write.ts"
import { readFileBounded, refuseSymlinks, SymlinkBelowRoot, UnreadableFile } from "./guarded-fs.ts"
import { appendJsonLine } from "./jsonl.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-guarded-fs-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe("readFileBounded", () => {
  it("reads a regular file, and refuses one larger than the cap without reading it", () => {
    const file = join(scratch, "ten.txt")
    writeFileSync(file, "0123456789")
    expect(readFileBounded(file)).toBe("0123456789")
    expect(readFileBounded(file, 10)).toBe("0123456789")
    expect(() => readFileBounded(file, 9)).toThrow(UnreadableFile)
    expect(() => readFileBounded(file, 9)).toThrow("10 bytes, more than the 9 smurfs reads of one file")
  })

  it("refuses a FIFO and a device at once, and a folder", () => {
    const fifo = join(scratch, "fifo.json")
    execFileSync("mkfifo", [fifo])
    const started = Date.now()
    expect(() => readFileBounded(fifo)).toThrow("a FIFO (named pipe), not a file smurfs reads")
    expect(() => readFileBounded("/dev/zero")).toThrow("a device")
    expect(() => readFileBounded(scratch)).toThrow("a directory")
    expect(Date.now() - started).toBeLessThan(1_000)
  })
})

describe("writes below a root follow no symbolic link", () => {
  it("refuseSymlinks names the first link between the root and the path; missing folders are fine", async () => {
    const root = join(scratch, "root")
    mkdirSync(join(root, "a"), { recursive: true })
    symlinkSync(scratch, join(root, "a", "link"))
    await expect(refuseSymlinks(root, join(root, "a", "new", "deeper"))).resolves.toBeUndefined()
    const error = await refuseSymlinks(root, join(root, "a", "link", "x")).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SymlinkBelowRoot)
    expect((error as SymlinkBelowRoot).link).toBe(join(root, "a", "link"))
  })

  it("the atomic writer refuses a rooted write through a linked folder, naming the link; a path of the user's own is written as given", async () => {
    const root = join(scratch, "run")
    const outside = join(scratch, "outside")
    mkdirSync(join(root, "tasks"), { recursive: true })
    mkdirSync(outside, { recursive: true })
    symlinkSync(outside, join(root, "tasks", "m"))
    const error = await Effect.runPromise(
      Effect.flip(writeJsonAtomic({ root, path: join(root, "tasks", "m", "g", "1.json") }, { x: 1 }))
    )
    expect(error.message).toContain(`refusing to write through ${join(root, "tasks", "m")}: it is a symbolic link`)
    expect(readdirSync(outside)).toEqual([])
    await Effect.runPromise(writeJsonAtomic(join(root, "tasks", "m", "report.json"), { x: 1 }))
    expect(readdirSync(outside)).toEqual(["report.json"])
  })

  it("appending a JSON line never follows a link at the file's name", () => {
    const target = join(scratch, "victim.jsonl")
    writeFileSync(target, "keep\n")
    const link = join(scratch, "cache.jsonl")
    symlinkSync(target, link)
    expect(() => appendJsonLine(link, { a: 1 })).toThrow()
    expect(readFileSync(target, "utf8")).toBe("keep\n")
    const plain = join(scratch, "plain.jsonl")
    appendJsonLine(plain, { a: 1 })
    appendJsonLine(plain, { a: 2 })
    expect(readFileSync(plain, "utf8")).toBe('{"a":1}\n{"a":2}\n')
  })
})
