// The options every command shares (issue 12 points 6 and 7): spawned `smurfs` processes for each behaviour, in-process runs for the per-command variations.
import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import { main } from "../../src/cli/main.ts"
import { ConfigError, choiceList, parseCommand } from "../../src/cli/options.ts"
import { captureConsole } from "../capture-console.ts"
import { MINI_DATA } from "../data.ts"
import { bin, demoQuery, demoScript, repo, smurfs } from "./spawn.ts"

const temp = () => mkdtempSync(join(tmpdir(), "smurfs-cli-"))
/** A loopback port nothing listens on, so an Ollama model fails fast as unreachable. */
const deadHost = "http://127.0.0.1:9"
// spawned processes start slowly on a busy machine; each test waits for a few in turn
vi.setConfig({ testTimeout: 300_000 })
afterEach(() => vi.restoreAllMocks())

describe("one way to do each thing", () => {
  it("an unknown flag gets a did-you-mean, one line and a hint, exit 2", async () => {
    const r = await smurfs(["bench", "--concurency", "4"])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split("\n")).toEqual([
      "smurfs bench: unknown option --concurency (did you mean --concurrency?)",
      "hint: `smurfs help bench` lists its options"
    ])
    for (const [command, typo, meant] of [
      ["run", "--modle", "--model"],
      ["eval", "--jduge", "--judge"],
      ["tools", "--jsno", "--json"],
      ["compare", "--htm", "--html"],
      ["doctor", "--timout", "--timeout"]
    ] as const) {
      const { err } = captureConsole()
      expect(await main([command, typo, "x"]), command).toBe(2)
      expect(err.join("\n")).toBe(
        `smurfs ${command}: unknown option ${typo} (did you mean ${meant}?)\nhint: \`smurfs help ${command}\` lists its options`
      )
      vi.restoreAllMocks()
    }
    const { err } = captureConsole()
    expect(await main(["bnech"])).toBe(2)
    expect(err.join("\n")).toContain('unknown command "bnech" (did you mean "bench"?)')
  })

  it("smurfs help <command> prints the command's help", async () => {
    const help = await smurfs(["help", "bench"])
    expect(help.code).toBe(0)
    const { out } = captureConsole()
    expect(await main(["bench", "--help"])).toBe(0)
    expect(help.stdout.trimEnd()).toBe(out.join("\n"))
    expect(help.stdout).toContain("usage: smurfs bench")
  })

  it("a bare Ollama model name is read as ollama:<name>, said once", async () => {
    const r = await smurfs(["doctor", "--model", "qwen2.5:7b", "--timeout", "2000"], { env: { OLLAMA_HOST: deadHost } })
    expect(r.code).toBe(4)
    expect(r.stderr.match(/is read as ollama:qwen2\.5:7b/g)).toHaveLength(1)
    expect(r.stdout).toContain("smurfs doctor: ollama:qwen2.5:7b")
  })

  it("comma lists work on eval's --method and --group as on bench's", async () => {
    const r = await smurfs([
      "eval",
      "--run",
      join(repo, "no-such-run"),
      "--judge",
      "sim",
      "--method",
      "smurfs,reakt",
      "--group",
      "G1_instruction,G2_category"
    ])
    // the options parse; the missing run directory is the (bad input) error
    expect(r.code).toBe(3)
    expect(r.stderr).toContain("no-such-run does not exist")
    const { err } = captureConsole()
    expect(await main(["bench", "--out", join(temp(), "run"), "--method", "smurfs,reakt"])).toBe(2)
    expect(err.join("\n")).toContain(
      '--method: unknown "reakt"; use smurfs, react, dfsdt, tau2-agent, chat (did you mean react?)'
    )
    const parsed = parseCommand(
      {
        name: "x",
        help: "",
        options: { method: { type: "string", multiple: true }, tools: { type: "string", multiple: true } }
      },
      ["--method", "a,b", "--method", "c", "--tools", "mcp:server --x a,b"]
    )
    expect(parsed.values.method).toEqual(["a", "b", "c"])
    // a tool source is a command line that may hold commas: never split
    expect(parsed.values.tools).toEqual(["mcp:server --x a,b"])
    // a method named twice runs once
    expect(choiceList("method", ["react", "smurfs", "react"], ["smurfs", "react", "dfsdt"])).toEqual([
      "react",
      "smurfs"
    ])
  })

  it("an --out that is a file is bad input (exit 3)", async () => {
    const file = join(temp(), "a-file")
    writeFileSync(file, "")
    const bench = await smurfs(["bench", "--out", file, "--model", "sim", "--group", "G1_instruction", "--limit", "1"])
    expect(bench.code).toBe(3)
    expect(bench.stderr).toContain("is a file; give a directory")
  })

  it("an unknown --ids entry is an error, not a smaller run", async () => {
    const r = await smurfs(
      ["bench", "--out", join(temp(), "run"), "--model", "sim", "--group", "G1_instruction", "--ids", "no-such-id"],
      { env: { SMURFS_DATA: MINI_DATA.path } }
    )
    expect(r.code).toBe(3)
    expect(r.stderr).toContain("no query has the id no-such-id in G1_instruction")
  })

  it("a syntax error in a tool module shows file:line:column; counts say 1 tool", async () => {
    const dir = temp()
    const ts = join(dir, "tools.ts")
    const js = join(dir, "tools.mjs")
    writeFileSync(ts, 'export const tools = [\n  { name: "x",, }\n]\n')
    writeFileSync(js, 'export const tools = [\n  { name: "x",, }\n]\n')
    // (spawned: under vitest, imports go through its own transform and its own errors)
    for (const file of [ts, js]) {
      const r = await smurfs(["tools", "--tools", file])
      expect(r.code).toBe(3)
      expect(r.stderr).toContain(`${file}:2:15: syntax error`)
    }
    const { out } = captureConsole()
    expect(await main(["tools", "--tools", join(repo, "src/tools/fixtures/tools-array-module.ts")])).toBe(0)
    expect(out.join("\n")).toMatch(/: 1 tool\n/)
  })

  it("doctor on a scripted model says it needs no server", async () => {
    const r = await smurfs(["doctor", "--model", `scripted:${demoScript}`])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("a scripted model needs no server")
  })

  it("smurfs run ... | head: a reader that closes the pipe early ends the run with 0", async () => {
    const child = spawn(process.execPath, [bin, "run", demoQuery, "--model", `scripted:${demoScript}`, "--json"], {
      cwd: repo,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += String(d)))
    // the reader goes away before the answer is written, as `head` does after its lines
    child.stdout.destroy()
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    expect(stderr).not.toContain("EPIPE")
    expect(code).toBe(0)
    // console.log already drops write errors; a direct stdout write needs the handler the CLI installs
    const writer = (handler: boolean) =>
      `const { exitQuietlyOnClosedPipe } = await import(${JSON.stringify(join(repo, "src/cli/main.ts"))});` +
      `${handler ? "exitQuietlyOnClosedPipe();" : ""}setTimeout(() => { for (let i = 0; i < 1e4; i++) process.stdout.write("x".repeat(100) + "\\n") }, 300)`
    for (const handler of [false, true]) {
      const c = spawn(process.execPath, ["--input-type=module", "-e", writer(handler)], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      let err = ""
      c.stderr.on("data", (d) => (err += String(d)))
      c.stdout.once("data", () => c.stdout.destroy())
      const exit = await new Promise<number | null>((resolve) => c.on("close", resolve))
      if (handler) expect(exit, err).toBe(0)
      else expect(err).toContain("EPIPE")
    }
  })
})

describe("settings without long command lines", () => {
  const spec = {
    name: "bench",
    help: "",
    options: { model: { type: "string" }, concurrency: { type: "string" }, env: { type: "string", multiple: true } }
  } as const

  it("smurfs.config.json gives defaults; the environment overrides it; a flag overrides both", async () => {
    const cwd = temp()
    writeFileSync(
      join(cwd, "smurfs.config.json"),
      JSON.stringify({ model: `scripted:${demoScript}`, run: { "max-steps": 3 } })
    )
    const fromFile = await smurfs(["run", demoQuery, "--json"], { cwd })
    expect(fromFile.code).toBe(0)
    expect(JSON.parse(fromFile.stdout).finishType).toBe("give_answer")
    const fromFlag = await smurfs(["run", demoQuery, "--json", "--model", `scripted:${demoScript}`], {
      cwd,
      env: { SMURFS_MODEL: "scripted:env-script-missing.json" }
    })
    expect(fromFlag.code).toBe(0)

    writeFileSync(
      join(cwd, "smurfs.config.json"),
      JSON.stringify({ model: "sim", concurrency: 3, bench: { env: "replay,simulated", concurrency: 8 } })
    )
    const notice = () => {}
    expect(parseCommand(spec, [], { cwd, env: {}, notice }).values).toEqual({
      model: "sim",
      concurrency: "8",
      env: ["replay", "simulated"]
    })
    expect(parseCommand(spec, [], { cwd, env: { SMURFS_MODEL: "openai:gpt" }, notice }).values.model).toBe("openai:gpt")
    expect(
      parseCommand(spec, ["--model", "ollama:x", "--concurrency", "2"], {
        cwd,
        env: { SMURFS_MODEL: "openai:gpt" },
        notice
      }).values
    ).toMatchObject({ model: "ollama:x", concurrency: "2" })
  })

  it("a setting the command does not have is bad input, with a did-you-mean", async () => {
    const cwd = temp()
    writeFileSync(join(cwd, "smurfs.config.json"), JSON.stringify({ bench: { concurency: 8 } }))
    const r = await smurfs(["bench", "--out", "run"], { cwd })
    expect(r.code).toBe(3)
    expect(r.stderr).toContain('"bench" has no setting "concurency" (did you mean "concurrency"?)')
    writeFileSync(join(cwd, "smurfs.config.json"), "{ not json")
    expect(() => parseCommand(spec, [], { cwd, env: {} })).toThrow(ConfigError)
  })

  it("a smurfs.config.ts works too", () => {
    const cwd = temp()
    writeFileSync(
      join(cwd, "smurfs.config.ts"),
      'const config: Record<string, unknown> = { model: "sim", bench: { concurrency: 5 } }\nexport default config\n'
    )
    expect(parseCommand(spec, [], { cwd, env: {} }).values).toMatchObject({ model: "sim", concurrency: "5" })
  })
})
