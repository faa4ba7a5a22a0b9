// The simulated tool server as StableToolBench runs it: their prompts from a checkout, a simulator apart from
// the model under test, their cache layout shared by runs and processes.
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { lacks, STB_CHECKOUT, skipNote } from "../../../test/data.ts"
import { type GenerateRequest, LanguageModel, type LanguageModelShape } from "../../llm/language-model.ts"
import { makeScriptedModel } from "../../llm/scripted.ts"
import { STB_FILES } from "../../text/stabletoolbench-files.ts"
import { ApiDoc } from "../toolbench/api-doc.ts"
import { cacheFilePath } from "./cache-store.ts"
import { makeEnvironmentChain } from "./chain.ts"
import type { ToolCall } from "./environment.ts"
import { mirrorApiSimulatorPrompts, stabletoolbenchSimulatorPrompts } from "./simulator-prompts.ts"

const STB = STB_CHECKOUT.path
const stbText = (file: string) => readFileSync(join(STB, file), "utf8")

const doc = ApiDoc.parse({
  category_name: "Data",
  tool_name: "Keyword Analysis",
  api_name: "PopularSitesForQuery",
  api_description: "Get the popular sites for a given search query.",
  required_parameters: [{ name: "q", type: "STRING", description: "The query", default: "taylor swift" }]
})
const call = (args: Record<string, unknown>): ToolCall => ({
  doc,
  stdTool: "keyword_analysis",
  stdApi: "popularsitesforquery",
  args
})

/** A simulator that records what it is sent and answers from a list. */
const recordingSimulator = (replies: ReadonlyArray<object>) => {
  const seen: Array<GenerateRequest> = []
  const model = makeScriptedModel(
    { "tool.simulate": replies.map((reply) => (request: GenerateRequest) => (seen.push(request), reply)) },
    "simulator"
  )
  return { seen, model }
}

/** The model under test: any request reaching it fails the test. */
const modelUnderTest = Layer.succeed(
  LanguageModel,
  LanguageModel.of({
    info: { spec: "test:under-test", provider: "test", model: "under-test", contextTokens: 4096, supportsTools: false },
    generate: (request) => Effect.die(new Error(`the model under test was asked (${request.role})`))
  })
)

const chain = (writeCacheDir: string, simulator: LanguageModelShape, prompts = stabletoolbenchSimulatorPrompts(STB)) =>
  Effect.runPromise(
    makeEnvironmentChain(["replay", "simulated"], { writeCacheDir, simulator, simulatorPrompts: prompts }).pipe(
      Effect.provide(modelUnderTest)
    )
  )

/** The first line of a message that is long enough to say where it came from. */
const aLine = (text: string) =>
  text
    .split("\n")
    .find((l) => l.trim().length > 60)!
    .trim()

describe.skipIf(lacks(STB_CHECKOUT))(
  `the simulator with StableToolBench's server prompts (--stb)${skipNote(STB_CHECKOUT)}`,
  () => {
    it("sends server/main.py's prompt to the simulator (not the model under test), stores the response in their cache layout and replays it", async () => {
      const cache = join(mkdtempSync(join(tmpdir(), "smurfs-stbcache-")), "tool_response_cache")
      const sim = recordingSimulator([{ error: "", response: "lego.com, bricks.com" }])
      const env = await chain(cache, sim.model)
      const first = await Effect.runPromise(env.serve(call({ q: "lego" })))
      expect(first).toMatchObject({ ok: true, content: "lego.com, bricks.com" })
      expect(sim.seen).toHaveLength(1)
      const [system, user] = sim.seen[0]!.messages
      // their system prompt, read from the checkout: its lines are main.py's
      expect(system!.role).toBe("system")
      expect(stbText(STB_FILES.serverMain)).toContain(aLine(system!.content))
      // their user prompt: the API doc, the examples and the input as Python reprs
      expect(user!.content).toContain(
        "{'tool_description': '', 'api_info': [{'name': 'PopularSitesForQuery', 'description': 'Get the popular sites for a given search query.'}]}"
      )
      expect(user!.content).toContain("{'q': 'lego'}")
      // sampling from server/config.yml
      expect(sim.seen[0]!.options?.temperature).toBe(
        (parseYaml(stbText(STB_FILES.serverConfig)) as { temperature: number }).temperature
      )

      // their layout and key: <Category>/<tool>_for_<Category>/<api>.json, keyed by str(tool_input)
      const file = join(cache, "Data", "keyword_analysis_for_Data", "popularsitesforquery.json")
      expect(cacheFilePath(cache, "Data", "keyword_analysis", "popularsitesforquery")).toBe(file)
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
        "{'q': 'lego'}": { error: "", response: "lego.com, bricks.com" }
      })

      // the next run replays it without any model call; its examples for a new miss come from the same file
      const next = recordingSimulator([{ error: "", response: "cats.com" }])
      const env2 = await chain(cache, next.model)
      // StableToolBench's cache holds no mark of who wrote a response: a later run counts it replayed
      expect(await Effect.runPromise(env2.serve(call({ q: "lego" })))).toEqual({
        ...first,
        served: { by: "replayed", match: "exact" }
      })
      expect(next.seen).toHaveLength(0)
      await Effect.runPromise(env2.serve(call({ q: "cats" })))
      expect(next.seen[0]!.messages[1]!.content).toContain(
        `[("{'q': 'lego'}", {'error': '', 'response': 'lego.com, bricks.com'})]`
      )
      expect(Object.keys(JSON.parse(readFileSync(file, "utf8")))).toEqual(["{'q': 'lego'}", "{'q': 'cats'}"])
    })

    it("MirrorAPI style sends system_prompts.py's SFT_SYSTEM and main_mirrorapi_cache.py's user prompt, at its config's temperature", async () => {
      const cache = mkdtempSync(join(tmpdir(), "smurfs-mirror-"))
      const sim = recordingSimulator([{ mechanism_of_the_api: "looks up sites", error: "", response: "lego.com" }])
      const env = await chain(cache, sim.model, mirrorApiSimulatorPrompts(STB))
      expect(await Effect.runPromise(env.serve(call({ q: "lego" })))).toMatchObject({ ok: true, content: "lego.com" })
      const [system, user] = sim.seen[0]!.messages
      expect(stbText(STB_FILES.mirrorSystemPrompts)).toContain(aLine(system!.content))
      // the SFT prompt, not the chain-of-thought one beside it
      expect(stbText(STB_FILES.mirrorSystemPrompts).indexOf(aLine(system!.content))).toBeGreaterThan(
        stbText(STB_FILES.mirrorSystemPrompts).indexOf("SFT_SYSTEM")
      )
      expect(user!.content).toContain("'api_name': 'popularsitesforquery'")
      expect(user!.content).toContain("'tool_category': 'Data'")
      expect(user!.content.trimEnd().endsWith("{'q': 'lego'}")).toBe(true)
      expect(sim.seen[0]!.options).toMatchObject({
        temperature: (parseYaml(stbText(STB_FILES.mirrorConfig)) as { temperature: number }).temperature,
        seed: 42
      })
    })
  }
)

describe("a cache folder shared by concurrent writers", () => {
  it("loses no entry when two processes add to the same API file at once", async () => {
    const cache = mkdtempSync(join(tmpdir(), "smurfs-cache-race-"))
    const file = cacheFilePath(cache, "Data", "keyword_analysis", "popularsitesforquery")
    const moduleUrl = new URL("./cache-store.ts", import.meta.url).href
    const writer = (name: string) =>
      new Promise<number>((resolve, reject) => {
        const code = `const { addCacheEntry } = await import(${JSON.stringify(moduleUrl)}); for (let i = 0; i < 60; i++) await addCacheEntry(${JSON.stringify(file)}, "{'q': '${name}-" + i + "'}", { error: "", response: "${name}" + i })`
        const child = spawn(process.execPath, ["--input-type=module", "-e", code], {
          stdio: ["ignore", "ignore", "pipe"]
        })
        let err = ""
        child.stderr.on("data", (d) => (err += String(d)))
        child.on("error", reject)
        child.on("exit", (status) =>
          status === 0 ? resolve(status) : reject(new Error(`writer ${name} exited ${status}: ${err}`))
        )
      })
    await Promise.all([writer("a"), writer("b")])
    const entries = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>
    expect(Object.keys(entries)).toHaveLength(120)
    expect(entries["{'q': 'a-59'}"]).toEqual({ error: "", response: "a59" })
    expect(entries["{'q': 'b-0'}"]).toEqual({ error: "", response: "b0" })
    expect(existsSync(`${file}.lock`)).toBe(false)
  }, 60_000)

  it("refuses a cache path that would leave the folder (names come from data)", () => {
    expect(() => cacheFilePath("/tmp/cache", "..", "x", "y")).toThrow(/would leave/)
    expect(cacheFilePath("/tmp/cache", "Business Software", "x", "y")).toBe(
      join("/tmp/cache", "Business_Software", "x_for_Business_Software", "y.json")
    )
  })
})
