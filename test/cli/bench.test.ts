// `smurfs bench` end to end: a scripted run, the non-empty guard, a dead server, Ctrl-C.
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it, vi } from "vitest"
import { collectRows } from "../../bench/report/collect.ts"
import { renderTable } from "../../bench/report/table.ts"
import { run } from "../../src/cli/commands/bench.ts"
import { ExitCode } from "../../src/cli/exit-codes.ts"
import { bench1073 } from "../bench-1073.ts"
import { lacks, MINI_DATA, STB_CHECKOUT, skipNote } from "../data.ts"
import { startFakeOllama } from "../fake-servers/ollama.ts"

const REPO = fileURLToPath(new URL("../../", import.meta.url))
const DATA = MINI_DATA.path
const SCRIPT = join(REPO, "examples", "bench-script.json")
const scratch = mkdtempSync(join(tmpdir(), "smurfs-bench-cli-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Run the command in-process, capturing what it prints on stderr. */
const bench = async (argv: Array<string>, env: Record<string, string> = {}) => {
  const lines: Array<string> = []
  const spies = [
    vi.spyOn(console, "error").mockImplementation((...a) => void lines.push(a.join(" "))),
    vi.spyOn(console, "log").mockImplementation(() => {})
  ]
  const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true)
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]))
  Object.assign(process.env, env)
  try {
    const code = await run(argv)
    return { code, stderr: lines.join("\n") }
  } finally {
    for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v)
    for (const s of spies) s.mockRestore()
    write.mockRestore()
  }
}

const records = (out: string, method: string, group: string) =>
  existsSync(join(out, "tasks", method, group)) ? readdirSync(join(out, "tasks", method, group)).sort() : []

/** A port where nothing listens. */
const deadPort = async () => {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((r) => server.close(() => r()))
  return port
}

describe("smurfs bench --profile", () => {
  const stb = STB_CHECKOUT.path
  const smurfsSrc = join(REPO, "test", "fixtures", "smurfs-src")

  it("reference without the checkouts is bad input that names what is missing and where to get it", async () => {
    const { code, stderr } = await bench([
      "--data",
      DATA,
      "--group",
      "G1_instruction",
      "--method",
      "smurfs,react",
      "--ids",
      "1073",
      "--out",
      join(scratch, "run-ref-missing"),
      "--model",
      `scripted:${SCRIPT}`,
      "--profile",
      "reference"
    ])
    expect(code).toBe(ExitCode.BadInput)
    expect(stderr).toMatch(/FreedomIntelligence\/Smurfs[\s\S]*--smurfs-src/)
    expect(stderr).toMatch(/THUNLP-MT\/StableToolBench[\s\S]*--stb/)
  })

  it.skipIf(lacks(STB_CHECKOUT))(
    `reference records the profile and every setting it changed in run.json; --temperature, --seed and --num-ctx are recorded and override it${skipNote(STB_CHECKOUT)}`,
    async () => {
      const refOut = join(scratch, "run-ref")
      const argv = (out: string) => [
        ...bench1073(`scripted:${SCRIPT}`, out, DATA),
        "--profile",
        "reference",
        "--stb",
        stb,
        "--smurfs-src",
        smurfsSrc
      ]
      const first = await bench([...argv(refOut), "--seed", "7", "--num-ctx", "16384"])
      expect(first.code).toBe(ExitCode.Ok)
      const config = JSON.parse(readFileSync(join(refOut, "run.json"), "utf8")) as { options: Record<string, any> }
      expect(config.options["profile"]).toMatchObject({
        name: "reference",
        chain: { temperature: 1, nudge: false, validateArgs: false, parallelCalls: true },
        smurfs: { temperature: 0.95, prompts: `smurfs-src:${smurfsSrc}` }
      })
      expect(config.options).toMatchObject({ seed: 7, numCtx: 16384, temperature: 0 })
      // compare labels the run's rows with the profile
      expect(collectRows([refOut]).map((r) => r.profile)).toEqual(["reference"])
      expect(renderTable(collectRows([refOut]))).toContain("react (reference)")
      const overridden = join(scratch, "run-ref-t")
      expect((await bench([...argv(overridden), "--temperature", "0.3", "--nudge", "on"])).code).toBe(ExitCode.Ok)
      const config2 = JSON.parse(readFileSync(join(overridden, "run.json"), "utf8")) as { options: Record<string, any> }
      expect(config2.options["profile"]).toMatchObject({
        chain: { temperature: 0.3, nudge: true, validateArgs: false },
        smurfs: { temperature: 0.3 }
      })
      expect(config2.options["temperature"]).toBe(0.3)
    }
  )
})

describe("smurfs bench --executor", () => {
  const argv = (out: string) => [
    "--data",
    DATA,
    "--group",
    "G1_instruction",
    "--method",
    "smurfs",
    "--ids",
    "1073",
    "--out",
    out,
    "--model",
    "sim"
  ]

  it("fused is recorded in run.json, a resume with the other executor is refused, and its rows are labelled apart", async () => {
    const out = join(scratch, "run-fused")
    expect((await bench([...argv(out), "--executor", "fused"])).code).toBe(ExitCode.Ok)
    const config = JSON.parse(readFileSync(join(out, "run.json"), "utf8")) as { options: Record<string, unknown> }
    expect(config.options["executor"]).toBe("fused")
    // fused is the default (issue 33): a resume that names no executor continues the run
    expect((await bench([...argv(out), "--resume"])).code).toBe(ExitCode.Ok)
    const resumed = await bench([...argv(out), "--resume", "--executor", "three-call"])
    expect(resumed.code).not.toBe(ExitCode.Ok)
    expect(resumed.stderr).toMatch(/executor: the run has "fused", this command asks for "three-call"/)
    expect(collectRows([out]).map((r) => r.profile)).toEqual(["improved+fused"])
    expect(renderTable(collectRows([out]))).toContain("smurfs (improved+fused)")
  })

  it("fused under --profile reference is bad usage that says why", async () => {
    const { code, stderr } = await bench([
      ...argv(join(scratch, "run-fused-ref")),
      "--executor",
      "fused",
      "--profile",
      "reference"
    ])
    expect(code).toBe(ExitCode.Usage)
    expect(stderr).toMatch(/--executor fused is an option of the improved profile/)
  })
})

describe("smurfs bench", () => {
  const out = join(scratch, "run")
  const base = ["--data", DATA, "--group", "G1_instruction", "--method", "react,dfsdt", "--out", out]

  it.skipIf(lacks(STB_CHECKOUT))(
    `with --stb, react/dfsdt send StableToolBench's texts and run.json and the converted files say so; a wrong --stb is bad input${skipNote(STB_CHECKOUT)}`,
    async () => {
      const stbOut = join(scratch, "run-stb")
      const stb = STB_CHECKOUT.path
      const { code } = await bench([...bench1073(`scripted:${SCRIPT}`, stbOut, DATA), "--stb", stb])
      expect(code).toBe(ExitCode.Ok)
      const config = JSON.parse(readFileSync(join(stbOut, "run.json"), "utf8")) as { options: Record<string, unknown> }
      expect(config.options).toMatchObject({
        prompts: `stabletoolbench:${stb}`,
        singleChainMaxStep: 12,
        giveUpBackLength: 2
      })
      const converted = JSON.parse(
        readFileSync(join(stbOut, "converted", "react", "G1_instruction.json"), "utf8")
      ) as Record<string, { available_tools: Array<{ name: string; description: string }> }>
      const finish = converted["1073"]!.available_tools.find((t) => t.name === "Finish")!
      expect(readFileSync(join(stb, "toolbench/inference/Downstream_tasks/rapidapi.py"), "utf8")).toContain(
        finish.description
      )
      const bad = await bench([
        "--data",
        DATA,
        "--method",
        "react",
        "--out",
        join(scratch, "run-bad-stb"),
        "--model",
        `scripted:${SCRIPT}`,
        "--stb",
        join(scratch, "nope")
      ])
      expect(bad.code).toBe(ExitCode.BadInput)
      expect(bad.stderr).toMatch(/ReAct_prompts\.py: not found\. Pass --stb/)
    }
  )

  it("runs the scripted model into a run directory with records and converted files", async () => {
    const { code } = await bench([...base, "--ids", "1073,588", "--model", `scripted:${SCRIPT}`])
    expect(code).toBe(ExitCode.Ok)
    expect(records(out, "react", "G1_instruction")).toEqual(["1073.json", "588.json"])
    expect(records(out, "dfsdt", "G1_instruction")).toEqual(["1073.json", "588.json"])
    const converted = JSON.parse(
      readFileSync(join(out, "converted", "dfsdt", "G1_instruction.json"), "utf8")
    ) as Record<string, { answer: { method: string } }>
    expect(Object.keys(converted).sort()).toEqual(["1073", "588"])
    expect(converted["588"]!.answer.method).toBe("DFS_woFilter_w2")
    expect(JSON.parse(readFileSync(join(out, "run.json"), "utf8"))).toMatchObject({
      methods: ["react", "dfsdt"],
      model: `scripted:${SCRIPT}`,
      modelName: SCRIPT
    })
  })

  it("refuses to write into a non-empty run directory without --resume", async () => {
    const { code, stderr } = await bench([...base, "--ids", "1073,588,608", "--model", `scripted:${SCRIPT}`])
    expect(code).toBe(ExitCode.BadInput)
    expect(stderr).toContain("--resume")
    expect(records(out, "react", "G1_instruction")).toEqual(["1073.json", "588.json"])
  })

  it("stops with ModelUnavailable when the server is down, keeping finished work", async () => {
    const before = readFileSync(join(out, "tasks", "react", "G1_instruction", "588.json"), "utf8")
    const port = await deadPort()
    const { code, stderr } = await bench(
      [...base, "--ids", "1073,588,608,1572,1856,2121", "--model", "openai:any", "--resume", "--force"],
      {
        OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`
      }
    )
    expect(code).toBe(ExitCode.ModelUnavailable)
    expect(stderr).toContain("looks down")
    expect(stderr).toContain("--resume")
    const failed = records(out, "react", "G1_instruction").filter((f) => f !== "1073.json" && f !== "588.json")
    for (const file of failed)
      expect(JSON.parse(readFileSync(join(out, "tasks", "react", "G1_instruction", file), "utf8"))).toMatchObject({
        finishType: "error",
        errorTag: "ModelUnreachable"
      })
    expect(failed.length + records(out, "dfsdt", "G1_instruction").length - 2).toBeGreaterThanOrEqual(3)
    expect(readFileSync(join(out, "tasks", "react", "G1_instruction", "588.json"), "utf8")).toBe(before)
  })

  it("stops on SIGINT, keeps the run and says how to resume", async () => {
    const hanging: Server = createServer(() => {})
    await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", r))
    const port = (hanging.address() as AddressInfo).port
    const dir = join(scratch, "interrupted")
    const child = spawn(
      process.execPath,
      [
        "bin/smurfs.js",
        "bench",
        "--data",
        DATA,
        "--group",
        "G1_tool",
        "--limit",
        "2",
        "--method",
        "react",
        "--model",
        "openai:any",
        "--out",
        dir
      ],
      {
        cwd: REPO,
        env: { ...process.env, OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` }
      }
    )
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    // interrupt once the run has started (its first line) and is waiting on the model
    await vi.waitFor(() => expect(stderr).toContain("2 tasks"), { timeout: 20_000, interval: 50 })
    child.kill("SIGINT")
    const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)))
    hanging.closeAllConnections()
    hanging.close()
    expect(code).toBe(ExitCode.Interrupted)
    expect(stderr).toContain("interrupted")
    expect(stderr).toContain("--resume")
    expect(existsSync(join(dir, "run.json"))).toBe(true)
  })

  it("a model the server does not have exits 4 before anything is written, with ollama pull and the names the server has", async () => {
    const server = await startFakeOllama()
    try {
      const missing = join(scratch, "run-missing-model")
      const { code, stderr } = await bench(
        [
          "--data",
          DATA,
          "--group",
          "G1_instruction",
          "--limit",
          "1",
          "--method",
          "react",
          "--out",
          missing,
          "--model",
          "ollama:qwen2.5:7bb"
        ],
        { OLLAMA_HOST: server.url }
      )
      expect(code).toBe(ExitCode.ModelUnavailable)
      expect(stderr).toContain("ollama pull qwen2.5:7bb")
      expect(stderr).toContain("The server has: qwen2.5:7b")
      expect(stderr).not.toContain("--resume")
      expect(existsSync(missing)).toBe(false)
      expect(server.requests.filter((r) => r.path === "/api/chat")).toHaveLength(0)
    } finally {
      await server.close()
    }
  })
})
