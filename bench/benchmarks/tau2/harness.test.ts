import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { silentProgress } from "../../progress.ts"
import { collectRows } from "../../report/collect.ts"
import { compareStatistics } from "../../report/comparison.ts"
import { collectResults } from "../../report/results.ts"
import { benchSettings } from "../../settings.ts"
import { benchmarkFor } from "../index.ts"
import { tau2Benchmark } from "./benchmark.ts"
import { tau2Queries } from "./harness.ts"
import { loadTestDomain, testDomain } from "./test-domain.ts"

/** A τ² checkout with only the user simulator's guidelines (the domain comes from the test domain). */
const checkout = () => {
  const dir = mkdtempSync(join(tmpdir(), "tau2-checkout-"))
  mkdirSync(join(dir, "data", "tau2", "user_simulator"), { recursive: true })
  writeFileSync(join(dir, "data", "tau2", "user_simulator", "simulation_guidelines.md"), "Play a customer.\n")
  return dir
}

const script = (dir: string, name: string, value: unknown) => {
  const file = join(dir, `${name}.json`)
  writeFileSync(file, JSON.stringify(value))
  return `scripted:${file}`
}

const cancel = {
  toolCalls: [{ id: "c1", name: "cancel_pending_order", arguments: { order_id: "#W1", reason: "no longer needed" } }]
}

/** τ²'s pass^k of one task (tau2/metrics/agent_metrics.py): comb(c, k) / comb(n, k). */
const comb = (n: number, k: number): number => (k > n ? 0 : k === 0 ? 1 : (comb(n - 1, k - 1) * n) / k)
const tau2PassHatK = (n: number, c: number, k: number) => comb(c, k) / comb(n, k)

describe("a τ² bench run", () => {
  it("runs 3 trials into one record each, labels them by reward, and compare computes pass^k as τ² does", async () => {
    const tau2 = checkout()
    const work = mkdtempSync(join(tmpdir(), "tau2-run-"))
    const out = join(work, "run")
    // trials run one after the other: two conversations that cancel the order, one that does not
    const model = script(work, "agent", { "tau2.agent": [cancel, "Done: #W1 is cancelled.", cancel, "Done.", "Why?"] })
    const userModel = script(work, "user", {
      "tau2.user": [
        "Cancel my order #W1.",
        "Thanks ###STOP###",
        "Cancel #W1.",
        "###STOP###",
        "Cancel #W1.",
        "Bye ###STOP###"
      ]
    })
    const settings = benchSettings({ out, tau2, model, userModel, runs: 3, concurrency: 1 })
    expect(settings.methods).toEqual(["tau2-agent"])
    const benchmark = tau2Benchmark(loadTestDomain)
    expect(benchmarkFor(settings, [benchmark]).name).toBe("tau2")
    // the registry: τ² for --tau2, StableToolBench otherwise
    expect(benchmarkFor(settings).name).toBe("tau2")
    expect(benchmarkFor(benchSettings({ out })).name).toBe("stabletoolbench")
    const outcome = await Effect.runPromise(benchmark.run(settings, silentProgress))
    expect(outcome.kind === "ran" && outcome.summary.recorded).toBe(3)

    const results = collectResults(out)
    expect(results.map((r) => [r.run ?? 0, r.labels.map((l) => `${l.judge}:${l.label}`)])).toEqual([
      [0, ["tau2:Solved"]],
      [1, ["tau2:Solved"]],
      [2, ["tau2:Unsolved"]]
    ])
    const rows = collectRows([out])
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ method: "tau2-agent", group: "retail", judge: "tau2", judged: 3 })
    // mean reward over the trials: 2 of 3
    expect(rows[0]!.pass?.mean).toBeCloseTo(200 / 3, 6)
    const stats = compareStatistics(rows)
    const passK = stats.rows[0]!.passK!
    expect(passK.map((p) => p.k)).toEqual([1, 2, 3])
    for (const p of passK) expect(p.passHat.estimate / 100).toBeCloseTo(tau2PassHatK(3, 2, p.k), 9)
    expect(passK.map((p) => Math.round(p.passHat.estimate * 1000) / 1000)).toEqual([66.667, 33.333, 0])

    const config = JSON.parse(readFileSync(join(out, "run.json"), "utf8")) as { options: Record<string, unknown> }
    expect(config.options["benchmark"]).toBe("tau2")
    expect(config.options["runs"]).toEqual([42, 43, 44])
  })

  it("takes a split's tasks with --task-split, and names the splits there are for one it does not have", async () => {
    const domain = { ...testDomain, splits: { base: ["0"], train: [] } } as never
    const ids = (taskSplit?: string) =>
      Effect.runPromise(Effect.map(tau2Queries(domain, { taskSplit, tau2: "t" } as never), (q) => q.map((t) => t.id)))
    expect(await ids()).toEqual(["0"])
    expect(await ids("base")).toEqual(["0"])
    expect(await ids("train")).toEqual([])
    const exit = await Effect.runPromiseExit(tau2Queries(domain, { taskSplit: "test", tau2: "t" } as never))
    expect(JSON.stringify(exit)).toContain('no task split \\"test\\"')
    expect(JSON.stringify(exit)).toContain("base, train")
  })

  it("refuses a StableToolBench method with --tau2, and a conversing agent without it", () => {
    expect(() => benchSettings({ out: "x", tau2: "t", userModel: "sim", methods: ["smurfs"] })).toThrow(
      /cannot hold one/
    )
    expect(() => benchSettings({ out: "x", methods: ["chat"] })).toThrow(/--tau2/)
    expect(() => benchSettings({ out: "x", tau2: "t" })).toThrow(/--user-model/)
  })
})
