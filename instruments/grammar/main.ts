// `npm run bench:grammar`: the decoding grammar of every schema smurfs sends, by llama.cpp's own converter
// (what Ollama applies to `format`), its size against Ollama's grammar buffer. Exits 1 when a schema does
// not convert or a format grammar would be cut; 2 when the converter cannot be had on this machine.
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import * as Effect from "effect/Effect"
import { DEFAULT_DATA_DIR } from "../../bench/datasets.ts"
import { convertSchemas, DEFAULT_CACHE_DIR, grammarOf, LLAMA_RN, obtainConverter } from "./converter.ts"
import { grammarFigures, OLLAMA_GRAMMAR_LIMIT } from "./figures.ts"
import { allLibraries, sentSchemas } from "./sent-schemas.ts"

const HELP = `usage: npm run bench:grammar -- [options]

Converts every JSON Schema smurfs sends to a model server (the agents' and judges' reply formats, the
executor's tool choice and argument formats, ReAct/DFSDT's JSON action and every tool's parameters,
the simulated environment's response, for the demo library and every ToolBench query) with llama.cpp's
json-schema-to-grammar.cpp, the converter Ollama runs on \`format\`. The source comes from the npm
package ${LLAMA_RN.name}@${LLAMA_RN.version} (fetched once with npm pack) and is compiled once with g++.

options:
  --data <dir>       StableToolBench queries (default ${DEFAULT_DATA_DIR})
  --cache <dir>      where the tarball and the compiled converter are kept (default node_modules/.cache/smurfs-grammar)
  --top <n>          how many of the largest grammars to list (default 10)
  --grammar <name>   print the grammar of the schema of this name (as listed) and exit
  --json             print the figures as JSON
  -h, --help         show this help`

const { values } = parseArgs({
  options: {
    data: { type: "string" },
    cache: { type: "string" },
    top: { type: "string" },
    grammar: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" }
  }
})
if (values.help) {
  console.log(HELP)
  process.exit(0)
}

const fail = (message: string, code: number) => {
  process.stderr.write(`bench:grammar: ${message}\n`)
  process.exit(code)
}

const data = resolve(values.data ?? DEFAULT_DATA_DIR)
if (!existsSync(join(data, "queries")))
  fail(
    `no ToolBench queries at ${data} (its queries/ folder holds G1_instruction.json ...). Pass --data <dir> with the StableToolBench data, see docs/benchmark.md ("Data").`,
    2
  )
const top = Number(values.top ?? 10)
if (!Number.isInteger(top) || top < 1) fail(`--top takes a whole number of at least 1, got "${values.top}"`, 2)

const program = Effect.gen(function* () {
  const started = performance.now()
  const binary = yield* obtainConverter(values.cache ? resolve(values.cache) : DEFAULT_CACHE_DIR)
  const readyMs = performance.now() - started
  const sent = sentSchemas(allLibraries(data))
  if (values.grammar !== undefined) {
    const wanted = sent.find((s) => s.name === values.grammar)
    if (!wanted)
      return fail(
        `no schema named "${values.grammar}"; the names are those bench:grammar lists (e.g. "Plan", "args of <tool>", "tool <tool>")`,
        2
      )
    process.stdout.write(yield* grammarOf(binary, wanted.schema))
    return
  }
  // The same schema is sent for the same tool in many queries: each distinct text is converted once.
  const texts = [...new Set(sent.map((s) => JSON.stringify(s.schema)))]
  const converted = yield* convertSchemas(
    binary,
    texts.map((t) => JSON.parse(t) as unknown)
  )
  const byText = new Map(texts.map((t, i) => [t, converted[i]!]))
  const figures = grammarFigures(
    sent.map((s) => ({ ...s, result: byText.get(JSON.stringify(s.schema))! })),
    top
  )
  const totalMs = performance.now() - started
  if (values.json)
    console.log(
      JSON.stringify(
        {
          converter: `${LLAMA_RN.name}@${LLAMA_RN.version}`,
          distinct: texts.length,
          readyMs: Math.round(readyMs),
          totalMs: Math.round(totalMs),
          ...figures
        },
        null,
        2
      )
    )
  else {
    const kb = (n: number) => `${n.toLocaleString("en-US")} B`
    const lines = [
      `llama.cpp json-schema-to-grammar.cpp from ${LLAMA_RN.name}@${LLAMA_RN.version}; converter ready in ${(readyMs / 1000).toFixed(1)} s, all converted in ${(totalMs / 1000).toFixed(1)} s`,
      `schemas sent: ${figures.count} (${texts.length} distinct): ${figures.format.count} as format, ${figures.tool.count} as tool parameters`,
      `converted: ${figures.count - figures.failed.length}, failed: ${figures.failed.length}`,
      `grammar bytes, format schemas (Ollama's \`format\`): median ${kb(figures.format.median)}, largest ${kb(figures.format.largest)}`,
      `grammar bytes, tool parameters (llama-server's tool-call grammar): median ${kb(figures.tool.median)}, largest ${kb(figures.tool.largest)}`,
      `Ollama's limit: ${kb(OLLAMA_GRAMMAR_LIMIT)} (a ${kb(OLLAMA_GRAMMAR_LIMIT + 1)} buffer; a longer grammar is cut short)`,
      `over the limit: ${figures.over.length === 0 ? "none" : figures.over.map((o) => `${o.name} (${kb(o.bytes)})`).join(", ")}`,
      "",
      `largest ${figures.largest.length} grammars:`,
      ...figures.largest.map(
        (l) =>
          `  ${kb(l.bytes).padStart(10)}  ${String(l.rules).padStart(4)} rules  ${l.sentAs.padEnd(6)}  ${l.name}${l.alsoAs > 0 ? ` (and ${l.alsoAs} more schemas with this text)` : ""}`
      ),
      ...(figures.failed.length > 0
        ? ["", "failed to convert:", ...figures.failed.map((f) => `  ${f.name}: ${f.error.split("\n").join(" ")}`)]
        : [])
    ]
    console.log(lines.join("\n"))
  }
  if (figures.failed.length > 0 || figures.over.length > 0) process.exitCode = 1
})

Effect.runPromise(
  program.pipe(
    Effect.catchTags({
      ConverterUnavailable: (e) => Effect.sync(() => fail(e.message, 2)),
      ConverterFailed: (e) => Effect.sync(() => fail(e.message, 1))
    })
  )
).catch((e: unknown) => fail(String(e instanceof Error ? e.stack : e), 1))
