import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { MINI_DATA } from "../../../test/data.ts"
import { scriptedLayer } from "../../llm/scripted.ts"
import { ApiDoc } from "../toolbench/api-doc.ts"
import { chainEnvironments, makeEnvironmentChain } from "./chain.ts"
import type { ToolCall, ToolEnvironment } from "./environment.ts"

const RESPONSES = join(MINI_DATA.path, "responses.jsonl")
const doc = ApiDoc.parse({ tool_name: "Keyword Analysis", api_name: "PopularSitesForQuery" })
const call = (q: string): ToolCall => ({
  doc,
  stdTool: "keyword_analysis",
  stdApi: "popularsitesforquery",
  args: { q }
})
const miss = (name: string): ToolEnvironment => ({ name, serve: () => Effect.succeed(undefined) })
const noModel = scriptedLayer([])

describe("environment chains", () => {
  it("asks environments in order and reports when none answered", async () => {
    const answer: ToolEnvironment = { name: "b", serve: () => Effect.succeed({ ok: true, content: "from b" }) }
    expect(await Effect.runPromise(chainEnvironments([miss("a"), answer]).serve(call("x")))).toEqual({
      ok: true,
      content: "from b"
    })
    expect(await Effect.runPromise(chainEnvironments([miss("a"), miss("c")]).serve(call("x")))).toEqual({
      ok: false,
      content: "",
      error: "no environment answered the call to keyword_analysis.popularsitesforquery (tried a, c)"
    })
  })

  it("builds replay then offline from names", async () => {
    const env = await Effect.runPromise(
      makeEnvironmentChain(["replay", "offline"], { responses: RESPONSES }).pipe(Effect.provide(noModel))
    )
    expect((await Effect.runPromise(env.serve(call("birthday party ideas"))))?.ok).toBe(true)
    expect(await Effect.runPromise(env.serve(call("unrecorded")))).toMatchObject({
      ok: false,
      error: expect.stringContaining("offline environment")
    })
  })

  it("replays a simulated response stored by an earlier run", async () => {
    const storeDir = mkdtempSync(join(tmpdir(), "smurfs-chain-"))
    const model = scriptedLayer({ "tool.simulate": [{ error: "", response: "simulated once" }] })
    const first = await Effect.runPromise(
      makeEnvironmentChain(["replay", "simulated"], { storeDir }).pipe(Effect.provide(model))
    )
    // the environment ledger: simulated by the model in context, with our texts
    expect(await Effect.runPromise(first.serve(call("new query")))).toEqual({
      ok: true,
      content: "simulated once",
      served: { by: "simulated", simulator: "scripted:scripted · smurfs" }
    })
    const second = await Effect.runPromise(
      makeEnvironmentChain(["replay", "offline"], { storeDir }).pipe(Effect.provide(noModel))
    )
    // replayed from the store, and still counted as simulated: a simulator wrote it
    expect(await Effect.runPromise(second.serve(call("new query")))).toEqual({
      ok: true,
      content: "simulated once",
      served: { by: "simulated", match: "exact" }
    })
  })

  it("makes a simulator's cache folder with its first response, not when the chain is built", async () => {
    // the default folder is inside the run directory, which must still be empty when the run opens it
    const run = join(mkdtempSync(join(tmpdir(), "smurfs-chain-")), "runs", "new")
    const writeCacheDir = join(run, "simulated", "tool_response_cache")
    const simulator = scriptedLayer({ "tool.simulate": [{ error: "", response: "simulated" }] })
    const env = await Effect.runPromise(
      makeEnvironmentChain(["replay", "simulated"], { writeCacheDir }).pipe(Effect.provide(simulator))
    )
    expect(existsSync(run)).toBe(false)
    expect(await Effect.runPromise(env.serve(call("new query")))).toMatchObject({ ok: true, content: "simulated" })
    expect(existsSync(writeCacheDir)).toBe(true)
  })

  it("refuses a simulator's cache folder that cannot be made, when the chain is built", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "smurfs-chain-")), "a-file")
    writeFileSync(file, "")
    const error = await Effect.runPromise(
      Effect.flip(
        makeEnvironmentChain(["replay", "simulated"], { writeCacheDir: join(file, "cache") }).pipe(
          Effect.provide(noModel)
        )
      )
    )
    expect(error.message).toContain(`cannot create the cache folder ${join(file, "cache")}`)
  })

  it("rejects unknown names and a missing responses file", async () => {
    const unknown = await Effect.runPromise(
      Effect.flip(makeEnvironmentChain(["replay", "http"]).pipe(Effect.provide(noModel)))
    )
    expect(unknown.message).toContain('"http" tool environment: unknown environment')
    const missing = await Effect.runPromise(
      Effect.flip(makeEnvironmentChain(["replay"], { responses: "/nonexistent.jsonl" }).pipe(Effect.provide(noModel)))
    )
    expect(missing.message).toContain("/nonexistent.jsonl does not exist")
  })
})
