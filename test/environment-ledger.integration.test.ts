// The environment ledger (issue 31 §4): every tool call recorded as replayed (exact or lenient), simulated (by which
// simulator), missed or failed; run.json sums them per method; compare refuses runs of different environments unless
// --allow-env-mismatch, and shows each pass rate's share of simulated and missed calls.
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { evaluatePass } from "../bench/eval/evaluate.ts"
import { loadSource } from "../bench/eval/sources.ts"
import { scriptedLayer } from "../src/llm/scripted.ts"
import { ANSWERING_SIMULATOR, bench1073, CALL_1073 as CALL, toolCalls1073, writeScript } from "./bench-1073.ts"
import { smurfs } from "./cli/spawn.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-ledger-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

// three calls of query 1073's tool: recorded exactly, recorded once its empty argument is dropped, never recorded
const MODEL = writeScript(scratch, "model.json", {
  $cycle: true,
  react: [
    { text: "a", toolCalls: [{ name: CALL, arguments: { q: "birthday party ideas" } }] },
    { text: "b", toolCalls: [{ name: CALL, arguments: { q: "birthday party ideas", country: "" } }] },
    { text: "c", toolCalls: [{ name: CALL, arguments: { q: "zzz unrecorded" } }] },
    { text: "d", toolCalls: [{ name: "Finish", arguments: { return_type: "give_answer", final_answer: "zzz.com" } }] }
  ]
})
const SIMULATOR = writeScript(scratch, "simulator.json", ANSWERING_SIMULATOR)

const bench = (out: string, ...extra: Array<string>) =>
  smurfs(["bench", ...bench1073(`scripted:${MODEL}`, out), ...extra])

const toolCalls = toolCalls1073
const runJson = (out: string) => JSON.parse(readFileSync(join(out, "run.json"), "utf8"))
const judge = (out: string) =>
  Effect.runPromise(
    evaluatePass(loadSource(out).entries, { store: out, judge: "scripted:judge", k: 1 }).pipe(
      Effect.provide(
        scriptedLayer({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "ok" }], $cycle: true })
      )
    )
  )

const offline = join(scratch, "offline")
const offlineAgain = join(scratch, "offline-again")
const simulated = join(scratch, "simulated")

beforeAll(async () => {
  for (const [out, extra] of [
    [offline, []],
    [offlineAgain, []],
    [simulated, ["--simulator", `scripted:${SIMULATOR}`]]
  ] as const) {
    const { code, stderr } = await bench(out, ...extra)
    expect(code, stderr).toBe(0)
    await judge(out)
  }
})

describe("the environment ledger", () => {
  it("records each call as replayed (exact, lenient), missed, or simulated by the named simulator", () => {
    expect(toolCalls(offline).map((d) => [d["served"], d["match"]])).toEqual([
      ["replayed", "exact"],
      ["replayed", "lenient"],
      ["missed", undefined]
    ])
    const sim = toolCalls(simulated)
    expect(sim.map((d) => d["served"])).toEqual(["replayed", "replayed", "simulated"])
    expect(sim[2]!["simulator"]).toBe(`scripted:${SIMULATOR} · smurfs`)
  })

  it("run.json sums the ledger per method", () => {
    expect(runJson(offline).ledger).toEqual({
      react: {
        toolCalls: 3,
        replayed: 1,
        replayedLenient: 1,
        simulated: 0,
        missed: 1,
        failed: 0,
        direct: 0,
        simulators: {}
      }
    })
    expect(runJson(simulated).ledger.react).toMatchObject({
      toolCalls: 3,
      simulated: 1,
      missed: 0,
      simulators: { [`scripted:${SIMULATOR} · smurfs`]: 1 }
    })
  })

  it("compare refuses runs of different environments, naming the difference", async () => {
    const { code, stdout, stderr } = await smurfs(["compare", offline, simulated])
    expect(code).toBe(3)
    expect(stdout).toBe("")
    expect(stderr).toMatch(/different environments/)
    expect(stderr).toContain(`${offline} vs ${simulated}: `)
    expect(stderr).toMatch(/environment chain \(--env\): replay,offline vs replay,simulated/)
    expect(stderr).toMatch(/simulator \(--simulator, its texts\): none vs scripted:.* · smurfs/)
    expect(stderr).toMatch(/--allow-env-mismatch/)
  })

  it("with --allow-env-mismatch, the other run's rows are marked; pass rates show their simulated and missed shares", async () => {
    const table = await smurfs(["compare", offline, simulated, "--allow-env-mismatch"])
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toMatch(/offline .*100\.0 ± 0\.0 (\[[^\]]*\] )?\(33\.3% calls missed\)/)
    expect(table.stdout).toMatch(/simulated \(env≠\) .*100\.0 ± 0\.0 (\[[^\]]*\] )?\(33\.3% simulated\)/)
    const json = await smurfs(["compare", offline, simulated, "--allow-env-mismatch", "--json"])
    const rows = JSON.parse(json.stdout).rows as Array<Record<string, unknown>>
    expect(rows[0]).toMatchObject({ source: "offline", missRate: 1 / 3 })
    expect(rows[0]!["environmentMismatch"]).toBeUndefined()
    expect(rows[1]).toMatchObject({ source: "simulated (env≠)", simulatedRate: 1 / 3 })
    expect(rows[1]!["environmentMismatch"]).toEqual([
      "environment chain (--env): replay,offline vs replay,simulated",
      `simulator (--simulator, its texts): none vs scripted:${SIMULATOR} · smurfs`
    ])
  })

  it("runs of one environment are set side by side as before", async () => {
    const { code, stdout, stderr } = await smurfs(["compare", offline, offlineAgain])
    expect(code, stderr).toBe(0)
    expect(stdout).not.toMatch(/env≠/)
  })
})
