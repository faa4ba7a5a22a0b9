// `smurfs bench` with and without a simulator: misses counted and shown beside pass rates, or answered by a
// simulator model into a StableToolBench cache folder that the next run replays.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it, vi } from "vitest"
import { evaluatePass } from "../bench/eval/evaluate.ts"
import { loadSource, sourceProfile } from "../bench/eval/sources.ts"
import { run as bench } from "../src/cli/commands/bench.ts"
import { run as compare } from "../src/cli/commands/compare.ts"
import { ExitCode } from "../src/cli/exit-codes.ts"
import { scriptedLayer } from "../src/llm/scripted.ts"
import {
  ANSWERING_SIMULATOR,
  bench1073,
  record1073,
  toolCalls1073,
  UNRECORDED_CALL,
  writeScript
} from "./bench-1073.ts"
import { runCapturingStderr } from "./capture-console.ts"
import { lacks, MINI_DATA, STB_CHECKOUT, skipNote } from "./data.ts"

const DATA = MINI_DATA.path
const STB = STB_CHECKOUT.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-bench-sim-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const MODEL = writeScript(scratch, "model.json", UNRECORDED_CALL)
const SIMULATOR = writeScript(scratch, "simulator.json", ANSWERING_SIMULATOR)
// a simulator that cannot answer: a run that needed it would record a failed call
const MUTE_SIMULATOR = writeScript(scratch, "mute.json", { "tool.simulate": [] })

const base = (out: string) => bench1073(`scripted:${MODEL}`, out, DATA)
const record = record1073
const toolCall = (out: string) => toolCalls1073(out)[0]

describe("smurfs bench without a simulator", () => {
  it("says so at the start, records the misses per task and in run.json, and compare shows the miss rate beside the pass rate", async () => {
    const out = join(scratch, "offline")
    const { code, stderr } = await runCapturingStderr(bench, base(out))
    expect(code).toBe(ExitCode.Ok)
    expect(stderr).toMatch(/no simulator: a tool call nothing recorded fails/)
    expect(record(out).totals).toMatchObject({ toolCalls: 1, missedToolCalls: 1 })
    expect(toolCall(out)).toMatchObject({ ok: false, missed: true })
    const config = JSON.parse(readFileSync(join(out, "run.json"), "utf8"))
    expect(config).toMatchObject({
      envs: ["replay", "offline"],
      misses: { missedToolCalls: 1, toolCalls: 1, tasksWithMisses: 1 }
    })
    expect(config.options.simulator).toBeUndefined()

    await Effect.runPromise(
      // labels keyed by the run's profile, as `smurfs eval` keys them (compare reads them by it)
      evaluatePass(loadSource(out).entries, {
        store: out,
        judge: "scripted:judge",
        k: 1,
        profile: sourceProfile(out)
      }).pipe(
        Effect.provide(
          scriptedLayer({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "ok" }], $cycle: true })
        )
      )
    )
    const lines: Array<string> = []
    const spy = vi.spyOn(console, "log").mockImplementation((...a) => void lines.push(a.join(" ")))
    try {
      expect(await compare([out])).toBe(ExitCode.Ok)
    } finally {
      spy.mockRestore()
    }
    expect(lines.join("\n")).toMatch(/100\.0 ± 0\.0 \[100\.0, 100\.0\] \(100\.0% calls missed\)/)
  })
})

describe.skipIf(lacks(STB_CHECKOUT))(`smurfs bench --simulator${skipNote(STB_CHECKOUT)}`, () => {
  it("answers a miss with the simulator into the --cache-dir folder (created), and the next run replays it without a model call", async () => {
    const cache = join(scratch, "shared", "tool_response_cache")
    const out = join(scratch, "simulated")
    const { code, stderr } = await runCapturingStderr(bench, [
      ...base(out),
      "--simulator",
      `scripted:${SIMULATOR}`,
      "--stb",
      STB,
      "--cache-dir",
      cache
    ])
    expect(code, stderr).toBe(ExitCode.Ok)
    expect(stderr).not.toMatch(/no simulator/)
    // (react's observation is StableToolBench's {"error", "response"} text)
    expect(toolCall(out)).toMatchObject({
      ok: true,
      content: expect.stringContaining("zzz.com is the most popular site")
    })
    expect(record(out).totals.missedToolCalls).toBe(0)
    const config = JSON.parse(readFileSync(join(out, "run.json"), "utf8"))
    expect(config.envs).toEqual(["replay", "simulated"])
    expect(config.options.simulator).toEqual({
      model: `scripted:${SIMULATOR}`,
      prompts: `stabletoolbench:${STB}`,
      cacheDir: cache
    })
    const file = join(cache, "Data", "keyword_analysis_for_Data", "popularsitesforquery.json")
    expect(existsSync(file)).toBe(true)
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      "{'q': 'zzz unrecorded'}": { error: "", response: "zzz.com is the most popular site" }
    })

    const next = join(scratch, "replayed")
    const again = await runCapturingStderr(bench, [
      ...base(next),
      "--simulator",
      `scripted:${MUTE_SIMULATOR}`,
      "--cache-dir",
      cache
    ])
    expect(again.code).toBe(ExitCode.Ok)
    expect(toolCall(next)).toMatchObject({
      ok: true,
      content: expect.stringContaining("zzz.com is the most popular site")
    })
  })
})
