import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import { z } from "zod"
import { startFakeOllama } from "../../test/fake-servers/ollama.ts"
import { startFakeOpenAI } from "../../test/fake-servers/openai.ts"
import { solve } from "../solve.ts"
import { defineTool } from "../tools/define-tool.ts"
import { sharedModelCount } from "./shared-models.ts"

const wordCount = defineTool({
  name: "word_count",
  description: "Count the words in a text.",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => ({ words: text.split(/\s+/).filter(Boolean).length })
})

/** Every task ends with its first model call: a ReAct Finish, held back `delayMs` so that calls overlap. */
const finishing = (delayMs: number) => () => ({
  content: JSON.stringify({
    thought: "done",
    action: "Finish",
    action_input: { return_type: "give_answer", final_answer: "ok" }
  }),
  delayMs
})

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length) await closers.pop()!()
})

const fakeOllama = async (delayMs: number) => {
  const server = await startFakeOllama(finishing(delayMs))
  closers.push(() => server.close())
  return server
}

/** The model's builds: each asks /api/show whether the model takes tools. */
const builds = (server: { requests: ReadonlyArray<{ path: string }> }) =>
  server.requests.filter((r) => r.path === "/api/show").length

const solveAt = (url: string, i: number, extra: { concurrency?: number; seed?: number; signal?: AbortSignal } = {}) =>
  solve(`Count the words of 'a b' (${i})`, {
    model: "ollama:qwen2.5:7b",
    modelOptions: { host: url, concurrency: extra.concurrency, seed: extra.seed },
    tools: [wordCount],
    method: "react",
    methodOptions: { toolCalling: "json" },
    signal: extra.signal
  })

/** Until the models of earlier calls are released (they are shared across the whole process). */
const noSharedModels = () => vi.waitFor(() => expect(sharedModelCount()).toBe(0), { timeout: 10_000, interval: 50 })

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length

describe("solve calls share their server's model", () => {
  it("keeps concurrent calls to one server within its concurrency: 1, then 2", async () => {
    const one = await fakeOllama(30)
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => solveAt(one.url, i, { concurrency: 1 })))
    expect(answers.map((t) => t.finalAnswer)).toEqual(Array(6).fill("ok"))
    expect(one.chatRequests()).toHaveLength(6)
    expect(one.maxInFlight()).toBe(1)
    expect(builds(one)).toBe(1)

    const two = await fakeOllama(30)
    await Promise.all(Array.from({ length: 6 }, (_, i) => solveAt(two.url, i, { concurrency: 2 })))
    expect(two.chatRequests()).toHaveLength(6)
    expect(two.maxInFlight()).toBe(2)
    expect(builds(two)).toBe(1)
  })

  it("shares an OpenAI-compatible server's limit too", async () => {
    const server = await startFakeOpenAI(finishing(30))
    closers.push(() => server.close())
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        solve(`Count the words of 'a b' (${i})`, {
          model: "openai:qwen2.5:7b",
          modelOptions: { baseURL: server.baseURL, apiKey: "test-key", concurrency: 2 },
          tools: [wordCount],
          method: "react",
          methodOptions: { toolCalling: "json" }
        })
      )
    )
    expect(answers.map((t) => t.finalAnswer)).toEqual(Array(5).fill("ok"))
    expect(server.maxInFlight()).toBe(2)
  })

  it("does not share between calls whose options differ", async () => {
    const server = await fakeOllama(50)
    await Promise.all([
      solveAt(server.url, 0, { concurrency: 1, seed: 1 }),
      solveAt(server.url, 1, { concurrency: 1, seed: 2 })
    ])
    expect(server.maxInFlight()).toBe(2)
    expect(builds(server)).toBe(2)
  })

  it("leaves the shared model to the others when one call is aborted", async () => {
    const server = await fakeOllama(150)
    const controller = new AbortController()
    // the first call builds the model, and is aborted while the others wait for their turn
    const first = solveAt(server.url, 0, { concurrency: 1, signal: controller.signal })
    const others = Array.from({ length: 4 }, (_, i) => solveAt(server.url, i + 1, { concurrency: 1 }))
    await vi.waitFor(() => expect(server.chatRequests().length).toBeGreaterThan(0), { interval: 5 })
    controller.abort(new Error("stop the first"))
    await expect(first).rejects.toThrow("stop the first")
    const answers = await Promise.all(others)
    expect(answers.map((t) => t.finalAnswer)).toEqual(Array(4).fill("ok"))
    expect(builds(server)).toBe(1)
  })

  it("releases the model once idle, leaving no timer that holds the process, and builds it again later", async () => {
    await noSharedModels()
    const server = await fakeOllama(10)
    const before = timers()
    await Promise.all(Array.from({ length: 3 }, (_, i) => solveAt(server.url, i, { concurrency: 1 })))
    expect(sharedModelCount()).toBe(1)
    // the release waits on a timer that does not keep the process alive
    expect(timers()).toBeLessThanOrEqual(before)
    await noSharedModels()
    await Promise.all(Array.from({ length: 3 }, (_, i) => solveAt(server.url, i, { concurrency: 1 })))
    expect(builds(server)).toBe(2)
    expect(server.maxInFlight()).toBe(1)
  })

  it("builds a script for each call: its position is the run's own", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "smurfs-shared-")), "script.json")
    writeFileSync(file, JSON.stringify({ "*": [finishing(0)().content] }))
    const options = {
      model: `scripted:${file}`,
      tools: [wordCount],
      method: "react",
      methodOptions: { toolCalling: "json" }
    } as const
    // a script of one reply answers each of them: none starts where another left off
    const answers = await Promise.all([solve("q1", options), solve("q2", options)])
    expect(answers.map((t) => t.finalAnswer)).toEqual(["ok", "ok"])
    expect((await solve("q3", options)).finalAnswer).toBe("ok")
  })

  it("rejects every call of a model that cannot be built, and keeps no failed build", async () => {
    await noSharedModels()
    const bad = { model: "ollama:qwen2.5:7b", modelOptions: { endpoints: ["not-a-url"] }, tools: [wordCount] }
    const calls = [solve("q1", bad), solve("q2", bad)]
    for (const call of calls) await expect(call).rejects.toMatchObject({ _tag: "InvalidModelSpec" })
    expect(sharedModelCount()).toBe(0)
    await expect(solve("q", { model: "nosuch", tools: [wordCount] })).rejects.toMatchObject({
      _tag: "InvalidModelSpec"
    })
    // a valid call after them is built and runs
    const server = await fakeOllama(0)
    expect((await solveAt(server.url, 0)).finalAnswer).toBe("ok")
  })
})
