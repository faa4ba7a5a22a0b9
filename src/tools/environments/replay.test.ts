import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { FULL_DATA, lacks, skipNote } from "../../../test/data.ts"
import { PythonNumber } from "./canonical.ts"
import type { ToolCall } from "./environment.ts"
import { makeReplayIndex, parseRecordedResponse, type ReplayIndex } from "./recorded.ts"
import { loadCacheDir, loadReplayIndex, loadResponsesJsonl, makeReplayEnvironment } from "./replay.ts"

const RESPONSES = join(FULL_DATA.path, "responses.jsonl")

const call = (stdTool: string, stdApi: string, args: Record<string, unknown>): ToolCall => ({
  doc: {
    category_name: "",
    tool_name: stdTool,
    api_name: stdApi,
    api_description: "",
    required_parameters: [],
    optional_parameters: [],
    method: "GET"
  },
  stdTool,
  stdApi,
  args
})

describe.skipIf(lacks(FULL_DATA))(`replay from responses.jsonl${skipNote(FULL_DATA)}`, () => {
  let index: ReplayIndex
  beforeAll(async () => {
    index = makeReplayIndex()
    const read = await Effect.runPromise(loadResponsesJsonl(index, RESPONSES))
    expect(read).toBe(2705)
  })

  it("hits recorded calls whatever the spelling of the arguments, and counts hits and misses", async () => {
    const env = makeReplayEnvironment(index)
    const hit = await Effect.runPromise(
      env.serve(call("keyword_analysis", "popularsitesforquery", { q: "birthday party ideas" }))
    )
    expect(hit?.ok).toBe(true)
    expect(JSON.parse(hit!.content)[0]).toEqual({ name: "pinterest.com", score: 0.087 })
    const typed = await Effect.runPromise(
      env.serve(
        call("password_generator", "generate_password", {
          uppercase: true,
          numbers: "True",
          lowercase: true,
          length: 15
        })
      )
    )
    expect(typed).toEqual({ ok: true, content: "Z5kC8vQ2yN1sFtG", served: { by: "replayed", match: "exact" } })
    const nested = await Effect.runPromise(
      env.serve(
        call("movie_tv_music_search_and_download", "search_torrents", {
          keywords: ["science fiction", "thriller"],
          quantity: 40
        })
      )
    )
    expect(nested?.content).toMatch(/^Here are the top downloadable torrent links/)
    const miss = await Effect.runPromise(
      env.serve(call("keyword_analysis", "popularsitesforquery", { q: "nothing like this was recorded" }))
    )
    expect(miss).toBeUndefined()
    expect(env.stats()).toEqual({ hits: 3, misses: 1 })
  })

  it("matches a call that differs from a recording only by empty arguments, unless loose matching is off", async () => {
    const args = { part_slug: "lionel-messi", type_s: "players" }
    const loose = await Effect.runPromise(
      makeReplayEnvironment(index).serve(call("theclique", "transfermarkt_details", args))
    )
    expect(loose?.ok).toBe(true)
    const strict = makeReplayIndex({ looseMatch: false })
    await Effect.runPromise(loadResponsesJsonl(strict, RESPONSES))
    expect(
      await Effect.runPromise(makeReplayEnvironment(strict).serve(call("theclique", "transfermarkt_details", args)))
    ).toBeUndefined()
    const exact = await Effect.runPromise(
      makeReplayEnvironment(strict).serve(
        call("theclique", "transfermarkt_details", { ...args, id_talent: "", other: "" })
      )
    )
    // the same response; the ledger says how each was matched
    expect({ ...exact, served: undefined }).toEqual({ ...loose, served: undefined })
    expect(loose?.served).toEqual({ by: "replayed", match: "lenient" })
    expect(exact?.served).toEqual({ by: "replayed", match: "exact" })
  })

  it("replays a recorded error as ok:false", async () => {
    const result = await Effect.runPromise(
      makeReplayEnvironment(index).serve(
        call("theclique", "transfermarkt_details", {
          type_s: "verein",
          part_slug: "fc-paris-saint-germain",
          id_talent: 583
        })
      )
    )
    expect(result).toEqual({
      ok: false,
      content: "",
      error: "request invalid, data error. status_code=500",
      served: { by: "replayed", match: "exact" }
    })
  })

  it("fails with a clear error for a missing file", async () => {
    const error = await Effect.runPromise(
      Effect.flip(loadResponsesJsonl(makeReplayIndex(), "/nonexistent/responses.jsonl"))
    )
    expect(error.message).toContain("/nonexistent/responses.jsonl does not exist")
  })
})

describe("recorded responses", () => {
  it("parse StableToolBench's {error, response}, including cut recordings", () => {
    // a structured response is also kept as one, its numbers as recorded (10.0 is not 10)
    expect(parseRecordedResponse('{"error": "", "response": {"a": 1, "b": 10.0}}')).toEqual({
      ok: true,
      content: '{"a":1,"b":10}',
      structured: { a: new PythonNumber("1"), b: new PythonNumber("10.0") }
    })
    expect(parseRecordedResponse('{"error": "rate limit", "response": "x"}')).toEqual({
      ok: false,
      content: "x",
      error: "rate limit"
    })
    expect(parseRecordedResponse("{}")).toEqual({ ok: true, content: "" })
    expect(parseRecordedResponse('{"error": "", "response": "cut in the mid')).toEqual({
      ok: true,
      content: "cut in the mid"
    })
  })
})

describe("replay from a StableToolBench cache folder", () => {
  it("reads <Category>/<tool>_for_<Category>/<api>.json keyed by Python reprs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "smurfs-cache-"))
    const toolDir = join(dir, "Data", "keyword_tool_for_Data")
    mkdirSync(toolDir, { recursive: true })
    writeFileSync(
      join(toolDir, "search.json"),
      JSON.stringify({
        "{'q': 'birthday', 'limit': 5}": { error: "", response: "five birthday sites" },
        "{'flag': True}": { error: "", response: { ok: 1 } },
        "not a repr at all": { error: "boom", response: "" }
      })
    )
    const index = makeReplayIndex()
    expect(await Effect.runPromise(loadCacheDir(index, dir))).toBe(3)
    const env = makeReplayEnvironment(index)
    const serve = (args: Record<string, unknown>) => Effect.runPromise(env.serve(call("keyword_tool", "search", args)))
    const replayed = { by: "replayed", match: "exact" }
    expect(await serve({ q: "birthday", limit: 5 })).toEqual({
      ok: true,
      content: "five birthday sites",
      served: replayed
    })
    expect(await serve({ limit: "5", q: "birthday" })).toEqual({
      ok: true,
      content: "five birthday sites",
      served: replayed
    })
    expect(await serve({ flag: "True" })).toEqual({
      ok: true,
      content: '{"ok":1}',
      structured: { ok: new PythonNumber("1") },
      served: replayed
    })
    // an empty argument more than the recording: replayed, leniently (the environment ledger says so)
    expect(await serve({ q: "birthday", limit: 5, country: "" })).toEqual({
      ok: true,
      content: "five birthday sites",
      served: { by: "replayed", match: "lenient" }
    })
    expect(await serve({ q: "other" })).toBeUndefined()
    expect(index.hasApi("keyword_tool", "search")).toBe(true)
  })

  it("combines sources and reports a missing folder", async () => {
    const error = await Effect.runPromise(Effect.flip(loadReplayIndex({ cacheDirs: ["/nonexistent/cache"] })))
    expect(error.message).toBe(
      'Cannot set up the "replay" tool environment: the folder /nonexistent/cache does not exist'
    )
  })
})
