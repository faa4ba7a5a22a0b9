// Files read from a user's checkout or data (issue 36, point 7): a FIFO in --smurfs-src, --stb or the --data queries,
// /dev/zero linked into a checkout or given as --responses, and a prompt file of 80,000 blank lines. Each is refused
// at once with a message naming the file, never read without end, never blocking, never a crash.
import { execFileSync, spawnSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { readSmurfsSource, SMURFS_FILES } from "../../src/agents/smurfs-source.ts"
import { STB_FILES } from "../../src/text/stabletoolbench-files.ts"
import { MINI_DATA } from "../data.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-hostile-checkouts-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const FIXTURE = fileURLToPath(new URL("../fixtures/smurfs-src", import.meta.url))
const moduleUrl = (path: string) => new URL(`../../${path}`, import.meta.url).href

let n = 0
const smurfsCheckout = () => {
  const dir = join(scratch, `smurfs-${n++}`)
  cpSync(FIXTURE, dir, { recursive: true })
  return dir
}
const fifoAt = (path: string) => {
  mkdirSync(dirname(path), { recursive: true })
  rmSync(path, { force: true })
  execFileSync("mkfifo", [path])
}

/**
 * Run `body` (an ES module's text, printing what it got) in a child killed after 15 s: a read that blocks in
 * open(2) on a FIFO blocks the whole process, so only a child can show that it never ends.
 */
const inChild = (body: string) => {
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", body], { encoding: "utf8", timeout: 15_000 })
  return { ...result, output: `${result.stdout}${result.stderr}` }
}

describe("point 7: checkouts and data files go through the bounded regular-file reader", () => {
  it("a FIFO in --smurfs-src is named, not waited on", () => {
    const dir = smurfsCheckout()
    const fifo = join(dir, SMURFS_FILES.planner)
    fifoAt(fifo)
    const r =
      inChild(`const { readSmurfsSource } = await import(${JSON.stringify(moduleUrl("src/agents/smurfs-source.ts"))})
try { readSmurfsSource(${JSON.stringify(dir)}); console.log("read") } catch (e) { console.log(e.message) }`)
    expect(r.signal).toBeNull()
    expect(r.stdout).toContain(fifo)
    expect(r.stdout).toContain("FIFO")
  }, 30_000)

  it("/dev/zero linked into --smurfs-src is named as a device, not read", () => {
    const dir = smurfsCheckout()
    const file = join(dir, SMURFS_FILES.executor)
    rmSync(file)
    symlinkSync("/dev/zero", file)
    expect(() => readSmurfsSource(dir)).toThrow(new RegExp(`${file}: a device, not a file smurfs reads`))
  })

  it("a FIFO in --stb is named, not waited on", () => {
    const dir = join(scratch, `stb-${n++}`)
    fifoAt(join(dir, STB_FILES.react))
    const r =
      inChild(`const { readStbFile } = await import(${JSON.stringify(moduleUrl("src/text/stabletoolbench-files.ts"))})
try { readStbFile(${JSON.stringify(dir)}, ${JSON.stringify(STB_FILES.react)}); console.log("read") } catch (e) { console.log(e.message) }`)
    expect(r.signal).toBeNull()
    expect(r.stdout).toContain(join(dir, STB_FILES.react))
    expect(r.stdout).toContain("FIFO")
  }, 30_000)

  it("a FIFO as the --data queries file is named, not waited on", () => {
    const data = join(scratch, `data-${n++}`)
    cpSync(MINI_DATA.path, data, { recursive: true })
    const fifo = join(data, "queries", "G1_instruction.json")
    fifoAt(fifo)
    const r = inChild(`const Effect = await import("effect/Effect")
const { loadQueries } = await import(${JSON.stringify(moduleUrl("bench/datasets.ts"))})
const e = await Effect.runPromise(Effect.flip(loadQueries({ dir: ${JSON.stringify(data)}, groups: ["G1_instruction"] })))
console.log(e.message)`)
    expect(r.signal).toBeNull()
    expect(r.stdout).toContain(fifo)
    expect(r.stdout).toContain("FIFO")
  }, 30_000)

  it("--responses /dev/zero is a message naming it, not a crash", () => {
    const r = inChild(`const Effect = await import("effect/Effect")
const { loadResponsesJsonl } = await import(${JSON.stringify(moduleUrl("src/tools/environments/replay.ts"))})
const { makeReplayIndex } = await import(${JSON.stringify(moduleUrl("src/tools/environments/recorded.ts"))})
const e = await Effect.runPromise(Effect.flip(loadResponsesJsonl(makeReplayIndex(), "/dev/zero")))
console.log("failed:", e.message)`)
    expect(r.signal).toBeNull()
    expect(r.stdout).toMatch(/failed: .*\/dev\/zero: a device/)
  }, 30_000)

  it("a prompt file of 80,000 blank lines is refused at once (the search for its constant is linear)", () => {
    const dir = smurfsCheckout()
    const file = join(dir, SMURFS_FILES.planner)
    writeFileSync(file, "\n".repeat(80_000))
    // 18 s before (a quadratic pattern); the test's own timeout catches a return of it
    expect(() => readSmurfsSource(dir)).toThrow(new RegExp(`${file}: no string task_decompose_prompt found`))
  }, 5_000)
})
