// `smurfs pull` and `smurfs data pull` as a user runs them, against a loopback file host: progress, the cache reused with no request, exit codes, and pulled data that `smurfs bench --data` runs on.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { pullData } from "../../bench/data-pull/pull.ts"
import { STABLETOOLBENCH_COMMIT, stableToolBenchPieces } from "../../bench/data-pull/sources.ts"
import { cliProcesses } from "../cli-processes.ts"
import { serveSample } from "../data-pull-sample.ts"
import { type FileHost, fakeGguf, sha256, startFileHost } from "../fake-servers/files.ts"
import { smurfs } from "./spawn.ts"

vi.setConfig({ testTimeout: 120_000 })

let host: FileHost
let root: string
const model = fakeGguf(300_000, 11)

beforeAll(async () => {
  host = await startFileHost()
  host.hfRepo("someone/Tiny-GGUF", [
    { path: "tiny-Q8_0.gguf", bytes: fakeGguf(1000, 2), lfs: true },
    { path: "tiny-Q4_K_M.gguf", bytes: model, lfs: true }
  ])
  root = mkdtempSync(join(tmpdir(), "smurfs-cli-pull-"))
})
afterAll(async () => {
  await host.close()
  rmSync(root, { recursive: true, force: true })
})

describe("smurfs pull", () => {
  it("fetches a model with progress, prints its path, and reuses it with no request", async () => {
    const env = { HF_ENDPOINT: host.url, SMURFS_MODELS: join(root, "models") }
    const first = await smurfs(["pull", "hf:someone/Tiny-GGUF:Q4_K_M"], { env })
    expect(first.code, first.stderr).toBe(0)
    const path = join(root, "models", "hf", "someone", "Tiny-GGUF", "tiny-Q4_K_M.gguf")
    expect(first.stdout).toContain(`ready: ${path}`)
    expect(first.stderr).toContain("tiny-Q4_K_M.gguf: downloading 300 kB")
    expect(first.stderr).toContain("tiny-Q4_K_M.gguf: done, 300 kB")
    expect(sha256(readFileSync(path))).toBe(sha256(model))
    host.reset()
    const again = await smurfs(["pull", "llama:hf:someone/Tiny-GGUF:Q4_K_M", "--json"], { env })
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toEqual({
      spec: "llama:hf:someone/Tiny-GGUF:Q4_K_M",
      path,
      bytes: model.length,
      downloaded: false
    })
    expect(host.requests).toEqual([])
  })

  it("exit codes: 3 for a quantization the repository lacks, 4 offline without the file, 2 without a spec", async () => {
    const env = { HF_ENDPOINT: host.url, SMURFS_MODELS: join(root, "models-2") }
    const missing = await smurfs(["pull", "hf:someone/Tiny-GGUF:Q2_K"], { env })
    expect(missing.code).toBe(3)
    expect(missing.stderr).toContain("tiny-Q8_0.gguf, tiny-Q4_K_M.gguf")
    host.reset()
    const offline = await smurfs(["pull", "hf:someone/Tiny-GGUF/tiny-Q8_0.gguf", "--offline"], { env })
    expect(offline.code).toBe(4)
    expect(offline.stderr).toContain(`${host.url}/someone/Tiny-GGUF/resolve/main/tiny-Q8_0.gguf`)
    expect(offline.stderr).toContain("smurfs pull hf:someone/Tiny-GGUF/tiny-Q8_0.gguf")
    const byEnv = await smurfs(["pull", "llama"], { env: { ...env, SMURFS_OFFLINE: "1" } })
    expect(byEnv.code).toBe(4)
    expect(byEnv.stderr).toContain("smurfs pull llama")
    expect(host.requests).toEqual([])
    expect((await smurfs(["pull"], { env })).code).toBe(2)
  })
})

describe("smurfs pull, interrupted", () => {
  const { start, killAll } = cliProcesses()
  afterAll(killAll)

  it("Ctrl-C during a download ends with 130, keeps the part and releases the lock; the next pull resumes it", async () => {
    host.reset()
    const env = { HF_ENDPOINT: host.url, SMURFS_MODELS: join(root, "models-int") }
    host.fault("/someone/Tiny-GGUF/resolve/main/tiny-Q4_K_M.gguf", { fault: "stall", after: 120_000 })
    const dir = join(root, "models-int", "hf", "someone", "Tiny-GGUF")
    const pull = start(["pull", "hf:someone/Tiny-GGUF:Q4_K_M"], env)
    const part = join(dir, "tiny-Q4_K_M.gguf.part")
    for (let i = 0; i < 600 && !(existsSync(part) && statSync(part).size >= 120_000); i++)
      await new Promise((r) => setTimeout(r, 100))
    expect(statSync(part).size).toBe(120_000)
    pull.child.kill("SIGINT")
    expect(await pull.exited).toBe(130)
    expect(readdirSync(dir).sort()).toEqual(["tiny-Q4_K_M.gguf.part"])
    host.reset()
    const again = await smurfs(["pull", "hf:someone/Tiny-GGUF:Q4_K_M"], { env })
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain("resuming at 120 kB")
    expect(host.requests.find((r) => r.path.endsWith(".gguf"))?.range).toBe("bytes=120000-")
    expect(sha256(readFileSync(join(dir, "tiny-Q4_K_M.gguf")))).toBe(sha256(model))
  })
})

describe("smurfs data pull", () => {
  it("offline: exit 4, no request, and the URLs to fetch by hand on the configured host", async () => {
    host.reset()
    const out = join(root, "stb-offline")
    const r = await smurfs(["data", "pull", "stabletoolbench", "--out", out, "--offline"], {
      env: { SMURFS_GITHUB_RAW: host.url, HF_ENDPOINT: host.url }
    })
    expect(r.code).toBe(4)
    expect(r.stderr).toContain(
      `${host.url}/THUNLP-MT/StableToolBench/${STABLETOOLBENCH_COMMIT}/solvable_queries/test_instruction/G1_instruction.json`
    )
    expect(r.stderr).toContain(`smurfs data pull stabletoolbench --out ${out}`)
    expect(host.requests).toEqual([])
  })

  it("files that are not StableToolBench's (their git blob ids differ) are refused: exit 4, nothing kept", async () => {
    const pieces = stableToolBenchPieces({})
    const source = pieces[0]!.source
    if (source.kind !== "github") throw new Error("the queries come from GitHub")
    for (const f of source.files)
      host.file(`/THUNLP-MT/StableToolBench/${STABLETOOLBENCH_COMMIT}/${f.path}`, Buffer.alloc(f.size ?? 10, 32))
    const out = join(root, "stb-corrupt")
    const r = await smurfs(["data", "pull", "stabletoolbench", "--out", out], {
      env: { SMURFS_GITHUB_RAW: host.url, HF_ENDPOINT: host.url }
    })
    expect(r.code).toBe(4)
    expect(r.stderr).toContain("git blob SHA-1")
    expect(r.stderr).toContain("it was not kept")
    expect(readdirSync(out).filter((f) => f !== ".downloads")).toEqual([])
  })

  it("usage: an unknown dataset gets a did-you-mean, StableToolBench's flags are refused for tau2", async () => {
    const unknown = await smurfs(["data", "pull", "stabletoolbenc"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('did you mean "stabletoolbench"')
    expect((await smurfs(["data", "pull", "tau2", "--cache"])).code).toBe(2)
    expect((await smurfs(["data"])).code).toBe(2)
  })

  it("pulled StableToolBench-layout data is what smurfs bench --data runs on", async () => {
    host.reset()
    const { pieces } = await serveSample(host)
    const out = join(root, "stb-sample")
    await pullData({
      dest: out,
      pieces,
      command: "test",
      env: { SMURFS_GITHUB_RAW: host.url, HF_ENDPOINT: host.url },
      offline: false
    })
    const run = join(root, "run")
    const r = await smurfs([
      "bench",
      "--data",
      out,
      "--group",
      "G1_instruction",
      "--limit",
      "1",
      "--env",
      "replay,offline",
      "--model",
      "sim",
      "--out",
      run
    ])
    expect(r.code, r.stderr).toBe(0)
    const tasks = readdirSync(join(run, "tasks", "smurfs", "G1_instruction"))
    expect(tasks).toHaveLength(1)
    expect(existsSync(join(run, "run.json"))).toBe(true)
  })
})
