// Imports point down only (docs/architecture.md, "Layers"): instruments > cli > bench > agents > memory/tools > llm > trace > text.
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const REPO = fileURLToPath(new URL("../", import.meta.url))

/** Each layer by the folders it owns, highest first; a file may import its own layer and any layer below it. */
const LAYERS: ReadonlyArray<{ readonly name: string; readonly rank: number; readonly dirs: ReadonlyArray<string> }> = [
  // our own measuring instruments (perf, faults, grammar, scale, ...): they use anything, nothing that ships uses them
  { name: "instruments", rank: 8, dirs: ["instruments/"] },
  { name: "cli", rank: 7, dirs: ["src/cli/"] },
  { name: "bench", rank: 6, dirs: ["bench/"] },
  // the library's own entry points sit on the agents, beside the bench
  { name: "library", rank: 6, dirs: ["src/index.ts", "src/solve.ts", "src/run-query.ts"] },
  { name: "agents", rank: 5, dirs: ["src/agents/"] },
  { name: "memory", rank: 4, dirs: ["src/memory/"] },
  { name: "tools", rank: 4, dirs: ["src/tools/"] },
  { name: "llm", rank: 3, dirs: ["src/llm/"] },
  { name: "trace", rank: 2, dirs: ["src/trace/"] },
  // prompt templates, fenced data and the package's own small helpers (package root, version, plural)
  { name: "text", rank: 1, dirs: ["src/text/", "src/"] }
]

/**
 * Upward imports waiting on work in flight, as `importer -> imported`. Empty it when that work lands:
 */
const KNOWN_EXCEPTIONS: ReadonlySet<string> = new Set<string>([])

const layerOf = (file: string) =>
  LAYERS.find((l) => l.dirs.some((d) => (d.endsWith("/") ? file.startsWith(d) : file === d)))

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(join(REPO, dir), { withFileTypes: true, recursive: true })
    .filter(
      (e) =>
        e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && !e.parentPath.includes("node_modules")
    )
    .map((e) => relative(REPO, join(e.parentPath, e.name)).split("\\").join("/"))

const readSource = (file: string): string => readFileSync(join(REPO, file), "utf8")

/** The repository paths a file imports (static and dynamic imports of relative paths). */
const importsOf = (file: string, text: string): Array<string> =>
  [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)"(\.{1,2}\/[^"]+)"/g)].map((m) =>
    normalize(join(dirname(file), m[1]!))
      .split("\\")
      .join("/")
  )

/** Every import that points to a higher layer, as `importer -> imported`. */
const upwardImports = (files: ReadonlyArray<string>, read: (file: string) => string = readSource): Array<string> =>
  files.flatMap((file) => {
    const from = layerOf(file)
    if (!from) return []
    return importsOf(file, read(file))
      .filter((target) => (layerOf(target)?.rank ?? 0) > from.rank)
      .map((target) => `${file} -> ${target}`)
  })

describe("layers", () => {
  it("every import in src/, bench/ and instruments/ points down (tests excepted), bench/ never imports the CLI, nothing that ships imports an instrument", () => {
    const files = [...sourceFiles("src"), ...sourceFiles("bench"), ...sourceFiles("instruments")]
    expect(files.length).toBeGreaterThan(100)
    const upward = upwardImports(files)
    expect(upward.filter((u) => !KNOWN_EXCEPTIONS.has(u))).toEqual([])
    // an exception that no longer happens must leave the list
    expect([...KNOWN_EXCEPTIONS].filter((e) => !upward.includes(e))).toEqual([])
  })

  it("reports an import into a higher layer, and only that", () => {
    const sources: Record<string, string> = {
      "src/llm/x.ts":
        'import { ask } from "../agents/ask.ts"\nimport { emit } from "../trace/events.ts"\nimport { render } from "../text/prompt-template.ts"',
      "src/tools/y.ts": 'const m = await import("../memory/step.ts")\nimport { version } from "../version.ts"',
      "bench/z.ts": 'import { run } from "../src/cli/commands/run.ts"\nimport { solve } from "../src/solve.ts"',
      "src/text/w.ts": 'import { Trace } from "../trace/events.ts"',
      "bench/v.ts": 'import { measure } from "../instruments/perf/measures.ts"',
      "instruments/perf/u.ts":
        'import { runBench } from "../../bench/app.ts"\nimport { main } from "../../src/cli/main.ts"'
    }
    expect(upwardImports(Object.keys(sources), (f) => sources[f]!)).toEqual([
      "src/llm/x.ts -> src/agents/ask.ts",
      "bench/z.ts -> src/cli/commands/run.ts",
      "src/text/w.ts -> src/trace/events.ts",
      "bench/v.ts -> instruments/perf/measures.ts"
    ])
  })
})
