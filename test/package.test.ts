// The npm package as a user gets it: `npm pack`, install the tarball into a fresh project offline
// (the lock file's integrity hashes find every dependency in the npm cache), import it, run the CLI,
// type-check and run the README's examples against a fake Ollama on loopback.
import { execFile } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { consumerLock, npmBin, packAndInstall, repoRoot } from "../instruments/footprint/install.ts"
import { ExitCode } from "../src/cli/exit-codes.ts"
import { defaultReply } from "./fake-servers/core.ts"
import { startFakeOllama } from "./fake-servers/ollama.ts"

const run = promisify(execFile)
const root = repoRoot
const npm = npmBin
/** Packages only benchmarks or optional features use, and the clients loaded with their first call: `import "smurfs"` must not load them. */
const NOT_ON_IMPORT = [
  "gpt-tokenizer",
  "bullmq",
  "ioredis",
  "@modelcontextprotocol",
  "cli-progress",
  "playwright-core",
  "minisearch",
  "@effect/platform-node",
  "openai",
  "ollama",
  "yaml",
  "jsonrepair"
]

let dir = ""
let tarball = ""
let fake: Awaited<ReturnType<typeof startFakeOllama>> | undefined
const inProject = (file: string, args: string[], env: Record<string, string> = {}) =>
  run(file, args, { cwd: dir, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", ...env }, timeout: 240_000 })
const smurfsCli = (...args: string[]) =>
  inProject(process.execPath, [join(dir, "node_modules/smurfs/bin/smurfs.js"), ...args])

/**
 * Answers each Smurfs agent by the JSON Schema it asked for, as a model following `format` would (doctor's probe gets a
 * sample): the default loop's fused executor (thought, tool and arguments in one object; the tool's short response is
 * the step's answer, so the verifier reads it) and the paper's three requests alike.
 */
const agentReply = (schema: any) => {
  const keys = Object.keys(schema?.properties ?? {})
  if (keys.includes("arguments"))
    return JSON.stringify({
      thought: "word_count counts the words.",
      tool: "word_count",
      arguments: { text: "the quick brown fox" }
    })
  if (keys.includes("subtasks")) return JSON.stringify({ subtasks: ["Count the words of 'the quick brown fox'"] })
  if (keys.includes("thought")) return JSON.stringify({ thought: "word_count counts the words." })
  if (keys.includes("tool")) return JSON.stringify({ tool: "word_count" })
  if (keys.includes("text")) return JSON.stringify({ text: "the quick brown fox" })
  if (keys.includes("status")) return JSON.stringify({ status: "solved", reason: "the words were counted" })
  if (keys.includes("answer")) return JSON.stringify({ answer: "'the quick brown fox' has 4 words." })
  return defaultReply(schema, undefined)
}

beforeAll(async () => {
  ;({ dir, tarball } = await packAndInstall())
  for (const example of ["my-tools.ts", "solve.ts"]) copyFileSync(join(root, "examples", example), join(dir, example))
  fake = await startFakeOllama((body: any) => agentReply(body.format))
}, 240_000)

afterAll(async () => {
  await fake?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
}, 120_000)

describe("the packed npm package, installed into a fresh project", () => {
  it("ships the build, prompts, examples and license, and no tests or sources", async () => {
    const { stdout } = await run("tar", ["tzf", tarball], { encoding: "utf8" })
    const files = stdout.split("\n").filter(Boolean)
    for (const f of [
      "package/LICENSE",
      "package/dist/src/index.js",
      "package/dist/src/index.d.ts",
      "package/dist/src/cli/main.js",
      "package/prompts/planner.md",
      "package/examples/demo-script.json",
      "package/bin/smurfs.js",
      // the sample `--data sample` names, with StableToolBench's licence and notice
      "package/data/sample/NOTICE",
      "package/data/sample/LICENSE-StableToolBench",
      "package/data/sample/toolbench-sample.json"
    ])
      expect(files).toContain(f)
    expect(files.filter((f) => /\.test\.|\/test\/|^package\/src\//.test(f))).toEqual([])
    expect(readFileSync(join(dir, "node_modules/smurfs/LICENSE"), "utf8")).toContain("Apache License")
  })

  it("imports as ESM with its public API, without loading bench-only or optional packages", async () => {
    const probe = [
      'import { registerHooks } from "node:module"',
      "const loaded = new Set()",
      "registerHooks({ resolve: (s, c, next) => { const r = next(s, c); loaded.add(r.url); return r } })",
      'const api = await import("smurfs")',
      "console.log(JSON.stringify({ exports: Object.keys(api), loaded: [...loaded] }))"
    ].join("\n")
    writeFileSync(join(dir, "probe.mjs"), probe)
    const { stdout } = await inProject(process.execPath, ["probe.mjs"])
    const { exports, loaded } = JSON.parse(stdout) as { exports: string[]; loaded: string[] }
    for (const name of [
      "defineTool",
      "smurfs",
      "react",
      "dfsdt",
      "solve",
      "modelLayer",
      "LanguageModel",
      "generateObject"
    ])
      expect(exports).toContain(name)
    // a bundle (scripts/build.ts): the entry, the chunk of what it imports, the one it shares with the CLI and
    // rolldown's helpers; not one file per module
    const ours = loaded.filter((u) => u.includes("/node_modules/smurfs/dist/"))
    expect(ours.length).toBeGreaterThan(0)
    expect(ours.length).toBeLessThanOrEqual(4)
    for (const pkg of NOT_ON_IMPORT) expect(loaded.filter((u) => u.includes(`/node_modules/${pkg}/`))).toEqual([])
    // Node's HTTP client (whose ES import loads Node's fetch as well) and zlib load with the first model call
    expect(loaded.filter((u) => /^node:(http|https|zlib)$/.test(u))).toEqual([])
  })

  it("answers `smurfs --help` from the CLI's own chunk (no zod, effect or library code), `run --help` without the model clients", async () => {
    writeFileSync(
      join(dir, "hook.mjs"),
      [
        'import { registerHooks } from "node:module"',
        "const loaded = new Set()",
        "registerHooks({ resolve: (s, c, next) => { const r = next(s, c); loaded.add(r.url); return r } })",
        'process.on("exit", () => process.stderr.write("loaded " + JSON.stringify([...loaded]) + "\\n"))'
      ].join("\n")
    )
    const loadedBy = async (...args: string[]) => {
      const { stdout, stderr } = await inProject(process.execPath, [
        "--import",
        "./hook.mjs",
        join(dir, "node_modules/smurfs/bin/smurfs.js"),
        ...args
      ])
      return { stdout, loaded: JSON.parse(/^loaded (.*)$/m.exec(stderr)![1]!) as string[] }
    }
    const [help, runHelp] = await Promise.all([loadedBy("--help"), loadedBy("run", "--help")])
    expect(help.stdout).toContain("  run ")
    expect(help.loaded.filter((u) => /\/node_modules\/(zod|effect)\//.test(u))).toEqual([])
    expect(help.loaded.filter((u) => u.includes("/node_modules/smurfs/dist/")).length).toBeLessThanOrEqual(3)
    // a command loads the model clients when it calls a model (the embedder's too), not to print its help
    expect(runHelp.stdout).toContain("smurfs run")
    expect(runHelp.loaded.filter((u) => /\/node_modules\/(openai|ollama)\//.test(u))).toEqual([])
  })

  it("loads with require() too (Node 22's require of an ES module: no top-level await in the entry)", async () => {
    writeFileSync(
      join(dir, "probe.cjs"),
      'const api = require("smurfs"); console.log(JSON.stringify(Object.keys(api)))'
    )
    const { stdout } = await inProject(process.execPath, ["probe.cjs"])
    const exports = JSON.parse(stdout) as string[]
    for (const name of [
      "defineTool",
      "smurfs",
      "react",
      "dfsdt",
      "solve",
      "modelLayer",
      "LanguageModel",
      "generateObject"
    ])
      expect(exports).toContain(name)
  })

  it("type-checks the README's examples against the shipped declarations", async () => {
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          allowImportingTsExtensions: true,
          types: [],
          lib: ["ES2023", "DOM"]
        },
        files: ["my-tools.ts", "solve.ts"]
      })
    )
    const tsc = join(root, "node_modules/typescript/bin/tsc")
    const result = await inProject(process.execPath, [tsc, "-p", "."]).catch(
      (e: { stdout: string; stderr: string }) => e
    )
    expect(`${result.stdout}${result.stderr}`).toBe("")
  })

  it("runs `npx smurfs` commands: --help, run with the shipped demo script, tools, doctor and each command's help", async () => {
    const [help, solved, tools, doctor, ...helps] = await Promise.all([
      inProject(npm, ["exec", "--offline", "--", "smurfs", "--help"]),
      smurfsCli(
        "run",
        "What is 12% of the height of Mount Everest in feet?",
        "--model",
        "scripted:node_modules/smurfs/examples/demo-script.json",
        "--tools",
        "demo"
      ),
      smurfsCli("tools", "--tools", "./my-tools.ts", "--json"),
      inProject(
        process.execPath,
        [join(dir, "node_modules/smurfs/bin/smurfs.js"), "doctor", "--model", "ollama:qwen2.5:7b"],
        { OLLAMA_HOST: fake!.url }
      ),
      ...["bench", "eval", "compare"].map((command) => smurfsCli(command, "--help"))
    ])
    for (const command of ["run", "bench", "eval", "compare", "tools", "doctor"])
      expect(help!.stdout).toContain(`  ${command} `)
    expect(solved!.stdout).toContain("3483.86 feet")
    expect(tools!.stdout).toContain("word_count")
    expect(doctor!.stdout).toContain("All good")
    for (const [i, command] of ["bench", "eval", "compare"].entries())
      expect(helps[i]!.stdout).toContain(`smurfs ${command}`)
  })

  it("benchmarks the shipped sample right after install: `smurfs bench --data sample`", async () => {
    const { stdout } = await smurfsCli(
      "bench",
      "--data",
      "sample",
      "--model",
      "scripted:node_modules/smurfs/examples/bench-script.json",
      "--out",
      "runs/sample",
      "--json"
    )
    const summary = JSON.parse(stdout) as { total: number; answered: number; errors: number }
    // the sample's 16 tasks, one per query of each group's file, all answered from its recorded responses
    expect(summary).toMatchObject({ total: 16, answered: 16, errors: 0 })
    const config = JSON.parse(readFileSync(join(dir, "runs/sample/run.json"), "utf8")) as { data: string }
    // the shipped bundle, written out in the data layout in the temp folder
    expect(config.data).toMatch(/smurfs-sample-[0-9a-f]{12}$/)
  })

  it("runs the README's example in a project `npm init -y` made (type commonjs): after `npm pkg set type=module`, or as solve.mts", async () => {
    const fresh = mkdtempSync(join(tmpdir(), "smurfs-npm-init-"))
    try {
      const inFresh = (file: string, args: string[], env: Record<string, string> = {}) =>
        run(file, args, {
          cwd: fresh,
          encoding: "utf8",
          env: { ...process.env, NO_COLOR: "1", ...env },
          timeout: 240_000
        })
      await inFresh(npm, ["init", "-y"])
      // the tarball installed as `npm install zod <tarball>` would (offline: the lock names every package's tarball)
      const { manifest, lock } = consumerLock(tarball)
      for (const [name, spec] of Object.entries(manifest.dependencies))
        await inFresh(npm, ["pkg", "set", `dependencies.${name}=${spec}`])
      writeFileSync(join(fresh, "package-lock.json"), JSON.stringify({ ...lock, name: "fresh" }, null, 2))
      await inFresh(npm, ["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"])
      copyFileSync(join(root, "examples", "solve.ts"), join(fresh, "solve.ts"))
      copyFileSync(join(root, "examples", "solve.ts"), join(fresh, "solve.mts"))
      const solve = (file: string) =>
        inFresh(process.execPath, [file], { OLLAMA_HOST: fake!.url }).catch(
          (e: { code: number; stdout: string; stderr: string }) => e
        )
      const readme = readFileSync(join(root, "README.md"), "utf8")
      const type = () => (JSON.parse(readFileSync(join(fresh, "package.json"), "utf8")) as { type?: string }).type
      if (type() === "commonjs") expect((await solve("solve.ts")).stderr).toContain("SyntaxError")
      // as the README says: solve.mts runs in any project; `npm pkg set type=module` makes solve.ts run
      expect(readme).toContain("save the file as `solve.mts`")
      expect((await solve("solve.mts")).stdout).toContain("give_answer 'the quick brown fox' has 4 words.")
      expect(readme).toContain("`npm pkg set type=module`")
      await inFresh(npm, ["pkg", "set", "type=module"])
      expect((await solve("solve.ts")).stdout).toContain("give_answer 'the quick brown fox' has 4 words.")
    } finally {
      rmSync(fresh, { recursive: true, force: true })
    }
  })

  it("installs without the optional peers, and a feature that needs one names its install command", async () => {
    for (const pkg of ["bullmq", "ioredis", "minisearch", "@modelcontextprotocol/sdk"])
      expect(existsSync(join(dir, "node_modules", pkg))).toBe(false)
    const result = await smurfsCli("worker", "--queue", "redis://127.0.0.1:9/0").catch(
      (e: { code: number; stderr: string }) => e
    )
    expect((result as { code?: number }).code).toBe(ExitCode.BadInput)
    expect(result.stderr).toContain("npm install bullmq ioredis")
    // the embedded engine is an optional peer too, named with its pinned version
    expect(existsSync(join(dir, "node_modules", "node-llama-cpp"))).toBe(false)
    const llama = await smurfsCli("run", "hi", "--model", "llama:model.gguf", "--tools", "demo").catch(
      (e: { code: number; stderr: string }) => e
    )
    expect((llama as { code?: number }).code).toBe(ExitCode.BadInput)
    expect(llama.stderr).toContain("npm install node-llama-cpp@3.21.1")
  })

  it("runs the README's Promise API example (examples/solve.ts) against a fake Ollama", async () => {
    const before = fake!.chatRequests().length
    const { stdout, stderr } = await inProject(process.execPath, ["solve.ts"], { OLLAMA_HOST: fake!.url })
    expect(stdout).toContain("give_answer 'the quick brown fox' has 4 words.")
    expect(stderr).toContain("dev.smurfs.tool_call")
    // the default loop: one request for the thought, the tool and its arguments, none choosing the tool alone
    const asked = fake!
      .chatRequests()
      .slice(before)
      .map((body) => Object.keys(body.format?.properties ?? {}).join(","))
    expect(asked).toContain("thought,tool,arguments")
    expect(asked).not.toContain("tool")
    expect(readFileSync(join(root, "README.md"), "utf8")).toContain(
      readFileSync(join(root, "examples/solve.ts"), "utf8").trim()
    )
  })
})
