// The main jobs through the real llama.cpp engine on a tiny generated model, no server anywhere: solve(), `smurfs run`,
// a bench of smurfs (three-call and fused), react and dfsdt interrupted and resumed, eval with the tiny judge, the tool
// simulator, doctor, and model files that are no model. Every task ends answered or given up, never error nor hung.
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it, vi } from "vitest"
import { disposeIdleLlamaEngines } from "../../src/llm/providers/llama.ts"
import { solve } from "../../src/solve.ts"
import { bin, repo, smurfs } from "../cli/spawn.ts"
import { MINI_DATA } from "../data.ts"
import { removeTinyModels, tinyModelFile } from "./tiny-model.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-engine-"))
afterAll(async () => {
  await disposeIdleLlamaEngines()
  removeTinyModels()
  rmSync(scratch, { recursive: true, force: true })
})

/** One thread: more than the free cores make llama.cpp's spinning workers crawl on a shared machine. */
const ENV = { SMURFS_LLAMA_THREADS: "1" }
const model = () => `llama:${tinyModelFile()}`

/** Every task record of a run directory. */
const records = (out: string) =>
  readdirSync(join(out, "tasks")).flatMap((method) =>
    readdirSync(join(out, "tasks", method)).flatMap((group) =>
      readdirSync(join(out, "tasks", method, group))
        .filter((f) => f.endsWith(".json"))
        .map(
          (f) =>
            JSON.parse(readFileSync(join(out, "tasks", method, group, f), "utf8")) as {
              method: string
              finishType: string
              /** The give-up's reason, or the failure of a task that ended "error". */
              error?: string
            }
        )
    )
  )

const expectEnded = (out: string, count: number) => {
  const all = records(out)
  expect(all).toHaveLength(count)
  for (const r of all) expect(["give_answer", "give_up"], `${r.method}: ${r.error}`).toContain(r.finishType)
}

const BENCH = (out: string, ...more: string[]) => [
  "bench",
  "--data",
  MINI_DATA.path,
  "--group",
  "G1_instruction",
  "--limit",
  "2",
  "--model",
  model(),
  "--out",
  out,
  ...more
]

describe("the embedded engine end to end", () => {
  it("solve() on the demo tools ends answered or given up with smurfs, react and dfsdt", async () => {
    for (const method of ["smurfs", "react", "dfsdt"] as const) {
      const trajectory = await solve("What is 12% of 2500?", {
        model: model(),
        modelOptions: { threads: 1 },
        tools: "demo",
        method
      })
      expect(["give_answer", "give_up"], `${method}: ${trajectory.error}`).toContain(trajectory.finishType)
      expect(trajectory.totals.modelCalls).toBeGreaterThan(0)
    }
  })

  it("`smurfs run --model llama:<gguf> --tools demo` answers and exits 0; doctor passes", async () => {
    // two processes of their own, each with its engine: started together
    const [run, doctor] = await Promise.all([
      smurfs(["run", "What is 12*7?", "--model", model(), "--tools", "demo"], { env: ENV }),
      smurfs(["doctor", "--model", model()], { env: ENV })
    ])
    expect(run.stderr).not.toMatch(/bug|Error:/)
    expect(run.code).toBe(0)
    expect(run.stdout.trim().length).toBeGreaterThan(0)
    expect(doctor.code).toBe(0)
    expect(doctor.stdout).toMatch(/engine\s+node-llama-cpp 3\.21\.1, prebuilt binary/)
    expect(doctor.stdout).toMatch(/memory\s+about/)
    expect(doctor.stdout).toMatch(/structured output\s+a valid JSON reply/)
  })

  it("a model file that is truncated or not GGUF: exit 3 and a message naming the file", async () => {
    const truncated = join(scratch, "truncated.gguf")
    writeFileSync(truncated, readFileSync(tinyModelFile()).subarray(0, 4000))
    const text = join(scratch, "text.gguf")
    writeFileSync(text, "not a model\n")
    const cases = [
      [truncated, /could not be loaded by llama\.cpp .*truncated/],
      [text, /is not a GGUF file/]
    ] as const
    const runs = await Promise.all(
      cases.map(([file]) => smurfs(["run", "hi", "--model", `llama:${file}`, "--tools", "demo"], { env: ENV }))
    )
    for (const [i, [file, said]] of cases.entries()) {
      const run = runs[i]!
      expect(run.code).toBe(3)
      expect(run.stderr).toContain(file)
      expect(run.stderr).toMatch(said)
      expect(run.stderr).not.toMatch(/bug|at .*\.js:\d+/)
    }
  })

  const benchOut = join(scratch, "bench")

  it("a bench of smurfs, react and dfsdt at concurrency 2, interrupted and resumed, ends every task", async () => {
    const args = BENCH(benchOut, "--method", "smurfs,react,dfsdt", "--concurrency", "2")
    const child = spawn(process.execPath, [bin, ...args], { cwd: repo, env: { ...process.env, ...ENV } })
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    // interrupted once a task is recorded, while others are in flight on the engine
    await vi.waitFor(() => expect(stderr).toMatch(/\[1\/6\]/), { timeout: 240_000, interval: 100 })
    child.kill("SIGINT")
    const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)))
    expect(code).toBe(130)
    expect(records(benchOut).length).toBeGreaterThan(0)
    expect(records(benchOut).length).toBeLessThan(6)
    const resumed = await smurfs([...args, "--resume"], { env: ENV })
    expect(resumed.code, resumed.stderr).toBe(0)
    expectEnded(benchOut, 6)
  }, 600_000)

  it("eval judges that run with the tiny model as judge", async () => {
    const judged = await smurfs(["eval", "--run", benchOut, "--judge", model(), "--k", "1"], { env: ENV })
    expect(judged.code, judged.stderr).toBe(0)
    expect(readdirSync(join(benchOut, "eval")).length).toBeGreaterThan(0)
  }, 600_000)

  it("the fused executor runs on the engine too", async () => {
    const fused = join(scratch, "fused")
    // one task: the fused executor's path through the engine is the same for each
    const run = await smurfs(BENCH(fused, "--method", "smurfs", "--executor", "fused", "--limit", "1"), { env: ENV })
    expect(run.code, run.stderr).toBe(0)
    expectEnded(fused, 1)
  }, 600_000)

  it("--simulator llama:<gguf> answers the calls nothing recorded, into the cache", async () => {
    const simulated = join(scratch, "simulated")
    const cache = join(scratch, "simulator-cache")
    // the default loop: the fused JSON reply has one branch per tool with its own parameters, so the grammar holds the
    // tiny model's arguments to the chosen tool's schema and its calls reach the simulator (with the reply's arguments
    // any object it filled them with names no tool has, and nothing was simulated)
    const sim = await smurfs(
      BENCH(
        simulated,
        ...["--method", "smurfs", "--limit", "1", "--env", "simulated"],
        ...["--simulator", model(), "--cache-dir", cache]
      ),
      { env: ENV }
    )
    expect(sim.code, sim.stderr).toBe(0)
    expectEnded(simulated, 1)
    // the simulator's answers were written back in StableToolBench's cache layout
    expect(readdirSync(cache, { recursive: true }).some((f) => String(f).endsWith(".json"))).toBe(true)
  }, 600_000)
})
