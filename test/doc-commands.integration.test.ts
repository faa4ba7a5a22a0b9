// Every command of the README's and docs/benchmark.md's ```sh blocks, run as written: through `sh -c`, in a temporary
// clone whose ../shared/toolbench is the fixture, `npx` resolving to this repository's bin (and to packages in its
// node_modules, never the registry), Ollama a fake server on 127.0.0.1 (OLLAMA_HOST). A block added to either document
// is run too; a command that cannot run here is listed in NOT_RUN with its reason.
import { spawn } from "node:child_process"
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEFAULT_MODEL_SOURCE } from "../src/llm/model-files/source.ts"
import { MINI_DATA } from "./data.ts"
import { removeTinyModels, tinyModelFile } from "./engine/tiny-model.ts"
import { type FakeOllama, startFakeOllama } from "./fake-servers/ollama.ts"
import { type FakeOpenAI, startFakeOpenAI } from "./fake-servers/openai.ts"

const REPO = fileURLToPath(new URL("..", import.meta.url))
const DOCS = ["README.md", "docs/benchmark.md"] as const

/** Commands not run, each with why. Keep it short: everything else runs. */
const NOT_RUN: Readonly<Record<string, string>> = {
  "npm install":
    "installs this clone's dependencies; the test runs in an installed clone (and may not reach the registry)",
  "npm test": "the unit suite itself, which `npm test` runs as its own step",
  "npm install smurfs zod":
    "the package is not on npm yet (E404); test/package.test.ts installs the packed tarball instead",
  "npx smurfs data pull stabletoolbench --cache":
    "fetches StableToolBench's files from GitHub and Hugging Face, pinned by checksum, which this machine cannot reach; test/cli/pull.test.ts runs `smurfs data pull` (and `bench --data` on what it pulled) against a loopback host",
  "npx smurfs bench --tau2 data/tau2 --domain retail --method chat,tau2-agent --model ollama:qwen2.5:7b --user-model ollama:qwen2.5:32b --trials 4 --concurrency 4 --out runs/tau2-retail":
    "τ²-bench's full retail domain (smurfs data pull tau2 fetches it from GitHub), which a fresh clone does not have (the fixture command before it runs the same path on test/fixtures/tau2)",
  "npx smurfs compare runs/tau2-retail --html runs/tau2-retail/report.html":
    "compares the run of the command before it, which is not run here",
  "npx smurfs data pull tau2 --domain retail,airline":
    "fetches τ²-bench's files from GitHub, pinned by checksum, which this machine cannot reach; test/cli/pull.test.ts runs it against a loopback host"
}

/** The commands of a document's ```sh blocks: continuation lines joined, comments dropped, `a && b` as two commands. */
const docCommands = (markdown: string): Array<string> =>
  [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)].flatMap((block) =>
    block[1]!
      .replace(/\\\n\s*/g, "")
      .split("\n")
      .map((line) => line.replace(/\s+#\s.*$/, "").trim())
      .filter((line) => line !== "" && !line.startsWith("#"))
      .flatMap((line) => line.split(/\s+&&\s+/))
  )

/** The model names a command asks an Ollama server for (bare names are Ollama's), so that the fake server has them. */
const ollamaModels = (commands: ReadonlyArray<string>): Array<string> => {
  const names = new Set(["qwen2.5:7b"])
  for (const command of commands)
    for (const match of command.matchAll(/(?:--(?:model|judge|simulator|embed)\s+|ollama (?:pull|run)\s+)(\S+)/g)) {
      const spec = match[1]!.replace(/^["']|["']$/g, "")
      // a bare name reads as Ollama's (qwen2.5:7b is ollama:qwen2.5:7b); another provider's spec is not Ollama's
      if (spec.startsWith("ollama:")) names.add(spec.slice("ollama:".length))
      else if (!/^(openai|scripted|sim|llama)\b/.test(spec)) names.add(spec)
    }
  return [...names]
}

/** `npx` for the test: `npx smurfs` is this repository's bin; `npx [-y] <pkg>` a package of its node_modules; nothing from the registry. */
const NPX_SHIM = `#!${process.execPath}
const { spawnSync } = require("node:child_process")
const { readFileSync } = require("node:fs")
const { join, dirname } = require("node:path")
const repo = ${JSON.stringify(REPO)}
const args = process.argv.slice(2).filter((a, i, all) => !(all.slice(0, i + 1).every((x) => x === "-y" || x === "--yes")))
const run = (file, rest) => {
  const child = spawnSync(process.execPath, [file, ...rest], { stdio: "inherit" })
  process.exit(child.status ?? 1)
}
if (args[0] === "smurfs") run(join(repo, "bin", "smurfs.js"), args.slice(1))
const name = args[0] ?? ""
let manifest
try {
  manifest = JSON.parse(readFileSync(join(repo, "node_modules", name, "package.json"), "utf8"))
} catch {
  console.error("npx (test stand-in): " + name + " is not in the repository's node_modules, and the test reaches no registry")
  process.exit(127)
}
const bin = typeof manifest.bin === "string" ? manifest.bin : Object.values(manifest.bin ?? {})[0]
run(join(repo, "node_modules", name, bin), args.slice(1))
`

/** `ollama pull <model>` for the test: the same request the real client sends, to the server at OLLAMA_HOST. */
const OLLAMA_SHIM = `#!${process.execPath}
const [command, model] = process.argv.slice(2)
if (command !== "pull" || !model) {
  console.error("ollama (test stand-in): only \`ollama pull <model>\` is stood in for")
  process.exit(2)
}
fetch(process.env.OLLAMA_HOST + "/api/pull", { method: "POST", body: JSON.stringify({ model, stream: false }) })
  .then(async (response) => {
    const body = await response.json()
    if (!response.ok || body.status !== "success") throw new Error(JSON.stringify(body))
    console.log("success")
  })
  .catch((e) => {
    console.error("Error: " + e.message)
    process.exit(1)
  })
`

interface ShellResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const shell = (command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<ShellResult> =>
  new Promise((resolve) => {
    const child = spawn("sh", ["-c", command], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }))
  })

/** The files a command says it writes (`--out`, `--html`, `> file`), to check they are there afterwards. */
const writtenBy = (command: string): Array<string> =>
  [...command.matchAll(/(?:--out|--html)\s+(\S+)|>\s*(\S+)/g)].map((m) => (m[1] ?? m[2])!)

const scratch = mkdtempSync(join(tmpdir(), "smurfs-doc-commands-"))
let ollama: FakeOllama
let openai: FakeOpenAI
const texts = Object.fromEntries(DOCS.map((doc) => [doc, readFileSync(join(REPO, doc), "utf8")]))
const allCommands = DOCS.flatMap((doc) => docCommands(texts[doc]!))

beforeAll(async () => {
  ollama = await startFakeOllama({
    models: ollamaModels(allCommands).map((name) => ({ name, capabilities: ["completion", "tools"] }))
  })
  openai = await startFakeOpenAI()
  const bin = join(scratch, "bin")
  mkdirSync(bin)
  writeFileSync(join(bin, "npx"), NPX_SHIM)
  writeFileSync(join(bin, "ollama"), OLLAMA_SHIM)
  chmodSync(join(bin, "npx"), 0o755)
  chmodSync(join(bin, "ollama"), 0o755)
  // `--model llama` (the default embedded model) with no network: the model cache already holds a file of the
  // default's repository and quantization, which here is the tiny generated model (garbage text, real llama.cpp)
  const [, repo, quant] = /^hf:(.+):(.+)$/.exec(DEFAULT_MODEL_SOURCE)!
  const cached = join(scratch, "models", "hf", ...repo!.split("/"))
  mkdirSync(cached, { recursive: true })
  copyFileSync(tinyModelFile(), join(cached, `${repo!.split("/")[1]!.replace(/-GGUF$/i, "")}-${quant}.gguf`))
})

afterAll(async () => {
  await ollama?.close()
  await openai?.close()
  rmSync(scratch, { recursive: true, force: true })
  removeTinyModels()
})

/** A temporary clone for one document: the repository's files linked in, ../shared/toolbench the fixture. */
const cloneFor = (doc: string): string => {
  const root = join(scratch, doc.replace(/\W/g, "-"))
  const clone = join(root, "smurfs")
  mkdirSync(join(root, "shared"), { recursive: true })
  symlinkSync(MINI_DATA.path, join(root, "shared", "toolbench"))
  mkdirSync(clone)
  for (const entry of readdirSync(REPO))
    if (![".git", "runs"].includes(entry)) symlinkSync(join(REPO, entry), join(clone, entry))
  return clone
}

const envFor = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${join(scratch, "bin")}:${process.env["PATH"] ?? ""}`,
    OLLAMA_HOST: ollama.url,
    OPENAI_BASE_URL: `${openai.url}/v1`,
    OPENAI_API_KEY: "test",
    NO_COLOR: "1"
  }
  for (const key of Object.keys(env)) if (key.startsWith("SMURFS_") || key.startsWith("OTEL_")) delete env[key]
  // the embedded engine: the model cache of beforeAll, no download, one thread (a shared machine)
  env["SMURFS_MODELS"] = join(scratch, "models")
  env["SMURFS_OFFLINE"] = "1"
  env["SMURFS_LLAMA_THREADS"] = "1"
  return env
}

describe("the commands of the docs", () => {
  it("finds each document's commands, and every command NOT_RUN names is still in them", () => {
    for (const doc of DOCS) expect(docCommands(texts[doc]!).length, doc).toBeGreaterThan(0)
    for (const command of Object.keys(NOT_RUN)) expect(allCommands, command).toContain(command)
  })
})

for (const doc of DOCS) {
  describe(`${doc}, each command as written`, () => {
    let clone: string
    beforeAll(() => {
      clone = cloneFor(doc)
    })
    for (const command of docCommands(texts[doc]!)) {
      const reason = NOT_RUN[command]
      it.skipIf(reason !== undefined)(`${command}${reason ? ` (not run: ${reason})` : ""}`, async () => {
        const result = await shell(command, clone, envFor())
        expect(result.code, `${command}\n${result.stderr}`).toBe(0)
        expect(result.stderr).not.toMatch(/a bug in smurfs/i)
        for (const file of writtenBy(command))
          expect(existsSync(join(clone, file)), `${command} wrote ${file}`).toBe(true)
      })
    }
  })
}
