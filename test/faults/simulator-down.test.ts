// A tool simulator (`--simulator`) that is down for the whole run is not a healthy run (issue 36, point 2): each call it
// could not answer is a miss, the task is `error` (redone by --resume), the bench exits 4; a simulator model the
// server lacks is refused at the start, as `--model` is.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { run as bench } from "../../src/cli/commands/bench.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { runCapturingStderr } from "../capture-console.ts"
import { MINI_DATA } from "../data.ts"
import { startFakeOpenAI } from "../fake-servers/openai.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-simulator-down-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const savedBase = process.env["OPENAI_BASE_URL"]
afterEach(() => {
  if (savedBase === undefined) delete process.env["OPENAI_BASE_URL"]
  else process.env["OPENAI_BASE_URL"] = savedBase
})

// the model under test calls a tool with arguments nothing recorded, then answers
const MODEL = join(scratch, "model.json")
writeFileSync(
  MODEL,
  JSON.stringify({
    $cycle: true,
    react: [
      {
        text: "Look it up.",
        toolCalls: [{ name: "popularsitesforquery_for_keyword_analysis", arguments: { q: "zzz unrecorded" } }]
      },
      {
        text: "Done.",
        toolCalls: [
          { name: "Finish", arguments: { return_type: "give_answer", final_answer: "Popular sites: zzz.com" } }
        ]
      }
    ]
  })
)

const args = (out: string, more: Array<string> = []) => [
  "--data",
  MINI_DATA.path,
  "--group",
  "G1_instruction",
  "--method",
  "react",
  "--ids",
  "1073",
  "--model",
  `scripted:${MODEL}`,
  "--simulator",
  "openai:qwen2.5:7b",
  "--out",
  out,
  ...more
]
const record = (out: string) =>
  JSON.parse(readFileSync(join(out, "tasks", "react", "G1_instruction", "1073.json"), "utf8"))

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
