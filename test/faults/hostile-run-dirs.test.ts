// A run directory is data too (issue 24): symbolic links below it never carry a write outside, FIFOs and
// devices never hang or flood a command, label files cannot size compare's tables, ids such as `__proto__`
// survive every step, an HTML report is never left torn, and names that needed encoding are found again.
import { execFileSync, spawn } from "node:child_process"
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Cause, Effect, Exit } from "effect"
import { afterAll, afterEach, describe, expect, it, vi } from "vitest"
import type { BenchQuery } from "../../bench/datasets.ts"
import { readConvertedFile } from "../../bench/eval/converted.ts"
import { passLabelsPath, slug, winVerdictsPath } from "../../bench/eval/labels.ts"
import { writeFakeRun } from "../../bench/eval/test-fixtures.ts"
import { readRecords } from "../../bench/run-dir.ts"
import { convertedPath, RUN_FORMAT_VERSION, taskRecordPath } from "../../bench/run-format.ts"
import { runBench } from "../../bench/runner.ts"
import { run as bench } from "../../src/cli/commands/bench.ts"
import { run as compare } from "../../src/cli/commands/compare.ts"
import { run as evaluate } from "../../src/cli/commands/eval.ts"
import { run as show } from "../../src/cli/commands/show.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { scriptedLayer } from "../../src/llm/scripted.ts"
import { safeName } from "../../src/trace/file-names.ts"
import { answering } from "../answering-method.ts"
import { captureConsole, runCapturingStderr } from "../capture-console.ts"
import { bin, repo } from "../cli/spawn.ts"
import { MINI_DATA } from "../data.ts"
import { serveFind } from "./simulated-find.ts"

vi.setConfig({ testTimeout: 120_000 })

const SCRIPT = fileURLToPath(new URL("../../examples/bench-script.json", import.meta.url))
const DATA = MINI_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-hostile-run-dirs-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
afterEach(() => vi.restoreAllMocks())

/** Every file under `dir`, relative to it. */
const tree = (dir: string): Array<string> =>
  existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: "utf8" }).sort() : []

const judgeFile = (() => {
  const file = join(scratch, "judge.json")
  writeFileSync(
    file,
    JSON.stringify({ "judge.check_answer_status": [{ answer_status: "Solved", reason: "fine" }], $cycle: true })
  )
  return file
})()
const JUDGE = `scripted:${judgeFile}`

const runQueries = (runDir: string, queries: ReadonlyArray<BenchQuery>, resume: boolean) =>
  Effect.runPromiseExit(
    runBench({
      runDir,
      config: {
        formatVersion: RUN_FORMAT_VERSION,
        packageVersion: "test",
        createdAt: "2026-01-01T00:00:00.000Z",
        data: "memory",
        groups: [...new Set(queries.map((q) => q.group))],
        methods: ["count"],
        model: "m",
        envs: [],
        toolset: "all",
        concurrency: 1,
        options: {}
      },
      queries,
      methods: [{ name: "count", method: answering }],
      taskOf: (q) => ({ id: q.id, query: q.query, tools: { name: q.id, tools: [] } }),
      concurrency: 1,
      resume,
      modelSpec: "m"
    }).pipe(Effect.provide(scriptedLayer({ "*": [] } as never)))
  )

const query = (id: string) => ({
  query: `query ${id}`,
  query_id: id,
  api_list: [
    {
      category_name: "Data",
      tool_name: "Search Tool",
      api_name: "search",
      api_description: "search",
      required_parameters: [],
      optional_parameters: [],
      method: "GET"
    }
  ]
})

const dataset = (name: string, ids: ReadonlyArray<string>, group = "G1_instruction") => {
  const dir = join(scratch, name, "data")
  mkdirSync(join(dir, "queries"), { recursive: true })
  writeFileSync(join(dir, "queries", `${group}.json`), JSON.stringify(ids.map(query)))
  return dir
}

/** `smurfs <args>` as a child process; killed (and reported as hung) when it has not ended after `limitMs`. */
const spawned = (args: ReadonlyArray<string>, options: { limitMs?: number; shell?: string } = {}) => {
  const env: Record<string, string | undefined> = {
    ...process.env,
    NO_COLOR: "1",
    SMURFS_MODEL: undefined,
    SMURFS_DATA: undefined
  }
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  const child = options.shell
    ? spawn("/bin/sh", ["-c", `${options.shell}; exec "$0" "$@"`, process.execPath, bin, ...args], {
        cwd: repo,
        env,
        stdio: ["ignore", "pipe", "pipe"]
      })
    : spawn(process.execPath, [bin, ...args], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = "",
    stderr = ""
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
  const started = Date.now()
  const ended = new Promise<{
    code: number | null
    signal: NodeJS.Signals | null
    hung: boolean
    ms: number
    stdout: string
    stderr: string
  }>((resolve) => {
    let hung = false
    const timer = setTimeout(() => ((hung = true), child.kill("SIGKILL")), options.limitMs ?? 30_000)
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, hung, ms: Date.now() - started, stdout, stderr })
    })
  })
  return { child, ended, stderrSoFar: () => stderr }
}

describe("symbolic links inside a run directory (point 1)", () => {
  it("bench --resume refuses to write through a symlinked tasks/<method>/<group> and names the link; the outside stays untouched", async () => {
    const out = join(scratch, "symlink-tasks", "run")
    const outside = join(scratch, "symlink-tasks", "outside")
    mkdirSync(outside, { recursive: true })
    writeFileSync(join(outside, "precious.json"), "keep me")
    const queries: Array<BenchQuery> = ["1", "2"].map((id) => ({
      group: "G",
      id,
      query: `q${id}`,
      apiList: [],
      relevant: []
    }))
    expect((await runQueries(out, queries, false))._tag).toBe("Success")
    const link = dirname(taskRecordPath(out, "count", "G", "1"))
    rmSync(link, { recursive: true })
    symlinkSync(outside, link)

    const exit = await runQueries(out, queries, true)
    expect(exit._tag).toBe("Failure")
    const message = String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : "")
    expect(message).toContain(link)
    expect(message).toContain("symbolic link")
    expect(tree(outside)).toEqual(["precious.json"])
    expect(readFileSync(join(outside, "precious.json"), "utf8")).toBe("keep me")
  })

  it("eval refuses to write a label through a symlinked eval/<judge>/pass/<method>/<group>: another project's package.json stays as it was", async () => {
    const dir = await writeFakeRun([{ taskId: "package" }], mkdtempSync(join(scratch, "symlink-eval-")))
    const project = join(scratch, "other-project")
    mkdirSync(project, { recursive: true })
    writeFileSync(join(project, "package.json"), '{"name": "victim"}\n')
    const link = dirname(passLabelsPath(dir, JUDGE, "smurfs", "G1_instruction", "package"))
    mkdirSync(dirname(link), { recursive: true })
    symlinkSync(project, link)

    const { code, stderr } = await runCapturingStderr(evaluate, ["--run", dir, "--judge", JUDGE, "--k", "1"])
    expect(code).not.toBe(ExitCode.Ok)
    expect(stderr).toContain(link)
    expect(stderr).toContain("symbolic link")
    expect(readFileSync(join(project, "package.json"), "utf8")).toBe('{"name": "victim"}\n')
    expect(tree(project)).toEqual(["package.json"])
  })
  it("the simulated environment's store inside a run directory is not written through a linked folder", async () => {
    const out = join(scratch, "symlink-store", "run")
    const outside = join(scratch, "symlink-store", "outside")
    mkdirSync(out, { recursive: true })
    mkdirSync(outside, { recursive: true })
    symlinkSync(outside, join(out, "simulated"))
    // the call is answered; only its copy for the next run is not stored (through the link)
    expect(await serveFind({ storeDir: join(out, "simulated"), storeRoot: out })).toEqual({
      ok: true,
      content: '{"name":"found"}',
      structured: { name: "found" },
      served: { by: "simulated", simulator: "scripted:scripted · smurfs" }
    })
    expect(tree(outside)).toEqual([])
  })
})

describe("ids that name Object.prototype's members (point 3)", () => {
  const IDS = ["__proto__", "constructor", "prototype", "toString"]

  it("survive bench, convert, eval and compare (runs, StableToolBench folders and ToolEval results)", async () => {
    const data = dataset("proto", IDS)
    const out = join(scratch, "proto", "run")
    const ran = await runCapturingStderr(bench, [
      "--data",
      data,
      "--group",
      "G1_instruction",
      "--method",
      "react",
      "--model",
      `scripted:${SCRIPT}`,
      "--out",
      out
    ])
    expect(ran.code, ran.stderr).toBe(ExitCode.Ok)
    expect(
      readRecords(out, "react", "G1_instruction")
        .map((r) => r.taskId)
        .sort()
    ).toEqual([...IDS].sort())
    // the converted file keeps every id as a key, read back through its schema
    const converted = convertedPath(out, "react", "G1_instruction")
    expect(Object.keys(JSON.parse(readFileSync(converted, "utf8")) as object).sort()).toEqual([...IDS].sort())
    expect(Object.keys(readConvertedFile(converted)).sort()).toEqual([...IDS].sort())

    const judged = await runCapturingStderr(evaluate, ["--run", out, "--judge", JUDGE, "--k", "1"])
    expect(judged.code, judged.stderr).toBe(ExitCode.Ok)
    for (const id of IDS) expect(existsSync(passLabelsPath(out, JUDGE, "react", "G1_instruction", id)), id).toBe(true)

    // a StableToolBench folder holding that converted file, and ToolEval's labels of the four ids
    const stb = join(scratch, "proto", "stb")
    mkdirSync(join(stb, "model_predictions_converted", "react"), { recursive: true })
    copyFileSync(converted, join(stb, "model_predictions_converted", "react", "G1_instruction.json"))
    mkdirSync(join(stb, "pass_rate_results"), { recursive: true })
    const labels = `{${IDS.map((id) => `${JSON.stringify(id)}: {"is_solved": {"0": "AnswerStatus.Solved"}}`).join(", ")}}`
    writeFileSync(join(stb, "pass_rate_results", "G1_instruction_react.json"), labels)

    const { out: printed } = captureConsole()
    expect(await compare([out, stb, "--json"])).toBe(ExitCode.Ok)
    const rows = (
      JSON.parse(printed.join("\n")) as {
        rows: Array<{
          source: string
          judge: string
          n: number
          judged: number
          total: number
          pass?: { mean: number }
        }>
      }
    ).rows
    const ours = rows.find((r) => r.source === "run" && r.judge !== "")!
    expect([ours.n, ours.judged, ours.total, ours.pass?.mean]).toEqual([4, 4, 4, 100])
    const toolEval = rows.find((r) => r.source === "stb" && r.judge === "ToolEval")!
    expect([toolEval.n, toolEval.judged, toolEval.pass?.mean]).toEqual([4, 4, 100])
  })
})

describe("hostile label files (point 4)", () => {
  const labelRun = async (key: string) => {
    const dir = await writeFakeRun([{ taskId: "1" }], mkdtempSync(join(scratch, "labels-")))
    const file = passLabelsPath(dir, JUDGE, "smurfs", "G1_instruction", "1")
    mkdirSync(dirname(file), { recursive: true })
    const run = { label: "Solved", reason: "r", stage: "answer" }
    writeFileSync(
      file,
      JSON.stringify({
        taskId: "1",
        method: "smurfs",
        group: "G1_instruction",
        judge: JUDGE,
        runs: { "0": run, [key]: run }
      })
    )
    return { dir, file }
  }

  it('a run\'s label file with run key "1e9" is refused by compare within seconds, naming the file and the key', async () => {
    const { dir, file } = await labelRun("1e9")
    // a child process: today's compare allocates until V8 aborts
    const { ended } = spawned(["compare", dir], { limitMs: 20_000 })
    const r = await ended
    expect(r.hung, "compare did not end").toBe(false)
    expect(r.code, r.stderr).toBe(ExitCode.BadInput)
    expect(r.stderr).toContain(file)
    expect(r.stderr).toContain('"1e9"')
  })

  it('ToolEval results with an is_solved key "Infinity" are refused naming the file and the key', async () => {
    const dir = join(scratch, "tooleval-infinity")
    mkdirSync(join(dir, "pass_rate_results"), { recursive: true })
    const file = join(dir, "pass_rate_results", "G1_instruction_react.json")
    writeFileSync(
      file,
      JSON.stringify({ "7": { is_solved: { "0": "AnswerStatus.Solved", Infinity: "AnswerStatus.Solved" } } })
    )
    const { code, stderr } = await runCapturingStderr(compare, [dir])
    expect(code).toBe(ExitCode.BadInput)
    expect(stderr).toContain(file)
    expect(stderr).toContain('"Infinity"')
    expect(stderr).not.toContain("Invalid array length")
  })

  it("a run key above the stated K (32 judge runs) is refused, and eval --k above it too", async () => {
    const { dir } = await labelRun("32")
    const { code, stderr } = await runCapturingStderr(compare, [dir])
    expect(code).toBe(ExitCode.BadInput)
    expect(stderr).toContain('"32" is not a whole number from 0 to 31')
    expect((await runCapturingStderr(evaluate, ["--run", dir, "--judge", JUDGE, "--k", "33"])).code).toBe(
      ExitCode.Usage
    )
  })
})

describe("FIFOs and devices in a run directory (point 6)", () => {
  /** A finished sim run of two tasks. */
  const simRun = async (name: string, extra: ReadonlyArray<string> = []) => {
    const out = join(scratch, name, "run")
    const args = [
      "bench",
      "--data",
      DATA,
      "--model",
      "sim",
      "--group",
      "G1_instruction",
      "--ids",
      "588,1073",
      ...extra,
      "--out",
      out
    ]
    const { ended } = spawned(args, { limitMs: 60_000 })
    const r = await ended
    expect(r.code, r.stderr).toBe(0)
    return { out, args, record: taskRecordPath(out, "smurfs", "G1_instruction", "588") }
  }

  it("a record that is a FIFO: compare, show and bench --resume finish within seconds; run.lock as a FIFO does not block either", async () => {
    const { out, args, record } = await simRun("fifo")
    unlinkSync(record)
    execFileSync("mkfifo", [record])
    execFileSync("mkfifo", [join(out, "run.lock")])

    const compared = await spawned(["compare", out], { limitMs: 20_000 }).ended
    expect(compared.hung, "compare hung on the FIFO").toBe(false)
    expect(compared.code, compared.stderr).toBe(0)
    expect(compared.ms).toBeLessThan(15_000)

    const shown = await spawned(["show", out, "588"], { limitMs: 20_000 }).ended
    expect(shown.hung, "show hung on the FIFO").toBe(false)
    expect(shown.code).toBe(ExitCode.BadInput)
    expect(shown.stderr).toContain("FIFO")

    const resumed = await spawned([...args, "--resume"], { limitMs: 60_000 }).ended
    expect(resumed.hung, "bench --resume hung on the FIFO").toBe(false)
    expect(resumed.code, resumed.stderr).toBe(0)
    // the task was redone: its record is a regular, complete file again
    expect(statSync(record).isFile()).toBe(true)
    expect(JSON.parse(readFileSync(record, "utf8")).taskId).toBe("588")
  })

  it("a record linked to /dev/zero is skipped by compare, which ends at once", async () => {
    const { out, record } = await simRun("dev-zero")
    unlinkSync(record)
    symlinkSync("/dev/zero", record)
    const r = await spawned(["compare", out, "--json"], { limitMs: 20_000 }).ended
    expect(r.hung, "compare read /dev/zero").toBe(false)
    expect(r.code, r.stderr).toBe(0)
  })

  it("Ctrl-C ends a bench --resume over a run with a FIFO record", async () => {
    const { out, record } = await simRun("fifo-sigint")
    unlinkSync(record)
    execFileSync("mkfifo", [record])
    // slow tasks, so that the run is still going when the signal comes
    const args = [
      "bench",
      "--data",
      DATA,
      "--model",
      "sim:latency=400ms",
      "--group",
      "G1_instruction",
      "--ids",
      "588,1073",
      "--out",
      out,
      "--resume",
      "--force"
    ]
    const { child, ended, stderrSoFar } = spawned(args, { limitMs: 45_000 })
    // Ctrl-C once the run has read its records ("2 tasks, 1 already done"), or after 20 s if it never gets there
    for (let waited = 0; waited < 20_000 && !stderrSoFar().includes("already done"); waited += 100)
      await new Promise((r) => setTimeout(r, 100))
    const signalled = Date.now()
    child.kill("SIGINT")
    const r = await ended
    expect(r.hung, `bench ignored SIGINT: ${r.stderr}`).toBe(false)
    expect(r.stderr).toContain("2 tasks, 1 already done")
    expect(Date.now() - signalled).toBeLessThan(15_000)
    expect(r.code, r.stderr).toBe(130)
  })
})

describe("reports on a disk that stops taking bytes (point 15)", () => {
  it("compare --html keeps the last good report whole when the new one cannot be written", async () => {
    const dir = await writeFakeRun([{ taskId: "1" }, { taskId: "2" }], mkdtempSync(join(scratch, "html-")))
    const report = join(scratch, "report.html")
    writeFileSync(report, "<p>the last good report</p>\n")
    // a file-size limit of 1 block: the HTML report (several KB) cannot be written whole
    const r = await spawned(["compare", dir, "--html", report], { limitMs: 30_000, shell: "ulimit -f 1" }).ended
    expect(r.code).not.toBe(0)
    expect(readFileSync(report, "utf8")).toBe("<p>the last good report</p>\n")
  })
})

describe("names that needed encoding (point 16)", () => {
  it("show finds a task whose id needed encoding, and DFSDT's backtrack line says what happened", async () => {
    const data = dataset("encoded", ["a/b", "x y"])
    const out = join(scratch, "encoded", "run")
    const ran = await runCapturingStderr(bench, [
      "--data",
      data,
      "--group",
      "G1_instruction",
      "--method",
      "dfsdt",
      "--model",
      `scripted:${SCRIPT}`,
      "--out",
      out
    ])
    expect(ran.code, ran.stderr).toBe(ExitCode.Ok)
    const { out: printed, err } = captureConsole()
    expect(await show([out, "a/b"]), err.join("\n")).toBe(ExitCode.Ok)
    const text = printed.join("\n")
    expect(text).toContain("Answer: Here is what I found for your request.")
    expect(text).toContain("backtrack")
    expect(text).not.toContain("undefined")
    expect(text).toMatch(/backtrack from depth \d+ \(give up\)/)
  })

  it("compare keeps the win rates of a group whose name needed encoding", async () => {
    const group = "G1/instruction v2"
    const dir = await writeFakeRun([{ taskId: "1", group }], mkdtempSync(join(scratch, "win-")))
    const file = winVerdictsPath(dir, JUDGE, "ref", "smurfs", group, "1")
    expect(file).toContain(safeName(group))
    mkdirSync(dirname(file), { recursive: true })
    const round = { winner: "candidate", order: ["candidate", "reference"], stage: "judge", reason: "better" }
    writeFileSync(
      file,
      JSON.stringify({
        taskId: "1",
        method: "smurfs",
        group,
        judge: JUDGE,
        reference: { source: "ref", method: "react" },
        rounds: { "0": round }
      })
    )
    const { out: printed } = captureConsole()
    expect(await compare([dir, "--json"])).toBe(ExitCode.Ok)
    const rows = (
      JSON.parse(printed.join("\n")) as {
        rows: Array<{ group: string; judge: string; win?: { rate: number; n: number } }>
      }
    ).rows
    expect(rows.find((r) => r.group === group && r.judge === slug(JUDGE))?.win).toMatchObject({ rate: 100, n: 1 })
  })
})
