// `smurfs run` and `solve()` seed each send of the same prompt as `bench` does (issue 32 §2), read from the request
// bodies a fake OpenAI server received: a resend samples anew, and `reference` sends no seed unless one is asked for.
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { runQuery, runSettings } from "../src/run-query.ts"
import { solve } from "../src/solve.ts"
import { type FakeOpenAI, startFakeOpenAI } from "./fake-servers/openai.ts"

const CHECKOUT = fileURLToPath(new URL("./fixtures/smurfs-src", import.meta.url))

let server: FakeOpenAI
const saved = process.env["OPENAI_BASE_URL"]
const start = async (reply: string) => {
  server = await startFakeOpenAI(() => reply)
  process.env["OPENAI_BASE_URL"] = server.baseURL
}
afterEach(async () => {
  if (saved === undefined) delete process.env["OPENAI_BASE_URL"]
  else process.env["OPENAI_BASE_URL"] = saved
  await server?.close()
})

/** The seeds of the requests whose messages equal the first request's (the sends of one prompt). */
const seedsOfFirstPrompt = () => {
  const bodies = server.chatRequests()
  const first = JSON.stringify(bodies[0]?.messages)
  return bodies.filter((b) => JSON.stringify(b.messages) === first).map((b) => ("seed" in b ? b.seed : "absent"))
}

describe("solve(): a seed per send of the same prompt", () => {
  beforeEach(() =>
    start(JSON.stringify({ thought: "no", action: "Finish", action_input: { return_type: "give_up_and_restart" } }))
  )
  const react = { tries: 3, toolCalling: "json" as const, singleChainMaxStep: 1 }

  it("each try of CoT@3 is its own sample: 42, 43, 44", async () => {
    await solve("What is 2 + 2?", {
      model: "openai:qwen2.5:7b",
      method: "react",
      methodOptions: react,
      tools: "demo"
    })
    expect(seedsOfFirstPrompt()).toEqual([42, 43, 44])
  })

  it("from the caller's seed", async () => {
    await solve("What is 2 + 2?", {
      model: "openai:qwen2.5:7b",
      modelOptions: { seed: 7 },
      method: "react",
      methodOptions: react,
      tools: "demo"
    })
    expect(seedsOfFirstPrompt()).toEqual([7, 8, 9])
  })
})

describe("smurfs run: the reference planner's resends of one prompt", () => {
  // a reply no planner can read: the reference planner sends the identical prompt again, up to its attempts
  beforeEach(() => start("no plan here"))

  const run = (seed?: number) =>
    Effect.runPromise(
      runQuery(
        runSettings({
          query: "What is 2 + 2?",
          model: "openai:qwen2.5:7b",
          profile: "reference",
          smurfsSrc: CHECKOUT,
          modelOptions: seed === undefined ? {} : { seed }
        })
      )
    )

  it("send no seed, as the authors' code (the server samples anew each time)", async () => {
    await run()
    const seeds = seedsOfFirstPrompt()
    expect(seeds.length).toBeGreaterThan(1)
    expect(new Set(seeds)).toEqual(new Set(["absent"]))
  })

  it("with --seed s, s + n for the n-th send", async () => {
    await run(5)
    const seeds = seedsOfFirstPrompt()
    expect(seeds.length).toBeGreaterThan(1)
    expect(seeds).toEqual(seeds.map((_, n) => 5 + n))
  })
})
