import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { MINI_DATA } from "../../test/data.ts"
import { findTool } from "./library.ts"
import { loadToolLibrary, ToolLoadError } from "./load.ts"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))
const TOOLBENCH = MINI_DATA.path
const load = (source: string, options?: Parameters<typeof loadToolLibrary>[1]) =>
  Effect.runPromise(loadToolLibrary(source, options))
const loadError = (source: string) => Effect.runPromise(Effect.flip(loadToolLibrary(source)))
const tmp = () => mkdtempSync(join(tmpdir(), "smurfs-load-"))

describe("loadToolLibrary", () => {
  it("loads the demo library", async () => {
    expect((await load("demo")).name).toBe("demo")
  })

  it("loads a module's default ToolLibrary or its `tools` array", async () => {
    const library = await load(here("./fixtures/library-module.ts"))
    expect(library.name).toBe("fixture")
    expect(await Effect.runPromise(findTool(library, "shout")!.call({ text: "hi" }))).toEqual({
      ok: true,
      content: "HI"
    })
    const array = await load(here("./fixtures/tools-array-module.ts"))
    expect(array).toMatchObject({ name: "tools-array-module", tools: [{ name: "add" }] })
  })

  it("says exactly what is wrong with a bad source", async () => {
    const missing = await loadError("/no/such/tools.ts")
    expect(missing).toBeInstanceOf(ToolLoadError)
    expect(missing.message).toContain("the path /no/such/tools.ts does not exist")
    expect((await loadError(here("./fixtures/throwing-module.ts"))).message).toContain(
      "the module threw while loading: fixture module fails on purpose"
    )
    expect((await loadError(here("./fixtures/empty-module.ts"))).message).toContain("the module exports no tools")
    const dir = tmp()
    writeFileSync(join(dir, "bad.json"), "{ not json")
    expect((await loadError(join(dir, "bad.json"))).message).toContain("the JSON is malformed")
    writeFileSync(join(dir, "odd.json"), '{"hello": 1}')
    expect((await loadError(join(dir, "odd.json"))).message).toContain("neither an api_list")
    writeFileSync(join(dir, "tools.txt"), "")
    expect((await loadError(join(dir, "tools.txt"))).message).toContain('unknown kind of file ".txt"')
  })

  it("loads a StableToolBench query file: the first query, or the one asked for", async () => {
    const file = join(TOOLBENCH, "queries/G1_instruction.json")
    const first = await load(file)
    expect(first.name).toMatch(/^toolbench:/)
    const chosen = await load(file, { queryId: 1073 })
    expect(chosen.name).toBe("toolbench:1073")
    expect(chosen.tools.map((t) => t.name)).toEqual([
      "popularsitesforquery_for_keyword_analysis",
      "querykeywords_for_keyword_analysis",
      "similarqueries_for_keyword_analysis"
    ])
    expect((await Effect.runPromise(Effect.flip(loadToolLibrary(file, { queryId: "nope" })))).message).toContain(
      "no query with query_id nope"
    )
  })

  it("serves an api_list from recorded responses when given, else offline", async () => {
    const dir = tmp()
    const apiList = [
      {
        category_name: "Data",
        tool_name: "Keyword Analysis",
        api_name: "PopularSitesForQuery",
        required_parameters: [{ name: "q", type: "STRING", description: "", default: "" }]
      }
    ]
    writeFileSync(join(dir, "api_list.json"), JSON.stringify({ query_id: 7, api_list: apiList }))
    const replayed = await load(join(dir, "api_list.json"), { responses: join(TOOLBENCH, "responses.jsonl") })
    const tool = replayed.tools[0]!
    expect((await Effect.runPromise(tool.call({ q: "birthday party ideas" }))).ok).toBe(true)
    expect(await Effect.runPromise(tool.call({ q: "never recorded" }))).toMatchObject({
      ok: false,
      error: expect.stringContaining("offline environment")
    })
    const offline = await load(join(dir, "api_list.json"))
    expect((await Effect.runPromise(offline.tools[0]!.call({ q: "birthday party ideas" }))).ok).toBe(false)
  })
})
