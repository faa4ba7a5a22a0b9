// kill -9 of a `smurfs bench` run at seeded random points, each followed by --resume: nothing lost, nothing twice, no torn file.
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { rngFor } from "../../bench/eval/rng.ts"
import { TaskRecord } from "../../bench/run-format.ts"
import { MINI_DATA } from "../data.ts"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const data = MINI_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-kill-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Every task of the fixture (data/sample: all six groups). */
const TASKS = 16
const KILLS = 6
const SEED = 42
/** The simulated model with a little latency, so that the run is long enough to be cut in the middle. */
const args = (out: string) => [
  "bin/smurfs.js",
  "bench",
  "--data",
  data,
  "--env",
  "replay,offline",
  "--model",
  "sim:latency=12ms,seed=3",
  "--concurrency",
  "4",
  "--out",
  out
]

const walk = (dir: string): Array<string> =>
  existsSync(dir)
    ? readdirSync(dir).flatMap((name) =>
        statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]
      )
    : []

const recordsDir = (out: string) => join(out, "tasks", "smurfs")
/** The run's records, as <group>/<file>, over every group. */
const recordFiles = (out: string) =>
  walk(recordsDir(out))
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(recordsDir(out).length + 1))

interface Spawned {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>
  readonly kill: () => void
  done: boolean
}

const start = (argv: ReadonlyArray<string>): Spawned => {
  const child = spawn(process.execPath, argv, {
    cwd: repo,
    env: { ...process.env, NO_COLOR: "1", SMURFS_MODEL: "" },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
  const spawned: Spawned = {
    done: false,
    kill: () => void child.kill("SIGKILL"),
    exited: new Promise((resolve) =>
      child.on("exit", (code, signal) => ((spawned.done = true), resolve({ code, signal, stderr })))
    )
  }
  return spawned
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Every file that must be valid JSON (records, run.json, converted files) parses, and every record is a complete TaskRecord. */
const checkNoTornFile = (out: string) => {
  for (const file of walk(out).filter((f) => f.endsWith(".json"))) {
    const text = readFileSync(file, "utf8")
    expect(() => JSON.parse(text), `${file} is torn`).not.toThrow()
    if (file.startsWith(recordsDir(out)))
      expect(TaskRecord.safeParse(JSON.parse(text)).success, `${file} is not a complete record`).toBe(true)
  }
}

const resultsOf = (out: string) =>
  Object.fromEntries(
    recordFiles(out)
      .sort()
      .map((f) => {
        const r = TaskRecord.parse(JSON.parse(readFileSync(join(recordsDir(out), f), "utf8")))
        return [
          `${r.group}/${r.taskId}`,
          { file: f, finishType: r.finishType, finalAnswer: r.finalAnswer, toolCalls: r.totals.toolCalls }
        ]
      })
  )

describe("kill -9 and --resume", () => {
  it(`${KILLS} kills at seeded points, each resumed, give the same results as an uninterrupted run`, async () => {
    const reference = join(scratch, "reference")
    const whole = await start(args(reference)).exited
    expect(whole.code, whole.stderr).toBe(0)
    expect(recordFiles(reference)).toHaveLength(TASKS)

    const out = join(scratch, "killed")
    const rng = rngFor(SEED, "kill-points")
    const points: Array<{ how: string; recordsBefore: number; recordsAfter: number; exit: string }> = []
    for (let k = 0; k < KILLS; k++) {
      const before = recordFiles(out).length
      const child = start(k === 0 ? args(out) : [...args(out), "--resume"])
      // three kinds of point, in turn: while starting up, at a random time once the run writes records, once n new records exist
      const kind = k % 3
      const wait =
        kind === 0 ? Math.floor(rng() * 1500) : kind === 1 ? Math.floor(rng() * 300) : 1 + Math.floor(rng() * 4)
      let started = Date.now()
      if (kind === 1) {
        while (!child.done && recordFiles(out).length === before) await sleep(2)
        started = Date.now()
      }
      while (!child.done && (kind === 2 ? recordFiles(out).length < before + wait : Date.now() - started < wait))
        await sleep(2)
      const how =
        kind === 0
          ? `${wait} ms after start`
          : kind === 1
            ? `${wait} ms after its first record`
            : `after ${wait} new records`
      child.kill()
      const exit = await child.exited
      points.push({
        how,
        recordsBefore: before,
        recordsAfter: recordFiles(out).length,
        exit: exit.signal ?? `code ${exit.code}`
      })
      checkNoTornFile(out)
    }
    const final = await start([...args(out), "--resume"]).exited
    console.log(
      `kill points:\n${points.map((p, i) => `  ${i + 1}. ${p.how}: records ${p.recordsBefore} -> ${p.recordsAfter} (${p.exit})`).join("\n")}`
    )
    expect(final.code, final.stderr).toBe(0)
    expect(points.filter((p) => p.exit === "SIGKILL").length).toBeGreaterThanOrEqual(5)
    expect(points.some((p) => p.recordsAfter > p.recordsBefore && p.recordsAfter < TASKS)).toBe(true)

    checkNoTornFile(out)
    // no temp file of an interrupted write is left behind
    expect(walk(out).filter((f) => f.includes(".tmp-"))).toEqual([])
    // same task ids, each once, with the same results
    const got = resultsOf(out)
    const want = resultsOf(reference)
    expect(Object.keys(got)).toHaveLength(TASKS)
    expect(got).toEqual(want)
    const converted = readdirSync(join(out, "converted", "smurfs")).flatMap((file) =>
      Object.keys(
        JSON.parse(readFileSync(join(out, "converted", "smurfs", file), "utf8")) as Record<string, unknown>
      ).map((id) => `${file.replace(/\.json$/, "")}/${id}`)
    )
    expect(converted.sort()).toEqual(Object.keys(want).sort())
  }, 300_000)
})
