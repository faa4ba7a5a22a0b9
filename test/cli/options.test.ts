// The options every command shares (issue 12 points 6 and 7), through spawned `smurfs` processes.
import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bin, demoQuery, demoScript, repo, smurfs } from "./spawn.ts"

const temp = () => mkdtempSync(join(tmpdir(), "smurfs-cli-"))
/** A loopback port nothing listens on, so an Ollama model fails fast as unreachable. */
const deadHost = "http://127.0.0.1:9"

describe.concurrent("one way to do each thing", () => {
  it("an unknown flag gets a did-you-mean, one line and a hint, exit 2", async () => {
    for (const [command, typo, meant] of [
      ["run", "--modle", "--model"],
      ["bench", "--concurency", "--concurrency"],
      ["eval", "--jduge", "--judge"],
      ["tools", "--jsno", "--json"],
      ["compare", "--htm", "--html"],
      ["doctor", "--timout", "--timeout"]
    ] as const) {
      const r = await smurfs([command, typo, "x"])
      expect(r.code, command).toBe(2)
      expect(r.stderr.trim().split("\n"), command).toEqual([`smurfs ${command}: unknown option ${typo} (did you mean ${meant}?)`, `hint: \`smurfs help ${command}\` lists its options`])
    }
    const command = await smurfs(["bnech"])
    expect(command.code).toBe(2)
    expect(command.stderr).toContain('unknown command "bnech" (did you mean "bench"?)')
  })

  it("smurfs help <command> prints the command's help", async () => {
    const help = await smurfs(["help", "bench"])
    const flag = await smurfs(["bench", "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("usage: smurfs bench")
    expect(help.stdout).toBe(flag.stdout)
  })

  it("a bare Ollama model name is read as ollama:<name>, said once", async () => {
    const r = await smurfs(["doctor", "--model", "qwen2.5:7b", "--timeout", "2000"], { env: { OLLAMA_HOST: deadHost } })
    expect(r.code).toBe(4)
    expect(r.stderr.match(/is read as ollama:qwen2\.5:7b/g)).toHaveLength(1)
    expect(r.stdout).toContain("smurfs doctor: ollama:qwen2.5:7b")
  })

  it("comma lists work on eval's --method and --group as on bench's", async () => {
    const r = await smurfs(["eval", "--run", join(repo, "no-such-run"), "--judge", "sim", "--method", "smurfs,react", "--group", "G1_instruction,G2_category"])
    // the options parse; the missing run directory is the (bad input) error
    expect(r.code).toBe(3)
    expect(r.stderr).toContain("no-such-run does not exist")
    const bad = await smurfs(["bench", "--out", join(temp(), "run"), "--method", "smurfs,reakt"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--method: unknown "reakt"; use smurfs, react, dfsdt (did you mean react?)')
  })

  it("an --out that is a file is bad input (exit 3), for bench and eval", async () => {
    const file = join(temp(), "a-file")
    writeFileSync(file, "")
    const bench = await smurfs(["bench", "--out", file, "--model", "sim", "--group", "G1_instruction", "--limit", "1"])
    expect(bench.code).toBe(3)
    expect(bench.stderr).toContain("is a file; give a directory")
  })

  it("an unknown --ids entry is an error, not a smaller run", async () => {
    const r = await smurfs(["bench", "--out", join(temp(), "run"), "--model", "sim", "--group", "G1_instruction", "--ids", "no-such-id"])
    expect(r.code).toBe(3)
    expect(r.stderr).toContain("no query has the id no-such-id in G1_instruction")
  })

  it("a syntax error in a tool module shows file:line:column", async () => {
    const dir = temp()
    const ts = join(dir, "tools.ts")
    const js = join(dir, "tools.mjs")
    writeFileSync(ts, 'export const tools = [\n  { name: "x",, }\n]\n')
    writeFileSync(js, 'export const tools = [\n  { name: "x",, }\n]\n')
    for (const file of [ts, js]) {
      const r = await smurfs(["tools", "--tools", file])
      expect(r.code).toBe(3)
      expect(r.stderr).toContain(`${file}:2:15: syntax error`)
    }
  })

  it('"1 tool", not "1 tools"', async () => {
    const r = await smurfs(["tools", "--tools", join(repo, "src/tools/fixtures/tools-array-module.ts")])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/: 1 tool\n/)
  })

  it("doctor on a scripted model says it needs no server", async () => {
    const r = await smurfs(["doctor", "--model", `scripted:${demoScript}`])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("a scripted model needs no server")
  })

  it("smurfs run ... | head: a reader that closes the pipe early ends the run with 0", async () => {
    const child = spawn(process.execPath, [bin, "run", demoQuery, "--model", `scripted:${demoScript}`, "--json"], { cwd: repo, stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += String(d)))
    // the reader goes away before the answer is written, as `head` does after its lines
    child.stdout.destroy()
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    expect(stderr).not.toContain("EPIPE")
    expect(code).toBe(0)
  })
})

describe.concurrent("settings without long command lines", () => {
  it("smurfs.config.json gives defaults; the environment overrides it; a flag overrides both", async () => {
    const cwd = temp()
    writeFileSync(join(cwd, "smurfs.config.json"), JSON.stringify({ model: `scripted:${demoScript}`, run: { "max-steps": 3 } }))
    const fromFile = await smurfs(["run", demoQuery, "--json"], { cwd })
    expect(fromFile.code).toBe(0)
    expect(JSON.parse(fromFile.stdout).finishType).toBe("give_answer")

    const fromEnv = await smurfs(["run", demoQuery], { cwd, env: { SMURFS_MODEL: "scripted:env-script-missing.json" } })
    expect(fromEnv.code).toBe(3)
    expect(fromEnv.stderr).toContain("env-script-missing.json")

    const fromFlag = await smurfs(["run", demoQuery, "--json", "--model", `scripted:${demoScript}`], { cwd, env: { SMURFS_MODEL: "scripted:env-script-missing.json" } })
    expect(fromFlag.code).toBe(0)
  })

  it("a setting the command does not have is bad input, with a did-you-mean", async () => {
    const cwd = temp()
    writeFileSync(join(cwd, "smurfs.config.json"), JSON.stringify({ bench: { concurency: 8 } }))
    const r = await smurfs(["bench", "--out", "run"], { cwd })
    expect(r.code).toBe(3)
    expect(r.stderr).toContain('"bench" has no setting "concurency" (did you mean "concurrency"?)')
  })

  it("a smurfs.config.ts works too", async () => {
    const cwd = temp()
    writeFileSync(join(cwd, "smurfs.config.ts"), `const config: Record<string, unknown> = { model: ${JSON.stringify(`scripted:${demoScript}`)} }\nexport default config\n`)
    const r = await smurfs(["run", demoQuery, "--json"], { cwd })
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).model).toBeDefined()
  })
})
