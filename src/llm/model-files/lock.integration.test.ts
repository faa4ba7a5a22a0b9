// Two processes, one file: a download waits for another process's lock, and takes over the lock of one that was killed.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest"
import { type FileHost, fakeGguf, sha256, startFileHost } from "../../../test/fake-servers/files.ts"
import { downloadFile } from "./download.ts"

const lockModule = fileURLToPath(new URL("./lock.ts", import.meta.url))
let host: FileHost
let dir: string
const bytes = fakeGguf(100_000, 3)

beforeAll(async () => {
  host = await startFileHost()
  host.file("/m.gguf", bytes)
})
afterAll(() => host.close())
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "smurfs-lock-"))
  host.requests.length = 0
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

/** A process that takes the lock of `path`, says "held", and after `holdMs` writes `content` there and releases it. */
const holder = (path: string, holdMs: number, content: string | undefined): Promise<ChildProcess> => {
  const script = `
    import { writeFileSync } from "node:fs"
    import { acquireLock } from ${JSON.stringify(lockModule)}
    const lock = await acquireLock(${JSON.stringify(`${path}.lock`)})
    console.log("held")
    await new Promise((r) => setTimeout(r, ${holdMs}))
    ${content === undefined ? "" : `writeFileSync(${JSON.stringify(path)}, ${JSON.stringify(content)})`}
    await lock.release()
  `
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] })
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes("held")) resolve(child)
    })
    child.on("exit", (code) => reject(new Error(`the holder exited with ${code} before holding the lock`)))
  })
}

it("a download waits while another process holds the file's lock, then uses the file it fetched", async () => {
  const path = join(dir, "m.gguf")
  const child = await holder(path, 1000, "fetched by the other process")
  const waits: Array<number> = []
  const started = Date.now()
  const result = await downloadFile({ url: `${host.url}/m.gguf`, path, onWait: (h) => waits.push(h.pid) })
  expect(Date.now() - started).toBeGreaterThanOrEqual(500)
  expect(waits).toEqual([child.pid])
  expect(result.downloaded).toBe(false)
  expect(readFileSync(path, "utf8")).toBe("fetched by the other process")
  expect(host.requests).toEqual([])
})

it("the lock of a process killed while downloading is taken over, and the file downloaded", async () => {
  const path = join(dir, "m.gguf")
  const child = await holder(path, 60_000, undefined)
  const exited = new Promise((r) => child.on("exit", r))
  child.kill("SIGKILL")
  await exited
  const started = Date.now()
  const result = await downloadFile({ url: `${host.url}/m.gguf`, path, expected: { magic: "GGUF" } })
  expect(Date.now() - started).toBeLessThan(5000)
  expect(result.downloaded).toBe(true)
  expect(sha256(readFileSync(path))).toBe(sha256(bytes))
})
