import { mkdtempSync, readdirSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { startFakeOllama } from "../../../test/fake-servers/ollama.ts"
import { startFakeOpenAI } from "../../../test/fake-servers/openai.ts"
import { makeScriptedModel } from "../../llm/scripted.ts"
import { isKind, kindOf } from "../../trace/events.ts"
import { recording } from "../../trace/trajectory.ts"
import { defineTool } from "../define-tool.ts"
import { demoLibrary } from "../demo/index.ts"
import { makeOfflineEnvironment } from "../environments/offline.ts"
import { makeToolLibrary } from "../library.ts"
import { toolbenchLibrary } from "../toolbench/adapter.ts"
import { makeEmbedder } from "./embedder.ts"
import { reciprocalRankFusion } from "./fusion.ts"
import { makeRetriever, narrowLibrary, rankTools } from "./retriever.ts"
import { processTerm, tokenize } from "./tokens.ts"

const tool = (name: string, description: string, params: Record<string, string> = {}) =>
  defineTool({
    name,
    description,
    parameters: z.object(Object.fromEntries(Object.entries(params).map(([k, d]) => [k, z.string().describe(d)]))),
    execute: () => "ok"
  })

const library = makeToolLibrary("mixed", [
  tool("get_weather", "Current weather and temperature for a city.", { city: "the city name" }),
  tool("search_flights", "Find flights between two airports on a date.", {
    origin: "IATA code of the departure airport",
    destination: "IATA code"
  }),
  tool("translate_text", "Translate a text into another language.", {
    text: "what to translate",
    target: "language code"
  }),
  tool("stock_quote", "Latest share price of a company by ticker symbol.", { symbol: "the ticker" }),
  tool("convert_currency_rates", "Exchange rates between currencies.", { base: "base currency" })
])

const servers: Array<{ close: () => Promise<void> }> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const names = (ranked: ReadonlyArray<{ name: string }>) => ranked.map((r) => r.name)

describe("tokens", () => {
  it("splits identifiers, drops stop words and folds plurals", () => {
    expect(tokenize("getWeatherForecast_v2 by-city")).toEqual(["get", "Weather", "Forecast", "v", "2", "by", "city"])
    expect(["Concerts", "categories", "news", "the", "I", "address"].map(processTerm)).toEqual([
      "concert",
      "category",
      "news",
      null,
      null,
      "address"
    ])
  })
})

describe("lexical retriever", () => {
  it("ranks by name, description and parameter docs", async () => {
    const retriever = await Effect.runPromise(makeRetriever(library))
    expect(retriever.mode).toBe("lexical")
    expect(names(await Effect.runPromise(retriever.search("What's the temperature in Oslo today?", 2)))[0]).toBe(
      "get_weather"
    )
    expect(names(await Effect.runPromise(retriever.search("flights from the departure airport CDG", 1)))).toEqual([
      "search_flights"
    ])
    expect(names(await Effect.runPromise(retriever.search("share price of ACME by ticker", 1)))).toEqual([
      "stock_quote"
    ])
    expect(await Effect.runPromise(retriever.search("zzzz qqqq", 3))).toEqual([])
  })

  it("uses a ToolBench API's own name, tool and description", async () => {
    const docs = [
      {
        category_name: "Music",
        tool_name: "TheClique",
        api_name: "Songkick concert",
        api_description: "Concert info",
        required_parameters: [],
        optional_parameters: []
      },
      {
        category_name: "Sports",
        tool_name: "Football Data",
        api_name: "League standings",
        api_description: "Table of a league",
        required_parameters: [],
        optional_parameters: []
      }
    ]
    const toolbench = toolbenchLibrary("tb", docs, makeOfflineEnvironment("error"))
    const retriever = await Effect.runPromise(makeRetriever(toolbench))
    expect(names(await Effect.runPromise(retriever.search("Which concerts does TheClique list?", 1)))).toEqual([
      "songkick_concert_for_theclique"
    ])
    expect(names(await Effect.runPromise(retriever.search("show me the football league standings", 1)))).toEqual([
      "league_standings_for_football_data"
    ])
  })
})

describe("fusion", () => {
  it("reciprocal rank fusion rewards items high in several lists", () => {
    const fused = reciprocalRankFusion([
      [
        { name: "a", score: 9 },
        { name: "b", score: 5 },
        { name: "c", score: 1 }
      ],
      [
        { name: "d", score: 0.9 },
        { name: "b", score: 0.8 }
      ]
    ])
    expect(names(fused)).toEqual(["b", "a", "d", "c"])
    expect(fused[0]!.score).toBeCloseTo(1 / 62 + 1 / 62)
    expect(
      names(reciprocalRankFusion([names(fused).map((name) => ({ name, score: 0 })), [{ name: "a", score: 1 }]]))[0]
    ).toBe("a")
  })
})

describe("hybrid retriever (fake embedding servers)", () => {
  it("embeds through Ollama's /api/embed, fuses with BM25+, and caches the library's vectors by content hash", async () => {
    const ollama = await startFakeOllama({ models: [{ name: "nomic-embed-text" }] })
    servers.push(ollama)
    const embedder = await Effect.runPromise(makeEmbedder("ollama:nomic-embed-text", { host: ollama.url }))
    const cache = mkdtempSync(join(tmpdir(), "smurfs-embed-"))
    const retriever = await Effect.runPromise(makeRetriever(library, { embedder, embeddingCache: cache }))
    expect(retriever.mode).toBe("hybrid")
    expect(names(await Effect.runPromise(retriever.search("temperature of a city", 1)))).toEqual(["get_weather"])
    const embeds = () => ollama.requests.filter((r) => r.path === "/api/embed")
    // one batch for the documents (with nomic's task prefix), one for the query
    expect(embeds()).toHaveLength(2)
    expect(embeds()[0]!.body.input[0]).toMatch(/^search_document: get_weather/)
    expect(embeds()[1]!.body.input).toEqual(["search_query: temperature of a city"])
    expect(readdirSync(cache)).toHaveLength(1)
    // a second start reads the vectors back: only the query is embedded
    const again = await Effect.runPromise(makeRetriever(library, { embedder, embeddingCache: cache }))
    await Effect.runPromise(again.search("temperature of a city", 1))
    expect(embeds()).toHaveLength(3)
    // a damaged cache file is embedded again, never an error
    writeFileSync(join(cache, readdirSync(cache)[0]!), "{ damaged")
    await Effect.runPromise(makeRetriever(library, { embedder, embeddingCache: cache }))
    expect(embeds()).toHaveLength(4)
  })

  it("embeds through an OpenAI-compatible /v1/embeddings", async () => {
    const openai = await startFakeOpenAI({ models: ["text-embedding-3-small"] })
    servers.push(openai)
    const embedder = await Effect.runPromise(
      makeEmbedder("openai:text-embedding-3-small", { baseURL: openai.baseURL, apiKey: "test" })
    )
    const retriever = await Effect.runPromise(makeRetriever(library, { embedder }))
    expect(names(await Effect.runPromise(retriever.search("translate this text into German", 1)))).toEqual([
      "translate_text"
    ])
    expect(openai.requests.filter((r) => r.path === "/v1/embeddings").map((r) => r.body.encoding_format)).toEqual([
      "float",
      "float"
    ])
  })

  it("says what to do with a bad --embed spec or a missing embedding model", async () => {
    const bad = await Effect.runPromise(Effect.flip(makeEmbedder("nomic-embed-text")))
    expect(bad.message).toContain("ollama:<model>")
    const ollama = await startFakeOllama({ models: [{ name: "qwen2.5:7b" }] })
    servers.push(ollama)
    const embedder = await Effect.runPromise(makeEmbedder("ollama:nomic-embed-text", { host: ollama.url }))
    const missing = await Effect.runPromise(Effect.flip(makeRetriever(library, { embedder })))
    expect(missing._tag).toBe("ModelNotFound")
    expect(missing.message).toContain("ollama pull nomic-embed-text")
  })

  it("words a missing model of an OpenAI-compatible server as the chat providers do (its client loaded on the first embedding)", async () => {
    const openai = await startFakeOpenAI({ models: ["qwen2.5:7b"] })
    servers.push(openai)
    const embedder = await Effect.runPromise(
      makeEmbedder("openai:text-embedding-3-small", { baseURL: openai.baseURL, apiKey: "test" })
    )
    const missing = await Effect.runPromise(Effect.flip(makeRetriever(library, { embedder })))
    expect(missing._tag).toBe("ModelNotFound")
    expect(missing.message).toContain("text-embedding-3-small")
  })

  it("fails an Ollama embedding the server never answers with Timeout at its own deadline", async () => {
    // the fake servers' hang fault is for chat; /api/embed needs a server of its own that never answers
    const hanging = createServer(() => {})
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve))
    try {
      const host = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`
      const embedder = await Effect.runPromise(makeEmbedder("ollama:nomic-embed-text", { host, timeoutMs: 200 }))
      const started = performance.now()
      const error = await Effect.runPromise(Effect.flip(embedder.embedQuery("temperature in Paris")))
      expect(error).toMatchObject({ _tag: "Timeout", ms: 200, role: "embed" })
      expect(performance.now() - started).toBeLessThan(5000)
    } finally {
      hanging.closeAllConnections()
      hanging.close()
    }
  })

  it("narrowLibrary records the set, and falls back to the lexical ranking when the embedding server is gone", async () => {
    const ollama = await startFakeOllama({ models: [{ name: "nomic-embed-text" }] })
    const embedder = await Effect.runPromise(
      makeEmbedder("ollama:nomic-embed-text", { host: ollama.url, timeoutMs: 2000 })
    )
    const retriever = await Effect.runPromise(makeRetriever(library, { embedder }))
    await ollama.close()
    const { value, events } = await Effect.runPromise(
      recording("t1", narrowLibrary(retriever, "temperature in Paris", 2, "subtask"))
    )
    expect(value.tools.map((t) => t.name)[0]).toBe("get_weather")
    expect(events.map(kindOf)).toEqual(["error", "retrieval"])
    expect(events[0]!.data.error).toContain("lexical ranking was used instead")
    expect(events[1]!.data).toMatchObject({
      scope: "subtask",
      query: "temperature in Paris",
      k: 2,
      mode: "hybrid",
      tools: [{ name: "get_weather" }]
    })
  })
})

describe("a retrieval that finds no tool", () => {
  // no word of it is in any tool's document
  const nothing = "Will the xylophone quokka zigzag?"

  it("offers the whole library when it fits, and says so", async () => {
    const retriever = await Effect.runPromise(makeRetriever(library))
    expect(retriever.lexical(nothing, 2)).toEqual([])
    const { value, events } = await Effect.runPromise(recording("t1", narrowLibrary(retriever, nothing, 2, "subtask")))
    expect(value.tools.map((t) => t.name)).toEqual(library.tools.map((t) => t.name))
    expect(events.map(kindOf)).toEqual(["error", "retrieval"])
    expect(events[0]!.data).toMatchObject({ role: "retrieval", tag: "NoToolRetrieved" })
    expect(events[0]!.data.error).toContain(`lexical retrieval found no tool for "${nothing}"`)
    expect(events[0]!.data.error).toContain("the whole library (5 tools")
    expect(events[1]!.data.tools).toHaveLength(5)
  })

  it("says so and what to do when the library is too large to offer whole and there is no embedding model", async () => {
    const retriever = await Effect.runPromise(makeRetriever(library, { wholeLibraryTokens: 10 }))
    const warnings: Array<string> = []
    const { value, events } = await Effect.runPromise(
      recording(
        "t1",
        rankTools(retriever, nothing, 2, (text) => warnings.push(text))
      )
    )
    expect(value).toEqual([])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain("too large to offer whole")
    expect(warnings[0]).toContain("--embed <spec>")
    expect(events.map(kindOf)).toEqual(["error"])
    expect(events[0]!.data.error).toBe(warnings[0])
  })

  it("ranks by the embeddings alone when lexical retrieval finds nothing in a large library", async () => {
    const ollama = await startFakeOllama({ models: [{ name: "nomic-embed-text" }] })
    servers.push(ollama)
    const embedder = await Effect.runPromise(makeEmbedder("ollama:nomic-embed-text", { host: ollama.url }))
    const retriever = await Effect.runPromise(makeRetriever(library, { embedder, wholeLibraryTokens: 10 }))
    // what a hybrid search gives when its embedding call failed: the lexical ranking, here empty
    const lexicalOnly = {
      ...retriever,
      search: (query: string, k: number) => Effect.succeed(retriever.lexical(query, k))
    }
    const warnings: Array<string> = []
    const ranked = await Effect.runPromise(rankTools(lexicalOnly, nothing, 2, (text) => warnings.push(text)))
    expect(ranked).toHaveLength(2)
    expect(warnings[0]).toContain("the embedding ranking alone is used instead")
  })
})

describe("LLM re-ranker", () => {
  it("orders the candidates as the model says, reflects unknown names, and keeps k full", async () => {
    const demo = demoLibrary()
    const model = makeScriptedModel({
      rerank: [{ tools: ["no_such_tool"] }, { tools: ["convert_units", "calculator"] }]
    })
    const retriever = await Effect.runPromise(makeRetriever(demo, { reranker: model, rerankDepth: 5 }))
    expect(retriever.mode).toBe("lexical+rerank")
    const { value, events } = await Effect.runPromise(
      recording("t2", retriever.search("convert 8849 metres to feet in units, then compute 12% with the calculator", 3))
    )
    expect(names(value).slice(0, 2)).toEqual(["convert_units", "calculator"])
    expect(value).toHaveLength(3)
    const guardrail = events.find((e) => isKind(e, "guardrail"))
    expect(guardrail?.data).toMatchObject({ guardrail: "unknown_tool", role: "rerank", recovered: true })
    expect(String(guardrail?.data.error)).toContain("Valid names:")
  })
})
