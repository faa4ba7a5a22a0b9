// The seeds a bench run sends, read from the request bodies a fake OpenAI server received: each try of --tries is
// its own sample (its own seed) under `improved`; `reference` sends no seed unless --seed asks for one per attempt.
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import { MINI_DATA } from "../test/data.ts"
import { type FakeOpenAI, startFakeOpenAI } from "../test/fake-servers/openai.ts"
import { runBenchSettings } from "./app.ts"
import { silentProgress } from "./progress.ts"
import { type BenchSettingsInput, benchSettings } from "./settings.ts"

const scratch = mkdtempSync(join(tmpdir(), "smurfs-seeds-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

let server: FakeOpenAI
const saved = process.env["OPENAI_BASE_URL"]
beforeEach(async () => {
  // every reply gives up at once, so each chain of --tries is one request
  server = await startFakeOpenAI(() =>
    JSON.stringify({
      thought: "no",
      action: "Finish",
      action_input: { return_type: "give_up_and_restart" }
    })
  )
  process.env["OPENAI_BASE_URL"] = server.baseURL
})
afterEach(async () => {
  if (saved === undefined) delete process.env["OPENAI_BASE_URL"]
  else process.env["OPENAI_BASE_URL"] = saved
  await server.close()
})

/** The `seed` of each first request of the run's ReAct chains (the prompt every try starts from). */
const firstSeeds = async (name: string, input: Partial<BenchSettingsInput>) => {
  const out = join(scratch, name)
  const settings = benchSettings({
    out,
    data: MINI_DATA.path,
    model: "openai:qwen2.5:7b",
    groups: ["G1_instruction"],
    limit: 1,
    methods: ["react"],
    toolCalling: "json",
    tries: 3,
    singleChainMaxStep: 1,
    ...input
  })
  const outcome = await Effect.runPromise(runBenchSettings(settings, silentProgress))
  expect(outcome.kind).toBe("ran")
  const bodies = server.chatRequests()
  const first = JSON.stringify(bodies[0]?.messages)
  const tries = bodies.filter((b) => JSON.stringify(b.messages) === first)
  expect(tries).toHaveLength(3)
  const config = JSON.parse(readFileSync(join(out, "run.json"), "utf8")) as { options: Record<string, unknown> }
  return { seeds: tries.map((b) => ("seed" in b ? b.seed : "absent")), options: config.options }
}

describe("seeds per attempt", () => {
  it("improved: the three tries of --tries 3 send the same prompt with three seeds", async () => {
    const { seeds, options } = await firstSeeds("improved", {})
    expect(seeds).toEqual([42, 43, 44])
    expect(options).toMatchObject({ seed: 42, seeds: "per-attempt" })
  })

  it("reference: no seed on any request, as the references send", async () => {
    const { seeds, options } = await firstSeeds("reference", { profile: "reference" })
    expect(seeds).toEqual(["absent", "absent", "absent"])
    expect(server.chatRequests().every((b) => !("seed" in b))).toBe(true)
    expect(options).toMatchObject({ seed: null, seeds: "none" })
  })

  it("reference with --seed: a distinct seed per attempt, reproducibly", async () => {
    const { seeds } = await firstSeeds("reference-seeded", { profile: "reference", seed: 5 })
    expect(seeds).toEqual([5, 6, 7])
  })

  it("reference Smurfs: the planner's resends of one prompt carry distinct seeds with --seed, none without", async () => {
    const CHECKOUT = fileURLToPath(new URL("../test/fixtures/smurfs-src", import.meta.url))
    const plannerSeeds = async (name: string, seed: number | undefined) => {
      await server.close()
      // no reply reads as a plan (nor as anything else): the planner asks its 12 times with the same prompt
      server = await startFakeOpenAI(() => "nothing readable")
      process.env["OPENAI_BASE_URL"] = server.baseURL
      const settings = benchSettings({
        out: join(scratch, name),
        data: MINI_DATA.path,
        model: "openai:qwen2.5:7b",
        groups: ["G1_instruction"],
        limit: 1,
        methods: ["smurfs"],
        profile: "reference",
        smurfsSrc: CHECKOUT,
        ...(seed === undefined ? {} : { seed })
      })
      expect((await Effect.runPromise(runBenchSettings(settings, silentProgress))).kind).toBe("ran")
      const bodies = server.chatRequests()
      const first = JSON.stringify(bodies[0]?.messages)
      return bodies.filter((b) => JSON.stringify(b.messages) === first).map((b) => ("seed" in b ? b.seed : "absent"))
    }
    expect(await plannerSeeds("smurfs-seeded", 5)).toEqual(Array.from({ length: 12 }, (_, i) => 5 + i))
    expect(await plannerSeeds("smurfs-unseeded", undefined)).toEqual(Array.from({ length: 12 }, () => "absent"))
  })
})
