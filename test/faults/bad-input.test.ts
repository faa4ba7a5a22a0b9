// Bad input gets a message that says what to do and the documented exit code (src/cli/exit-codes.ts), never a stack trace.
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { MINI_DATA } from "../data.ts"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const data = MINI_DATA.path
const scratch = mkdtempSync(join(tmpdir(), "smurfs-bad-input-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const smurfs = (...args: string[]) =>
  promisify(execFile)(process.execPath, ["bin/smurfs.js", ...args], {
    cwd: repo,
    env: { ...process.env, NO_COLOR: "1", SMURFS_MODEL: "" }
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr })
  )

/** A data directory whose query file is not JSON. */
const malformedData = () => {
  const dir = join(scratch, "malformed")
  mkdirSync(join(dir, "queries"), { recursive: true })
  writeFileSync(join(dir, "queries", "G1_instruction.json"), '[{"query": "cut here')
  return dir
}

/** A run directory written by a newer smurfs. */
const newerRun = (name: string) => {
  const dir = join(scratch, `newer-${name}`)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "run.json"), JSON.stringify({ formatVersion: 99, packageVersion: "9.0.0" }))
  return dir
}

const demo = ["--model", "scripted:examples/demo-script.json"]
const bench = (...args: string[]) => ["bench", "--group", "G1_instruction", "--limit", "1", "--model", "sim", ...args]

const cases: ReadonlyArray<[string, () => string[], number, ReadonlyArray<RegExp>]> = [
  // a bare name (foo:bar, qwen2.5) is an Ollama model (issue 12); a misspelt provider or a script without scripted: is bad input
  [
    "run: unknown model provider",
    () => ["run", "hi", "--model", "olama:qwen2.5"],
    ExitCode.BadInput,
    [/Invalid model spec "olama:qwen2.5"/, /Use ollama:<model>, openai:<model>/]
  ],
  [
    "run: script file without its provider",
    () => ["run", "hi", "--model", "examples/demo-script.json"],
    ExitCode.BadInput,
    [/did you mean "scripted:examples\/demo-script.json"/]
  ],
  [
    "bench: unknown model spec",
    () => bench("--data", data, "--out", join(scratch, "o1"), "--model", "opnai:x"),
    ExitCode.BadInput,
    [/Invalid model spec "opnai:x"/]
  ],
  [
    "run: missing script file",
    () => ["run", "hi", "--model", "scripted:/nope/script.json"],
    ExitCode.BadInput,
    [/cannot read the script file/]
  ],
  [
    "bench: missing data directory",
    () => bench("--data", join(scratch, "nope"), "--out", join(scratch, "o2")),
    ExitCode.BadInput,
    [/does not exist/, /Pass --data <dir>/]
  ],
  [
    "bench: malformed query file",
    () => bench("--data", malformedData(), "--out", join(scratch, "o3")),
    ExitCode.BadInput,
    [/G1_instruction\.json/, /must be valid JSON/]
  ],
  [
    "run: tool module that throws while loading",
    () => ["run", "hi", ...demo, "--tools", "src/tools/fixtures/throwing-module.ts"],
    ExitCode.BadInput,
    [/Cannot load tools from/, /threw while loading/]
  ],
  [
    "run: tool module without tools",
    () => ["run", "hi", ...demo, "--tools", "src/tools/fixtures/empty-module.ts"],
    ExitCode.BadInput,
    [/exports no tools/, /export default a ToolLibrary/]
  ],
  [
    "run: invalid --tools path",
    () => ["run", "hi", ...demo, "--tools", "/nope/tools.ts"],
    ExitCode.BadInput,
    [/does not exist/, /use "demo", a \.ts\/\.js module/]
  ],
  [
    "bench: run dir from a newer version",
    () => bench("--data", data, "--out", newerRun("resume"), "--resume"),
    ExitCode.BadInput,
    [/newer smurfs/, /Upgrade smurfs/]
  ],
  [
    "eval: run dir from a newer version",
    () => ["eval", "--run", newerRun("eval"), "--judge", "sim"],
    ExitCode.BadInput,
    [/newer smurfs/, /Upgrade smurfs/]
  ],
  [
    "compare: run dir from a newer version",
    () => ["compare", newerRun("compare")],
    ExitCode.BadInput,
    [/newer smurfs/, /Upgrade smurfs/]
  ],
  [
    "bench: non-empty run dir without --resume",
    () => bench("--data", data, "--out", newerRun("fresh")),
    ExitCode.BadInput,
    [/not empty/, /--resume/]
  ],
  [
    "bench: bad flag value",
    () => bench("--data", data, "--out", join(scratch, "o4"), "--concurrency", "zero"),
    ExitCode.Usage,
    [/--concurrency needs a positive whole number/]
  ],
  ["unknown command", () => ["frobnicate"], ExitCode.Usage, [/unknown command "frobnicate"/]]
]

describe.concurrent("exit codes", () => {
  it.each(["run", "bench"])(
    "smurfs %s --help documents them",
    async (command) => {
      const r = await smurfs(command, "--help")
      expect(r.code).toBe(ExitCode.Ok)
      for (const code of [ExitCode.Usage, ExitCode.BadInput, ExitCode.ModelUnavailable, ExitCode.Interrupted])
        expect(r.stdout).toMatch(new RegExp(`\\b${code} [a-z]`))
    },
    300_000
  )
})

describe.concurrent("bad input", () => {
  it.each(cases)(
    "%s",
    async (_label, argv, code, messages) => {
      const r = await smurfs(...argv())
      expect(r.code, r.stderr).toBe(code)
      for (const m of messages) expect(r.stderr).toMatch(m)
      // a message for a person, not a crash
      expect(r.stderr).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/)
      expect(r.stderr.length).toBeLessThan(4000)
    },
    300_000
  )
})
