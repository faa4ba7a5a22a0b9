// The CLI keeps the type-stripped code of the clone's sources (bin/strip-cache.js): the same code Node's stripping
// makes, served from the cache on the next run and stripped again when the file changes.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-strip-cache-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const cacheDir = join(scratch, "cache")
const module = join(scratch, "thrower.ts")
writeFileSync(join(scratch, "package.json"), JSON.stringify({ type: "module" }))
const hook = pathToFileURL(join(import.meta.dirname, "../../bin/strip-cache.js")).href

/** Import `thrower.ts` in a new Node process, with the cache or with Node's own stripping: its output and stderr. */
const importThrower = (cached: boolean, root = "file:///"): Promise<{ stdout: string; stderr: string }> => {
  const script = [
    cached
      ? `(await import(${JSON.stringify(hook)})).cacheStrippedTypes(${JSON.stringify(cacheDir)}, ${JSON.stringify(root)})`
      : "",
    `try { await import(${JSON.stringify(pathToFileURL(module).href)}) }`,
    "catch (e) { console.log(e.message, e.stack.split('\\n')[1].trim()) }"
  ].join("\n")
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ["--input-type=module", "-e", script], (error, stdout, stderr) =>
      error ? reject(error) : resolve({ stdout, stderr })
    )
  )
}

describe("the CLI's cache of stripped sources", () => {
  it("gives the code Node's stripping gives (same positions, no warning), then serves it from the cache", async () => {
    writeFileSync(module, "const n: number = 1\ninterface A {\n  a: string\n}\nthrow new Error('first ' + n)\n")
    const own = await importThrower(false)
    expect(own.stdout).toContain("first 1")
    expect(await importThrower(true)).toEqual(own)
    const [entry] = readdirSync(cacheDir)
    const stored = readFileSync(join(cacheDir, entry!), "utf8")
    expect(stored).toContain("throw new Error('first ' + n)")
    // a stored entry is what runs: the cache is read, not stripped again
    writeFileSync(join(cacheDir, entry!), stored.replace("first", "from the cache"))
    expect((await importThrower(true)).stdout).toContain("from the cache 1")
  })

  it("strips a changed file again, in the same entry", async () => {
    writeFileSync(module, "const n: string = 'x'\nthrow new Error('second ' + n)\n")
    expect((await importThrower(true)).stdout).toContain("second x")
    expect(readdirSync(cacheDir)).toHaveLength(1)
    expect((await importThrower(true)).stdout).toContain("second x")
  })

  it("leaves a file outside the root to Node", async () => {
    writeFileSync(module, "const n: string = 'y'\nthrow new Error('third ' + n)\n")
    const [entry] = readdirSync(cacheDir)
    const before = readFileSync(join(cacheDir, entry!), "utf8")
    expect((await importThrower(true, "file:///elsewhere/")).stdout).toContain("third y")
    expect(readFileSync(join(cacheDir, entry!), "utf8")).toBe(before)
  })
})
