import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { type GenerateRequest, LanguageModel } from "../../llm/language-model.ts"
import { scriptedLayer } from "../../llm/scripted.ts"
import { ApiDoc } from "../toolbench/api-doc.ts"
import { PythonNumber } from "./canonical.ts"
import { makeEnvironmentChain } from "./chain.ts"
import type { ToolCall } from "./environment.ts"
import { makeReplayIndex } from "./recorded.ts"
import { loadResponsesJsonl, makeReplayEnvironment } from "./replay.ts"
import { makeSimulatedEnvironment, SIMULATED_STORE_FILE } from "./simulated.ts"

const doc = ApiDoc.parse({
  category_name: "Data",
  tool_name: "Keyword Analysis",
  api_name: "PopularSitesForQuery",
  api_description: "Get the popular sites for a given search query.",
  required_parameters: [{ name: "q", type: "STRING", description: "The query", default: "taylor swift" }],
  template_response: { name: "str", score: "float" }
})
const call = (args: Record<string, unknown>): ToolCall => ({
  doc,
  stdTool: "keyword_analysis",
  stdApi: "popularsitesforquery",
  args
})

describe("simulated environment", () => {
  it("asks the model on a miss, stores the response, and replays it without a second model call", async () => {
    const storeDir = mkdtempSync(join(tmpdir(), "smurfs-sim-"))
    const requests: GenerateRequest[] = []
    const layer = scriptedLayer({
      "tool.simulate": [
        (request) => {
          requests.push(request)
          return { error: "", response: { sites: [{ name: "lego.com", score: 0.5 }] } }
        }
      ]
    })
    const index = makeReplayIndex()
    index.add({
      tool: "keyword_analysis",
      api: "popularsitesforquery",
      args: '{"q":"cats"}',
      response: '{"error": "", "response": "cats.com"}'
    })
    const env = await Effect.runPromise(makeSimulatedEnvironment({ index, storeDir }).pipe(Effect.provide(layer)))

    const first = await Effect.runPromise(env.serve(call({ q: "lego" })))
    expect(first).toEqual({
      ok: true,
      content: '{"sites":[{"name":"lego.com","score":0.5}]}',
      structured: { sites: [{ name: "lego.com", score: new PythonNumber("0.5") }] },
      served: { by: "simulated", simulator: "scripted:scripted · smurfs" }
    })
    expect(env.generated()).toBe(1)

    // the prompt carries the doc, the template, the recorded example and the input, at temperature 0
    const request = requests[0]!
    const prompt = request.messages.map((m) => m.content).join("\n")
    expect(prompt).toContain("Get the popular sites for a given search query.")
    expect(prompt).toContain('{"name":"str","score":"float"}')
    expect(prompt).toContain('{"q":"cats"} -> {"error": "", "response": "cats.com"}')
    expect(prompt).toContain('{"q":"lego"}')
    expect(request.options?.temperature).toBe(0)
    expect(request.format).toBeDefined()

    // the same call again (another spelling) is answered from the index: the script has no second reply
    const again = await Effect.runPromise(env.serve(call({ q: "lego" })))
    // the same response, now served from the index as the stored simulation it is
    expect(again).toEqual({ ...first, served: { by: "simulated", match: "exact" } })
    expect(env.generated()).toBe(1)

    // the store is in responses.jsonl format, so that the next run's replay environment answers
    const storeFile = join(storeDir, SIMULATED_STORE_FILE)
    expect(existsSync(storeFile)).toBe(true)
    const line = JSON.parse(readFileSync(storeFile, "utf8").trim())
    expect(line).toMatchObject({
      tool: "keyword_analysis",
      api: "popularsitesforquery",
      args: '{"q":"lego"}',
      cls: "simulated"
    })
    const nextRun = makeReplayIndex()
    await Effect.runPromise(loadResponsesJsonl(nextRun, storeFile))
    expect(await Effect.runPromise(makeReplayEnvironment(nextRun).serve(call({ q: "lego" })))).toEqual({
      ...first,
      served: { by: "simulated", match: "exact" }
    })
  })

  it("turns a model failure into an ok:false result that is not stored", async () => {
    const storeDir = mkdtempSync(join(tmpdir(), "smurfs-sim-"))
    const layer = scriptedLayer({ "tool.simulate": ["not json", "still not", "never"] })
    const env = await Effect.runPromise(
      makeSimulatedEnvironment({ index: makeReplayIndex(), storeDir }).pipe(Effect.provide(layer))
    )
    const result = await Effect.runPromise(env.serve(call({ q: "x" })))
    expect(result?.ok).toBe(false)
    expect(result?.error).toContain("the simulated environment could not produce a response")
    expect(existsSync(join(storeDir, SIMULATED_STORE_FILE))).toBe(false)
  })

  it("makes one model call for concurrent identical misses", async () => {
    let calls = 0
    const slowModel = Layer.succeed(
      LanguageModel,
      LanguageModel.of({
        info: { spec: "test:slow", provider: "test", model: "slow", contextTokens: 4096, supportsTools: false },
        generate: () =>
          Effect.sync(() => calls++).pipe(
            Effect.andThen(Effect.sleep(5)),
            Effect.as({
              text: '{"error": "", "response": "shared"}',
              usage: { promptTokens: 1, completionTokens: 1 },
              model: "slow",
              durationMs: 5
            })
          )
      })
    )
    const env = await Effect.runPromise(
      makeSimulatedEnvironment({ index: makeReplayIndex() }).pipe(Effect.provide(slowModel))
    )
    const results = await Effect.runPromise(
      Effect.all([env.serve(call({ q: "same" })), env.serve(call({ q: "same" })), env.serve(call({ q: "other" }))], {
        concurrency: "unbounded"
      })
    )
    expect(results.map((r) => r?.content)).toEqual(["shared", "shared", "shared"])
    expect(calls).toBe(2)
    expect(env.generated()).toBe(2)
  })
})

describe("the simulated store after a kill in the middle of a write", () => {
  it("loads what it can, skips the torn line, and the next write starts a fresh line", async () => {
    const storeDir = mkdtempSync(join(tmpdir(), "smurfs-sim-torn-"))
    const storeFile = join(storeDir, SIMULATED_STORE_FILE)
    const good = {
      tool: "keyword_analysis",
      api: "popularsitesforquery",
      args: '{"q":"cats"}',
      response: '{"error": "", "response": "cats.com"}',
      cls: "simulated"
    }
    // a run was killed while appending its second recording: no newline, half a JSON object
    writeFileSync(storeFile, `${JSON.stringify(good)}\n{"tool": "keyword_analysis", "api": "popularsite`)
    const layer = scriptedLayer({
      "tool.simulate": [{ error: "", response: { sites: [{ name: "lego.com", score: 0.5 }] } }]
    })
    const env = await Effect.runPromise(
      makeEnvironmentChain(["replay", "simulated"], { storeDir }).pipe(Effect.provide(layer))
    )
    // the good recording replays (the script has a single reply, kept for the miss below)
    expect(await Effect.runPromise(env.serve(call({ q: "cats" })))).toEqual({
      ok: true,
      content: "cats.com",
      served: { by: "simulated", match: "exact" }
    })
    const lego = await Effect.runPromise(env.serve(call({ q: "lego" })))
    expect(lego?.ok).toBe(true)
    // the new recording is on a line of its own, so the next run replays it
    const lines = readFileSync(storeFile, "utf8").split("\n")
    expect(lines[1]).toBe('{"tool": "keyword_analysis", "api": "popularsite')
    expect(JSON.parse(lines[2]!)).toMatchObject({ args: '{"q":"lego"}' })
    const next = await Effect.runPromise(
      makeEnvironmentChain(["replay"], { storeDir }).pipe(Effect.provide(scriptedLayer({})))
    )
    expect(await Effect.runPromise(next.serve(call({ q: "lego" })))).toEqual({
      ...lego,
      served: { by: "simulated", match: "exact" }
    })
  })
})
