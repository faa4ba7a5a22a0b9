// llama.cpp's own JSON-Schema-to-grammar converter, built here from the source llama.rn ships on npm
// (no llama.cpp on the machine, no native dependency): fetched with `npm pack`, compiled once, cached.
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { z } from "zod"
import type { FailureKind } from "../../src/failure.ts"
import { packageRoot } from "../../src/package-root.ts"

/**
 * The npm package whose `cpp/common/json-schema-to-grammar.cpp` is llama.cpp's (MIT), pinned with
 * the registry's integrity so every machine converts with the same code.
 */
export const LLAMA_RN = {
  name: "llama.rn",
  version: "0.12.9",
  integrity: "sha512-uRsTVARp1KnDkDg00FvOGIrN6SZfMqYVJfCOdxN9FSyGufLC+Aad6oFWZVEO8vmtNqu+JBlsCGevP4sJGifAvg=="
} as const

/** The tarball members the converter needs; `common.h` (which pulls in llama.h and ggml) is ours instead. */
const MEMBERS = [
  "package/cpp/common/json-schema-to-grammar.cpp",
  "package/cpp/common/json-schema-to-grammar.h",
  "package/cpp/nlohmann"
]

/** Our driver and the stand-in for llama.cpp's common.h, beside this file. */
const HERE = fileURLToPath(new URL(".", import.meta.url))
const OUR_SOURCES = ["driver.cpp", "common.h"]
const CXX_FLAGS = ["-O1", "-std=c++17"]

/** Where the tarball, the extracted source and the binary are kept between runs. */
export const DEFAULT_CACHE_DIR = fileURLToPath(new URL("node_modules/.cache/smurfs-grammar/", packageRoot))

/** The converter cannot be had on this machine; `reason` says which prerequisite is missing. */
export class ConverterUnavailable extends Data.TaggedError("ConverterUnavailable")<{
  readonly reason: "compiler" | "registry" | "archive" | "build"
  readonly problem: string
  readonly hint: string
}> {
  get kind(): FailureKind {
    return "unavailable"
  }
  override get message() {
    return `${this.problem}. ${this.hint}`
  }
}

/** The converter ran but its output was not what the driver writes (a broken build or a killed process). */
export class ConverterFailed extends Data.TaggedError("ConverterFailed")<{ readonly problem: string }> {
  get kind(): FailureKind {
    return "failed"
  }
  override get message() {
    return `the grammar converter failed: ${this.problem}. Delete ${DEFAULT_CACHE_DIR} to rebuild it, and run again.`
  }
}

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** Set when the program could not be started at all (ENOENT: not installed). */
  readonly spawnError?: NodeJS.ErrnoException | undefined
}

/** Run a program to completion (never rejects): its exit code and output, `input` on its stdin. */
const run = (
  command: string,
  args: ReadonlyArray<string>,
  options: { input?: string; cwd?: string; timeoutMs: number }
): Effect.Effect<Ran> =>
  Effect.callback<Ran>((resume) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
      timeout: options.timeoutMs
    })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout.on("data", (b: Buffer) => out.push(b))
    child.stderr.on("data", (b: Buffer) => err.push(b))
    child.stdin.on("error", () => {}) // a program that exits before reading its input is reported by its exit code
    child.on("error", (e: NodeJS.ErrnoException) =>
      resume(Effect.succeed({ code: null, stdout: "", stderr: e.message, spawnError: e }))
    )
    child.on("close", (code) =>
      resume(
        Effect.succeed({
          code,
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8")
        })
      )
    )
    child.stdin.end(options.input ?? "")
    return Effect.sync(() => child.kill())
  })

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const lastLines = (text: string, n = 3) => text.trim().split("\n").slice(-n).join(" | ")

/** What npm says went wrong: its error code and first message line (not the stack or the log file's path). */
const npmProblem = (stderr: string): string => {
  const errors = stderr
    .split("\n")
    .flatMap((l) => (l.startsWith("npm error ") ? [l.slice("npm error ".length).trim()] : []))
  const code = errors.find((l) => l.startsWith("code "))?.slice("code ".length)
  const first = errors.find((l) => l.length > 0 && !/^(code|syscall|errno|path) /.test(l))
  return [code, first].filter((x) => x !== undefined).join(": ") || lastLines(stderr)
}

/** The compiler: $CXX, else g++. */
const compiler = () => process.env["CXX"]?.trim() || "g++"

/** npm itself: the one running this script when there is one, else `npm` on the PATH. */
const npm = (args: ReadonlyArray<string>): [string, Array<string>] => {
  const cli = process.env["npm_execpath"]
  return cli && /npm-cli\.c?js$/.test(cli) ? [process.execPath, [cli, ...args]] : ["npm", [...args]]
}

/** The llama.rn tarball in the cache, fetched with `npm pack` (through the user's npm config and registry) when absent. */
const obtainTarball = Effect.fn("GrammarConverter.tarball")(function* (cacheDir: string) {
  const tarball = join(cacheDir, `${LLAMA_RN.name}-${LLAMA_RN.version}.tgz`)
  if (existsSync(tarball)) return tarball
  const spec = `${LLAMA_RN.name}@${LLAMA_RN.version}`
  const staging = mkdtempSync(join(cacheDir, "pack-"))
  const [command, args] = npm(["pack", spec, "--json", "--pack-destination", staging])
  const packed = yield* run(command, args, { cwd: staging, timeoutMs: 180_000 })
  const fail = (problem: string) => {
    rmSync(staging, { recursive: true, force: true })
    return Effect.fail(
      new ConverterUnavailable({
        reason: "registry",
        problem,
        hint: `This benchmark needs the npm registry once to fetch ${spec} (llama.cpp's converter source); check your network or npm registry setting and run again`
      })
    )
  }
  if (packed.spawnError) return yield* fail(`npm could not be started (${packed.spawnError.message})`)
  if (packed.code !== 0)
    return yield* fail(`\`npm pack ${spec}\` failed: ${npmProblem(packed.stderr) || `exit code ${packed.code}`}`)
  const info = z
    .array(z.object({ filename: z.string(), integrity: z.string() }))
    .safeParse(parseJson(packed.stdout.slice(packed.stdout.indexOf("["))))
  const file = info.success ? info.data[0] : undefined
  if (!file || !existsSync(join(staging, file.filename))) return yield* fail(`\`npm pack ${spec}\` wrote no tarball`)
  if (file.integrity !== LLAMA_RN.integrity)
    return yield* fail(
      `${spec} from the registry has integrity ${file.integrity}, not the pinned ${LLAMA_RN.integrity}`
    )
  renameSync(join(staging, file.filename), tarball)
  rmSync(staging, { recursive: true, force: true })
  return tarball
})

/** The converter's source, extracted from the tarball into the cache (once). */
const obtainSource = Effect.fn("GrammarConverter.source")(function* (cacheDir: string) {
  const dir = join(cacheDir, `${LLAMA_RN.name}-${LLAMA_RN.version}`)
  if (existsSync(join(dir, "package/cpp/common/json-schema-to-grammar.cpp"))) return dir
  const tarball = yield* obtainTarball(cacheDir)
  const staging = mkdtempSync(join(cacheDir, "src-"))
  const extracted = yield* run("tar", ["-xzf", tarball, "-C", staging, ...MEMBERS], { timeoutMs: 120_000 })
  if (extracted.code !== 0) {
    rmSync(staging, { recursive: true, force: true })
    // a damaged tarball is fetched again on the next run
    if (!extracted.spawnError) rmSync(tarball, { force: true })
    return yield* Effect.fail(
      new ConverterUnavailable({
        reason: "archive",
        problem: `could not extract the converter from ${tarball}: ${lastLines(extracted.stderr)}`,
        hint: extracted.spawnError ? "Install tar and run again" : "The tarball was removed; run again to fetch it anew"
      })
    )
  }
  // Another process may have finished first: its copy is as good as ours.
  if (!existsSync(dir)) renameSync(staging, dir)
  else rmSync(staging, { recursive: true, force: true })
  return dir
})

/**
 * The path of the compiled converter driver, built into the cache on first use (fetching the source
 * from the registry, then compiling with g++) and reused while our sources and the compiler stay the same.
 */
export const obtainConverter = Effect.fn("GrammarConverter.obtain")(function* (cacheDir: string = DEFAULT_CACHE_DIR) {
  mkdirSync(cacheDir, { recursive: true })
  const cxx = compiler()
  const version = yield* run(cxx, ["--version"], { timeoutMs: 30_000 })
  if (version.spawnError || version.code !== 0)
    return yield* Effect.fail(
      new ConverterUnavailable({
        reason: "compiler",
        problem: `no C++ compiler: \`${cxx} --version\` ${version.spawnError ? "could not be started" : `failed (${lastLines(version.stderr)})`}`,
        hint: "Install g++ (Debian/Ubuntu: apt-get install g++; Fedora: dnf install gcc-c++; macOS: xcode-select --install) or set CXX to a C++17 compiler"
      })
    )
  const key = createHash("sha256")
  for (const file of OUR_SOURCES) key.update(readFileSync(join(HERE, file)))
  key.update([LLAMA_RN.integrity, cxx, version.stdout.split("\n")[0] ?? "", ...CXX_FLAGS].join("\n"))
  const binary = join(cacheDir, `json-schema-to-grammar-${key.digest("hex").slice(0, 16)}`)
  if (existsSync(binary)) return binary
  const source = yield* obtainSource(cacheDir)
  // Our common.h stands in for llama.cpp's: the converter's `#include "common.h"` finds it through -I.
  const shim = mkdtempSync(join(cacheDir, "shim-"))
  for (const file of OUR_SOURCES) copyFileSync(join(HERE, file), join(shim, file))
  // built in a folder of its own (mkdtemp: an unpredictable name, made exclusively), never at a guessable path
  const buildDir = mkdtempSync(join(cacheDir, "build-"))
  const building = join(buildDir, "converter")
  const built = yield* run(
    cxx,
    [
      ...CXX_FLAGS,
      `-I${join(source, "package/cpp")}`,
      `-I${shim}`,
      "-o",
      building,
      join(shim, "driver.cpp"),
      join(source, "package/cpp/common/json-schema-to-grammar.cpp")
    ],
    { timeoutMs: 600_000 }
  )
  rmSync(shim, { recursive: true, force: true })
  if (built.code !== 0) {
    rmSync(buildDir, { recursive: true, force: true })
    return yield* Effect.fail(
      new ConverterUnavailable({
        reason: "build",
        problem: `\`${cxx}\` could not compile llama.cpp's converter: ${lastLines(built.stderr, 5)}`,
        hint: "It needs a C++17 compiler (g++ 9 or later); set CXX to another one, or report this with the compiler's output"
      })
    )
  }
  renameSync(building, binary)
  rmSync(buildDir, { recursive: true, force: true })
  return binary
})

/** One schema's grammar as llama.cpp's converter writes it, or the converter's error (it throws on constructs it cannot express). */
export const Conversion = z.union([
  z.object({ bytes: z.number().int(), rules: z.number().int() }),
  z.object({ error: z.string() })
])
export type Conversion = z.infer<typeof Conversion>

/** Convert schemas in one run of the driver; each gets its grammar's size in bytes or the converter's error. */
export const convertSchemas = Effect.fn("GrammarConverter.convert")(function* (
  binary: string,
  schemas: ReadonlyArray<unknown>
) {
  const ran = yield* run(binary, ["--lines"], {
    input: `${schemas.map((s) => JSON.stringify(s)).join("\n")}\n`,
    timeoutMs: 600_000
  })
  if (ran.code !== 0)
    return yield* Effect.fail(
      new ConverterFailed({
        problem: ran.spawnError ? ran.spawnError.message : `exit code ${ran.code}: ${lastLines(ran.stderr)}`
      })
    )
  const lines = ran.stdout.split("\n").filter((l) => l.length > 0)
  if (lines.length !== schemas.length)
    return yield* Effect.fail(new ConverterFailed({ problem: `${lines.length} results for ${schemas.length} schemas` }))
  const out: Array<Conversion> = []
  for (const line of lines) {
    const parsed = Conversion.safeParse(parseJson(line))
    if (!parsed.success)
      return yield* Effect.fail(new ConverterFailed({ problem: `unexpected output ${line.slice(0, 200)}` }))
    out.push(parsed.data)
  }
  return out
})

/** The grammar of one schema, as Ollama would build it. */
export const grammarOf = Effect.fn("GrammarConverter.grammar")(function* (binary: string, schema: unknown) {
  const ran = yield* run(binary, [], { input: JSON.stringify(schema), timeoutMs: 60_000 })
  if (ran.code !== 0)
    return yield* Effect.fail(new ConverterFailed({ problem: lastLines(ran.stderr) || `exit code ${ran.code}` }))
  return ran.stdout
})
