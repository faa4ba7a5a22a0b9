// Symbolic links inside a run's own store (issue 36, point 4): the simulator's cache folder inside the run linked
// elsewhere, a `tasks/<method>/<group>` swapped for a link between the check and the open (a race), and an `eval/`
// linked elsewhere: nothing lands outside, not even a folder, and the refusal names the link.
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import * as Effect from "effect/Effect"
import { afterAll, describe, expect, it } from "vitest"
import { writeFakeRun } from "../../bench/eval/test-fixtures.ts"
import { run as evaluate } from "../../src/cli/commands/eval.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { cacheFilePath } from "../../src/tools/environments/cache-store.ts"
import { type AtomicWriteFs, nodeAtomicWriteFs, writeJsonAtomic } from "../../src/trace/atomic-write.ts"
import { runCapturingStderr } from "../capture-console.ts"
import { serveFind } from "./simulated-find.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-hostile-store-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const tree = (dir: string): Array<string> => readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()

const judgeFile = join(scratch, "judge.json")
writeFileSync(
  judgeFile,
  JSON.stringify({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }], $cycle: true })
)

describe("point 4: symbolic links inside the run's own store", () => {
  it("the simulator's cache folder inside the run is not written through a linked <Category>/ folder", async () => {
    const out = join(scratch, "cache-link", "run")
    const outside = join(scratch, "cache-link", "outside")
    const cache = join(out, "simulated", "tool_response_cache")
    mkdirSync(cache, { recursive: true })
    mkdirSync(outside, { recursive: true })
    symlinkSync(outside, join(cache, "Data"))
    const warnings: Array<string> = []
    const result = await serveFind({ cacheDir: cache, storeRoot: out, warn: (line) => warnings.push(line) })
    expect(result).toMatchObject({ ok: true }) // the call is answered; its copy is not stored through the link
    expect(tree(outside)).toEqual([])
    expect(warnings.join("\n")).toContain(join(cache, "Data"))
    expect(warnings.join("\n")).toContain("symbolic link")
    expect(cacheFilePath(cache, "Data", "search", "find")).toContain(join(cache, "Data"))
  })

  it("a task folder swapped for a link between the check and the open puts no byte outside", async () => {
    const run = join(scratch, "race", "run")
    const outside = join(scratch, "race", "outside")
    const group = join(run, "tasks", "react", "G1")
    mkdirSync(group, { recursive: true })
    mkdirSync(outside, { recursive: true })
    // the attacker's move lands right after the lstat checks, as the temp file is opened
    let swapped = false
    const racing: AtomicWriteFs = {
      ...nodeAtomicWriteFs,
      open: async (path, flags) => {
        if (!swapped && dirname(path) === group) {
          swapped = true
          renameSync(group, `${group}.moved`)
          symlinkSync(outside, group)
        }
        return nodeAtomicWriteFs.open(path, flags)
      }
    }
    const error = await Effect.runPromise(
      Effect.flip(writeJsonAtomic({ root: run, path: join(group, "1.json") }, { finishType: "give_answer" }, racing))
    )
    expect(swapped).toBe(true)
    expect(error.message).toContain("symbolic link")
    expect(tree(outside)).toEqual([])
  })

  it("an eval/ linked elsewhere is refused before any folder is made there", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }], mkdtempSync(join(scratch, "eval-link-")))
    const outside = join(scratch, `eval-outside-${Date.now()}`)
    mkdirSync(outside, { recursive: true })
    symlinkSync(outside, join(dir, "eval"))
    const { code, stderr } = await runCapturingStderr(evaluate, [
      "--run",
      dir,
      "--judge",
      `scripted:${judgeFile}`,
      "--k",
      "1"
    ])
    expect(code).not.toBe(ExitCode.Ok)
    expect(stderr).toContain(join(dir, "eval"))
    expect(stderr).toContain("symbolic link")
    expect(tree(outside)).toEqual([])
  })
})
