// A tool simulator (`--simulator`) that is down for the whole run is not a healthy run (issue 36, point 2): each call it
// could not answer is a miss, the task is `error` (redone by --resume), the bench exits 4; a simulator model the
// server lacks is refused at the start, as `--model` is.
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { run as bench } from "../../src/cli/commands/bench.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { bench1073, record1073, UNRECORDED_CALL, writeScript } from "../bench-1073.ts"
import { runCapturingStderr } from "../capture-console.ts"
import { startFakeOpenAI } from "../fake-servers/openai.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-simulator-down-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const savedBase = process.env["OPENAI_BASE_URL"]
afterEach(() => {
  if (savedBase === undefined) delete process.env["OPENAI_BASE_URL"]
  else process.env["OPENAI_BASE_URL"] = savedBase
})

const MODEL = writeScript(scratch, "model.json", UNRECORDED_CALL)

const args = (out: string, more: Array<string> = []) => [
  ...bench1073(`scripted:${MODEL}`, out),
  "--simulator",
  "openai:qwen2.5:7b",
  ...more
]
const record = record1073

/** A loopback address nothing listens on: a server started, then closed. */
const deadURL = async () => {
  const server = await startFakeOpenAI()
  await server.close()
  return server.baseURL
}

describe("a simulator that is down all run", () => {
  it("makes the call a miss and the task `error`, exits 4, and --resume with the simulator back finishes the task", async () => {
    const out = join(scratch, "down")
    process.env["OPENAI_BASE_URL"] = await deadURL()
    const first = await runCapturingStderr(bench, args(out))
    expect(first.stderr).toMatch(
      /1 failed because of the model server.*\n.*the tool simulator failed: Cannot reach.*\n.*doctor --model openai:qwen2.5:7b/
    )
    expect(first.code).toBe(ExitCode.ModelUnavailable)
    const failed = record(out)
    expect(failed.finishType).toBe("error")
    expect(failed.error).toMatch(/tool simulator failed/)
    expect(failed.totals).toMatchObject({ toolCalls: 1, missedToolCalls: 1 })
    const call = (failed.events as Array<{ type: string; data: Record<string, unknown> }>).find((e) =>
      e.type.endsWith("tool_call")
    )!.data
    expect(call).toMatchObject({ ok: false, missed: true, error: expect.stringMatching(/simulator could not answer/) })

    const live = await startFakeOpenAI()
    try {
      process.env["OPENAI_BASE_URL"] = live.baseURL
      const resumed = await runCapturingStderr(bench, args(out, ["--resume"]))
      expect(resumed.code).toBe(ExitCode.Ok)
      expect(record(out).finishType).toBe("give_answer")
      expect(record(out).totals.missedToolCalls).toBe(0)
    } finally {
      await live.close()
    }
  }, 60_000)

  it("a simulator model its server lacks is refused at the start, before a run directory is made", async () => {
    const out = join(scratch, "missing-model")
    const live = await startFakeOpenAI({ models: ["another-model"] })
    try {
      process.env["OPENAI_BASE_URL"] = live.baseURL
      const r = await runCapturingStderr(bench, args(out))
      expect(r.code).toBe(ExitCode.ModelUnavailable)
      expect(r.stderr).toContain("qwen2.5:7b")
      expect(existsSync(out)).toBe(false)
    } finally {
      await live.close()
    }
  }, 60_000)
})
