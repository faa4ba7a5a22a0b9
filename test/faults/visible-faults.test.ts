// Visible, not silent (issue 36, point 9): HTTP 503 answers a call was retried after are counted in the task's record,
// escape sequences in task data reach no terminal raw from `compare` or `eval`, `{__proto__}` in a checkout's template
// is refused naming the file, and --max-record-bytes below a minimum is refused.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, describe, expect, it, vi } from "vitest"
import { writeFakeRun } from "../../bench/eval/test-fixtures.ts"
import { readSmurfsSource, SMURFS_FILES } from "../../src/agents/smurfs-source.ts"
import { run as bench } from "../../src/cli/commands/bench.ts"
import { run as compare } from "../../src/cli/commands/compare.ts"
import { run as evaluate } from "../../src/cli/commands/eval.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { pythonFormat } from "../../src/text/stabletoolbench-files.ts"
import { runCapturingStderr } from "../capture-console.ts"
import { MINI_DATA } from "../data.ts"
import { startFakeOpenAI } from "../fake-servers/openai.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-visible-faults-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const savedBase = process.env["OPENAI_BASE_URL"]
afterEach(() => {
  if (savedBase === undefined) delete process.env["OPENAI_BASE_URL"]
  else process.env["OPENAI_BASE_URL"] = savedBase
  vi.restoreAllMocks()
})

const ESC = "\u001b]0;pwned\u0007\u001b[2J"

/** What a command prints on stdout and stderr together. */
const printed = async (run: (argv: Array<string>) => Promise<number>, argv: Array<string>) => {
  const lines: Array<string> = []
  vi.spyOn(console, "log").mockImplementation((...a) => void lines.push(a.join(" ")))
  vi.spyOn(console, "error").mockImplementation((...a) => void lines.push(a.join(" ")))
  vi.spyOn(process.stderr, "write").mockImplementation(() => true)
  const code = await run(argv)
  vi.restoreAllMocks()
  return { code, text: lines.join("\n") }
}

describe("point 9: faults are visible, not silent", () => {
  it("HTTP 503 answers a call was retried after are counted in the task's record", async () => {
    const server = await startFakeOpenAI({
      chat: [
        { fault: "status", status: 503, retryAfter: "0" },
        { fault: "status", status: 503, retryAfter: "0" },
        {
          toolCalls: [
            { name: "Finish", arguments: { return_type: "give_answer", final_answer: "Popular sites: zzz.com" } }
          ]
        }
      ]
    })
    try {
      process.env["OPENAI_BASE_URL"] = server.baseURL
      const out = join(scratch, "retries")
      const r = await runCapturingStderr(bench, [
        ...["--data", MINI_DATA.path, "--group", "G1_instruction", "--method", "react", "--ids", "1073"],
        ...["--model", "openai:qwen2.5:7b", "--out", out]
      ])
      expect(r.code, r.stderr).toBe(ExitCode.Ok)
      const record = JSON.parse(readFileSync(join(out, "tasks", "react", "G1_instruction", "1073.json"), "utf8"))
      expect(record.finishType).toBe("give_answer")
      expect(record.totals.serverRetries).toBe(2)
      const retried = (record.events as Array<{ type: string; data: Record<string, unknown> }>).filter(
        (e) => e.type.endsWith("model_call") && e.data["retried"] === true
      )
      expect(retried).toHaveLength(2)
      expect(String(retried[0]!.data["error"])).toMatch(/503/)
    } finally {
      await server.close()
    }
  }, 60_000)

  it("compare and eval show escape sequences from task data visibly", async () => {
    const group = `G1${ESC}`
    const dir = await writeFakeRun([{ taskId: "1", group }], mkdtempSync(join(scratch, "escapes-")))
    const judge = join(scratch, "judge.json")
    writeFileSync(
      judge,
      JSON.stringify({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "ok" }], $cycle: true })
    )
    const evaluated = await printed(evaluate, ["--run", dir, "--judge", `scripted:${judge}`, "--k", "1"])
    const compared = await printed(compare, [dir])
    for (const [name, r] of [
      ["eval", evaluated],
      ["compare", compared]
    ] as const) {
      expect(r.text, name).toContain("G1\\x1b]0;pwned\\x07")
      expect(r.text.includes("\u001b"), `${name} printed a raw ESC`).toBe(false)
    }
  }, 60_000)

  it("`{__proto__}` in a checkout's template is refused naming the file, never rendered as [object Object]", () => {
    expect(() => pythonFormat("a {__proto__} b", {})).toThrow(/template field \{__proto__\} has no value/)
    const dir = join(scratch, "smurfs-proto")
    cpSync(fileURLToPath(new URL("../fixtures/smurfs-src", import.meta.url)), dir, { recursive: true })
    const file = join(dir, SMURFS_FILES.planner)
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace("{question}", "{__proto__}").replace("{query}", "{__proto__}")
    )
    expect(() => readSmurfsSource(dir)).toThrow(
      new RegExp(`${file}: task_decompose_prompt has the field \\{__proto__\\}`)
    )
  })

  it("--max-record-bytes below the minimum is refused (usage), not silently exceeded", async () => {
    const out = join(scratch, "tiny-records")
    mkdirSync(scratch, { recursive: true })
    const r = await runCapturingStderr(bench, [
      ...["--data", MINI_DATA.path, "--group", "G1_instruction", "--method", "react", "--ids", "1073"],
      ...["--model", "scripted:x.json", "--out", out, "--max-record-bytes", "1"]
    ])
    expect(r.code).toBe(ExitCode.Usage)
    expect(r.stderr).toMatch(/--max-record-bytes must be at least 65536/)
  })
})
