// Each method's own step limit on the command line: --smurfs-max-steps (run, bench) and
// --single-chain-max-step (bench), what run.json records, and the old --max-steps.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it, vi } from "vitest"
import { run as bench } from "../../src/cli/commands/bench.ts"
import { run } from "../../src/cli/commands/run.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { bench1073 } from "../bench-1073.ts"
import { MINI_DATA } from "../data.ts"

const REPO = fileURLToPath(new URL("../../", import.meta.url))
const DATA = MINI_DATA.path
const BENCH_SCRIPT = join(REPO, "examples", "bench-script.json")
const scratch = mkdtempSync(join(tmpdir(), "smurfs-step-limits-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/**
 * A Smurfs script whose verifier never accepts: the search runs to the step limit, one calculator call per step. The
 * default loop: one fused executor reply per step, the tool's short response is the step's answer (no Answer agent).
 */
const SCRIPT = join(scratch, "pending.json")
writeFileSync(
  SCRIPT,
  JSON.stringify({
    planner: [{ subtasks: ["Compute 2 + 3"] }],
    "executor.fused": [{ thought: "compute it", tool: "calculator", arguments: { expression: "2 + 3" } }],
    verifier: [{ status: "pending", reason: "check again", hint: "again" }],
    "answerer.subtask": [{ answer: "5" }],
    "answerer.final": [{ answer: "2 + 3 = 5" }],
    $cycle: true
  })
)

/** Run a command in-process, capturing stdout and stderr lines. */
const capture = async (command: (argv: Array<string>) => Promise<number>, argv: Array<string>) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const spies = [
    vi.spyOn(console, "log").mockImplementation((...a) => void out.push(a.join(" "))),
    vi.spyOn(console, "error").mockImplementation((...a) => void err.push(a.join(" ")))
  ]
  const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true)
  try {
    const code = await command(argv)
    return { code, stdout: out.join("\n"), stderr: err.join("\n") }
  } finally {
    for (const s of spies) s.mockRestore()
    write.mockRestore()
  }
}

const toolCalls = (stdout: string) => (JSON.parse(stdout) as { totals: { toolCalls: number } }).totals.toolCalls

describe("smurfs run: --smurfs-max-steps", () => {
  const runArgs = ["What is 2 + 3?", "--model", `scripted:${SCRIPT}`, "--json"]

  it("defaults to 3 accepted steps and passes a given limit to the loop", async () => {
    expect(toolCalls((await capture(run, runArgs)).stdout)).toBe(3)
    expect(toolCalls((await capture(run, [...runArgs, "--smurfs-max-steps", "2"])).stdout)).toBe(2)
  })

  it("keeps --max-steps as a deprecated alias with a one-line notice, and refuses both at once", async () => {
    const alias = await capture(run, [...runArgs, "--max-steps", "1"])
    expect(alias.code).toBe(ExitCode.Ok)
    expect(toolCalls(alias.stdout)).toBe(1)
    expect(alias.stderr).toBe("smurfs run: --max-steps is deprecated; use --smurfs-max-steps (same meaning)")
    const both = await capture(run, [...runArgs, "--max-steps", "1", "--smurfs-max-steps", "2"])
    expect(both.code).toBe(ExitCode.Usage)
    expect(both.stderr).toContain("give only --smurfs-max-steps")
  })
})

describe("smurfs bench: each method's own limit", () => {
  const base = (out: string) => bench1073(`scripted:${BENCH_SCRIPT}`, out, DATA)
  const options = (out: string) =>
    (JSON.parse(readFileSync(join(out, "run.json"), "utf8")) as { options: Record<string, unknown> }).options

  it("records in run.json the limits that ran: smurfs 3 steps and StableToolBench's 12 nodes by default", async () => {
    const out = join(scratch, "defaults")
    expect((await capture(bench, base(out))).code).toBe(ExitCode.Ok)
    expect(options(out)).toMatchObject({
      smurfs: { maxSteps: 3, maxAgentErrors: 4, maxSubtasks: 6, maxModelCalls: 150 },
      singleChainMaxStep: 12
    })
    expect(options(out)).not.toHaveProperty("maxSteps")
  })

  it("passes --smurfs-max-steps and --single-chain-max-step separately", async () => {
    const out = join(scratch, "given")
    expect((await capture(bench, [...base(out), "--smurfs-max-steps", "2", "--single-chain-max-step", "4"])).code).toBe(
      ExitCode.Ok
    )
    expect(options(out)).toMatchObject({ smurfs: { maxSteps: 2 }, singleChainMaxStep: 4 })
  })

  it("refuses the old --max-steps, naming both new flags", async () => {
    const { code, stderr } = await capture(bench, [...base(join(scratch, "old")), "--max-steps", "5"])
    expect(code).toBe(ExitCode.Usage)
    expect(stderr).toContain("--max-steps was split in two: --smurfs-max-steps <n> for smurfs")
    expect(stderr).toContain("--single-chain-max-step <n> for react/dfsdt")
  })
})
