// Every schema smurfs sends, through llama.cpp's own JSON-Schema-to-grammar converter (built from llama.rn's
// copy of its source): each converts, and none comes near Ollama's grammar buffer. Needs g++ and, once, the
// npm registry; without either the tests are skipped with the reason printed.
import { Effect, Result } from "effect"
import { describe, expect, it } from "vitest"
import { argsSchema } from "../../src/agents/guardrails.ts"
import { jsonSchemaOf } from "../../src/llm/structured.ts"
import { toolSpecs } from "../../src/tools/library.ts"
import { FULL_DATA, lacks, skipNote } from "../../test/data.ts"
import { convertSchemas, grammarOf, obtainConverter } from "./converter.ts"
import { grammarFigures, OLLAMA_GRAMMAR_LIMIT } from "./figures.ts"
import { allLibraries, sentSchemas } from "./sent-schemas.ts"

// Obtained once per run: a cold cache fetches llama.rn and compiles (tens of seconds); later runs reuse the binary.
const obtained = await Effect.runPromise(Effect.result(obtainConverter()))
const missing =
  Result.isFailure(obtained) && (obtained.failure.reason === "compiler" || obtained.failure.reason === "registry")
    ? obtained.failure.message
    : undefined
if (missing) console.warn(`instruments/grammar/converter.test.ts skipped: ${missing}`)
const converter = Effect.gen(function* () {
  if (Result.isFailure(obtained)) return yield* Effect.fail(obtained.failure)
  return obtained.success
})

if (missing !== undefined)
  describe("llama.cpp's grammar converter", () => {
    it.skip(`needs g++ and the npm registry once: ${missing}`, () => {})
  })

describe.skipIf(missing !== undefined || lacks(FULL_DATA))(
  `llama.cpp's grammar converter${skipNote(FULL_DATA)}`,
  () => {
    const libraries = lacks(FULL_DATA) ? [] : allLibraries(`${FULL_DATA.path}/`)
    const sent = sentSchemas(libraries)

    it("converts every schema sent to a model, and the largest grammar stays well under Ollama's 32 KB buffer", async () => {
      const texts = [...new Set(sent.map((s) => JSON.stringify(s.schema)))]
      const results = await Effect.runPromise(
        Effect.flatMap(converter, (binary) =>
          convertSchemas(
            binary,
            texts.map((t) => JSON.parse(t) as unknown)
          )
        )
      )
      const byText = new Map(texts.map((t, i) => [t, results[i]!]))
      const figures = grammarFigures(
        sent.map((s) => ({ ...s, result: byText.get(JSON.stringify(s.schema))! })),
        5
      )
      expect(sent.length).toBeGreaterThan(8000)
      expect(figures.failed).toEqual([])
      expect(figures.over).toEqual([])
      // Ollama builds grammars from `format`; llama-server also from tools: both kinds stay under the buffer.
      expect(figures.largest[0]!.bytes).toBeLessThan(OLLAMA_GRAMMAR_LIMIT)
      // "Well under": half the buffer is left for a tool with twice the parameters of ToolBench's largest.
      expect(figures.format.largest).toBeLessThan(OLLAMA_GRAMMAR_LIMIT / 2)
      expect(figures.format.median).toBeGreaterThan(0)
    })

    it("is llama.cpp's converter: it refuses what llama.cpp refuses, and its string helpers (our common.h) build $refs, ranges and enums", async () => {
      const binary = await Effect.runPromise(converter)
      const [unanchored, ok] = await Effect.runPromise(
        convertSchemas(binary, [
          { type: "string", pattern: "abc" },
          { type: "string", pattern: "^abc$" }
        ])
      )
      expect(unanchored).toEqual({ error: expect.stringContaining("Pattern must start with '^' and end with '$'") })
      expect(ok).toMatchObject({ bytes: expect.any(Number) })
      const grammar = await Effect.runPromise(
        grammarOf(binary, {
          type: "object",
          properties: {
            size: { $ref: "#/$defs/size" },
            pick: { enum: ["a", "b"] },
            n: { type: "integer", minimum: 10, maximum: 99 }
          },
          required: ["size", "pick", "n"],
          additionalProperties: false,
          $defs: { size: { type: "string", enum: ["S", "M"] } }
        })
      )
      // llama.cpp's output, rule for rule: "#/$defs/size" split on "/" (string_split), alternatives joined (string_join).
      expect(grammar.split("\n")).toEqual([
        "n ::= (([1-8] [0-9] | [9] [0-9]))",
        'n-kv ::= "\\"n\\"" space ":" space n',
        'pick ::= ("\\"a\\"" | "\\"b\\"")',
        'pick-kv ::= "\\"pick\\"" space ":" space pick',
        'ref-defs-size ::= ("\\"S\\"" | "\\"M\\"")',
        'root ::= "{" space size-kv "," space pick-kv "," space n-kv space "}"',
        "size ::= ref-defs-size",
        'size-kv ::= "\\"size\\"" space ":" space size',
        'space ::= | " " | "\\n"{1,2} [ \\t]{0,20}',
        ""
      ])
      // Digit ranges repeat "0"/"9" (string_repeat): 100..99999 needs them.
      const wide = await Effect.runPromise(grammarOf(binary, { type: "integer", minimum: 100, maximum: 99999 }))
      expect(wide).toBe(
        'root ::= (([1-8] [0-9]{2} | [9] ([0-8] [0-9] | [9] [0-9])) | ([1-8] [0-9]{3} | [9] ([0-8] [0-9]{2} | [9] ([0-8] [0-9] | [9] [0-9]))) | ([1-8] [0-9]{4} | [9] ([0-8] [0-9]{3} | [9] ([0-8] [0-9]{2} | [9] ([0-8] [0-9] | [9] [0-9])))))\nspace ::= | " " | "\\n"{1,2} [ \\t]{0,20}\n'
      )
    })

    it("the executor's argument format is closed to undeclared names: its grammar spells out no 'any other key' rule", async () => {
      const binary = await Effect.runPromise(converter)
      const widest = libraries
        .flatMap((l) => l.tools)
        .reduce((a, b) => (Object.keys(b.parameters.shape).length > Object.keys(a.parameters.shape).length ? b : a))
      const spec = toolSpecs({ name: "one", tools: [widest] })[0]!
      const args = await Effect.runPromise(grammarOf(binary, jsonSchemaOf(argsSchema(widest))))
      const open = await Effect.runPromise(grammarOf(binary, spec.parameters))
      expect(Object.keys(widest.parameters.shape).length).toBeGreaterThan(50)
      expect(open).toContain("additional-k ::=")
      expect(args).not.toContain("additional-k ::=")
      expect(args.length).toBeLessThan(open.length / 2)
    })
  }
)
