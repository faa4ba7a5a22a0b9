// Issue 32 §10: under `reference` the tool simulator is asked as StableToolBench's servers ask it, read from the request
// bodies a fake OpenAI server received, with the stand-in checkout (test/fixtures/stabletoolbench: their layout, our
// texts): main.py's request with `response_format: {"type": "json_object"}` and no seed, the tool's own description
// (its tools folder) filled in; MirrorAPI's request with the standardized tool name, and no cache read or written.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import { runBenchSettings } from "../bench/app.ts"
import { silentProgress } from "../bench/progress.ts"
import { benchSettings } from "../bench/settings.ts"
import { LanguageModel } from "../src/llm/language-model.ts"
import { standaloneModel } from "../src/llm/spec.ts"
import { makeEnvironmentChain } from "../src/tools/environments/chain.ts"
import { simulatorPrompts } from "../src/tools/environments/simulator-prompts.ts"
import { toolbenchLibrary } from "../src/tools/toolbench/adapter.ts"
import { toolsFolder } from "../src/tools/toolbench/tools-folder.ts"
import { MINI_DATA } from "./data.ts"
import { type FakeOpenAI, startFakeOpenAI } from "./fake-servers/openai.ts"

const STB = fileURLToPath(new URL("./fixtures/stabletoolbench", import.meta.url))
const TOOLS = join(STB, "tools")
const scratch = mkdtempSync(join(tmpdir(), "smurfs-simulator-reference-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

let server: FakeOpenAI
beforeEach(async () => {
  server = await startFakeOpenAI(() => '{"error": "", "response": "Sunny, 21 degrees"}')
})
afterEach(() => server.close())

/** The model under test: the simulator is a model apart from it, so any request reaching it fails the test. */
const modelUnderTest = LanguageModel.of({
  info: { spec: "test:under-test", provider: "test", model: "under-test", contextTokens: 4096, supportsTools: false },
  generate: (request) => Effect.die(new Error(`the model under test was asked (${request.role})`))
})

const doc = {
  category_name: "Weather",
  tool_name: "Meteo Now",
  api_name: "Current Weather",
  api_description: "The weather in a city right now.",
  required_parameters: [{ name: "city", type: "STRING", description: "The city.", default: "Paris" }],
  optional_parameters: []
}

/** Call the tool twice with the same arguments through replay,simulated; the bodies the simulator's server received. */
const simulate = async (name: string, style: "gpt" | "mirrorapi", reference: boolean) => {
  const saved = process.env["OPENAI_BASE_URL"]
  process.env["OPENAI_BASE_URL"] = server.baseURL
  try {
    const cache = join(scratch, name, "tool_response_cache")
    const results = await Effect.runPromise(
      Effect.gen(function* () {
        const simulator = yield* standaloneModel("openai:qwen2.5:7b")
        const env = yield* makeEnvironmentChain(["replay", "simulated"], {
          storeDir: join(scratch, name, "store"),
          writeCacheDir: cache,
          simulator,
          simulatorPrompts: simulatorPrompts(STB, style, reference)
        })
        const tool = toolbenchLibrary("t", [doc], env, { toolsFolder: toolsFolder(TOOLS) }).tools[0]!
        return [yield* tool.call({ city: "Lyon" }), yield* tool.call({ city: "Lyon" })]
      }).pipe(Effect.provideService(LanguageModel, modelUnderTest))
    )
    return { results, bodies: server.chatRequests(), cached: existsSync(cache) ? readdirSync(cache) : [] }
  } finally {
    if (saved === undefined) delete process.env["OPENAI_BASE_URL"]
    else process.env["OPENAI_BASE_URL"] = saved
  }
}

describe("the simulator under reference (issue 32 §10)", () => {
  it("main.py's request: a JSON object asked for, no seed, their temperature and max_tokens, the tool's own description", async () => {
    const { results, bodies } = await simulate("gpt-reference", "gpt", true)
    expect(results.map((r) => r.content)).toEqual(["Sunny, 21 degrees", "Sunny, 21 degrees"])
    // the second call is replayed from what the first stored (their main.py caches)
    expect(bodies).toHaveLength(1)
    const body = bodies[0]!
    expect(body.response_format).toEqual({ type: "json_object" })
    expect("seed" in body).toBe(false)
    expect(body).toMatchObject({ temperature: 0.25, max_tokens: 1024 })
    expect(body.messages[1].content).toBe(
      "DOC:{'tool_description': 'Current weather and forecasts for any city,\\nupdated every hour.', " +
        "'api_info': [{'name': 'Current Weather', 'description': 'The weather in a city right now.'}]}\n" +
        "EXAMPLES:[]\nINPUT:{'city': 'Lyon'}\n"
    )
  })

  it("improved keeps its JSON Schema and seed with the same checkout", async () => {
    const { bodies } = await simulate("gpt-improved", "gpt", false)
    expect(bodies[0]!.response_format.type).toBe("json_schema")
    expect(bodies[0]!.seed).toBe(42)
  })

  it("MirrorAPI: the standardized tool name, no format, seed 42, and no cache read or written", async () => {
    const { results, bodies, cached } = await simulate("mirror-reference", "mirrorapi", true)
    expect(results.map((r) => r.content)).toEqual(["Sunny, 21 degrees", "Sunny, 21 degrees"])
    // both calls asked: nothing was cached between them, and nothing was written
    expect(bodies).toHaveLength(2)
    expect(cached).toEqual([])
    const body = bodies[0]!
    expect("response_format" in body).toBe(false)
    expect(body).toMatchObject({ seed: 42, temperature: 0.15, max_tokens: 2048 })
    expect(body.messages[1].content).toContain("'tool_name': 'meteo_now', 'tool_category': 'Weather'")
    expect(body.messages[1].content).toContain(
      "'tool_description': 'Current weather and forecasts for any city,\\nupdated every hour.'"
    )
  })

  it("a reference bench run asks its simulator so, and describes the tool from --stb-tools", async () => {
    await server.close()
    // one server for the model under test (JSON mode: it calls an API with arguments nothing recorded, then answers) and
    // for the simulator, told apart by the stand-in server prompt
    server = await startFakeOpenAI((body) => {
      if (String(body.messages[0].content).includes("STAND-IN SIMULATOR"))
        return '{"error": "", "response": "Messi: Inter Miami"}'
      const observed = body.messages.some((m: { content: string }) => String(m.content).includes("Inter Miami"))
      return JSON.stringify(
        observed
          ? { thought: "", action: "Finish", action_input: { return_type: "give_answer", final_answer: "Inter Miami" } }
          : { thought: "", action: "transfermarkt_search_for_theclique", action_input: { name: "zzz unrecorded" } }
      )
    })
    const saved = process.env["OPENAI_BASE_URL"]
    process.env["OPENAI_BASE_URL"] = server.baseURL
    try {
      const out = join(scratch, "bench-reference")
      const outcome = await Effect.runPromise(
        runBenchSettings(
          benchSettings({
            out,
            data: MINI_DATA.path,
            model: "openai:qwen2.5:7b",
            simulator: "openai:qwen2.5:7b",
            groups: ["G1_instruction"],
            ids: ["588"],
            methods: ["react"],
            toolCalling: "json",
            profile: "reference",
            stb: STB,
            stbTools: TOOLS
          }),
          silentProgress
        )
      )
      expect(outcome.kind).toBe("ran")
      const simulated = server
        .chatRequests()
        .filter((b) => String(b.messages[0].content).includes("STAND-IN SIMULATOR"))
      expect(simulated).toHaveLength(1)
      expect(simulated[0]!.response_format).toEqual({ type: "json_object" })
      expect("seed" in simulated[0]!).toBe(false)
      expect(simulated[0]!.messages[1].content).toContain(
        "'tool_description': 'STAND-IN TOOL TEXT: one service for concert listings, artist pages and football transfer records.'"
      )
    } finally {
      if (saved === undefined) delete process.env["OPENAI_BASE_URL"]
      else process.env["OPENAI_BASE_URL"] = saved
    }
  })

  it("MirrorAPI under reference answers every call itself by default: no replay before it", () => {
    const settings = (profile: "reference" | "improved") =>
      benchSettings({
        out: scratch,
        data: scratch,
        simulator: "openai:sim",
        simulatorStyle: "mirrorapi",
        stb: STB,
        profile
      })
    expect(settings("reference").envs).toEqual(["simulated"])
    expect(settings("improved").envs).toEqual(["replay", "simulated"])
  })
})
