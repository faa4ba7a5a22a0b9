// What a kill -9 can leave in a run directory, and that every such state can be resumed or restarted.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { openRunDir } from "../../bench/run-dir.ts"
import { RUN_FORMAT_VERSION, type RunConfig } from "../../bench/run-format.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-run-dir-crash-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const config: RunConfig = {
  formatVersion: RUN_FORMAT_VERSION,
  packageVersion: "0.1.0",
  createdAt: "2026-01-01T00:00:00.000Z",
  data: "/data",
  groups: ["G1_instruction"],
  methods: ["smurfs"],
  model: "sim",
  envs: ["replay", "offline"],
  toolset: "all",
  concurrency: 1,
  options: {}
}

describe("a run killed while writing its run.json", () => {
  const killedDuringFirstWrite = (name: string) => {
    const dir = join(scratch, name)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `run.json.tmp-4242-abcdefgh`), '{"formatVersion": 1, "packa')
    return dir
  }

  it.each([false, true])("starts again (resume: %s) instead of refusing the directory", async (resume) => {
    const dir = killedDuringFirstWrite(`first-write-${resume}`)
    const opened = await Effect.runPromise(openRunDir(dir, config, resume))
    expect(opened).toEqual({ config, resumed: false })
    expect(readdirSync(dir)).toEqual(["run.json"])
  })

  it("still refuses a directory that holds anything else", async () => {
    const dir = killedDuringFirstWrite("with-other-files")
    writeFileSync(join(dir, "notes.txt"), "mine")
    const error = await Effect.runPromise(Effect.flip(openRunDir(dir, config, false)))
    expect(error.message).toContain("not empty")
  })
})
