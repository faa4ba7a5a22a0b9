// The embedded engine keeps a sequence per task (issue 33): a task's next request finds its prefix in its own
// sequence's KV cache, even when a new task started while it was between two requests.
import { afterAll, describe, expect, it } from "vitest"
import type { Message } from "../../src/llm/language-model.ts"
import { generateOn, type LlamaEngine, loadEngine } from "../../src/llm/llama.ts"
import type { ModelTaskKey } from "../../src/llm/model-task.ts"
import { llamaSettings } from "../../src/llm/providers/llama.ts"
import { removeTinyModels, tinyModelFile } from "./tiny-model.ts"

let engine: LlamaEngine | undefined
afterAll(async () => {
  await engine?.dispose()
  removeTinyModels()
})

const SYSTEM = "You are one agent of a team answering a question with tools. Reply in one short line."

describe("llama: a sequence per task", () => {
  it("sends a task's next request to its own sequence, not to the one a new task took meanwhile", async () => {
    const settings = llamaSettings(tinyModelFile(), { threads: 1, numCtx: 1024, concurrency: 2 })
    engine = await loadEngine(settings)
    const loaded = engine
    const signal = new AbortController().signal
    /** Prompt tokens the engine evaluated for one request (the rest its sequence's cache held). */
    const evaluated = async (messages: ReadonlyArray<Message>, task: ModelTaskKey) => {
      const before = loaded.meter.evaluated
      const reply = await generateOn(
        loaded,
        settings,
        { role: "chat", messages, options: { maxTokens: 4 } },
        signal,
        task
      )
      return { evaluated: loaded.meter.evaluated - before, prompt: reply.usage.promptTokens, text: reply.text }
    }
    const question = (q: string): Array<Message> => [
      { role: "system", content: SYSTEM },
      { role: "user", content: `Question: ${q} ${"Give every figure with its unit. ".repeat(8)}` }
    ]
    const a: ModelTaskKey = { key: "a", ended: false }
    const b: ModelTaskKey = { key: "b", ended: false }
    const c: ModelTaskKey = { key: "c", ended: false }
    const first = await evaluated(question("How high is Mount Everest?"), a)
    await evaluated(question("How deep is the Mariana Trench?"), b)
    b.ended = true
    // a new task while `a` calls a tool: it shares only the system text with both sequences
    await evaluated(question("How long is the Nile?"), c)
    // a's next request continues its first exchange: its sequence still holds that prefix
    const next = await evaluated(
      [
        ...question("How high is Mount Everest?"),
        { role: "assistant", content: first.text },
        { role: "user", content: "Executor agent, tool." }
      ],
      a
    )
    expect(next.prompt).toBeGreaterThan(first.prompt)
    // only the new end is computed (without a sequence per task, c took a's sequence and all of it was)
    expect(next.evaluated).toBeLessThan(next.prompt / 2)
  })

  it("sends a request on model lane i to sequence i, so each task holding a lane has its own", async () => {
    // an engine of its own: both sequences fresh
    await engine?.dispose()
    const settings = llamaSettings(tinyModelFile(), { threads: 1, numCtx: 1024, concurrency: 2 })
    engine = await loadEngine(settings)
    const loaded = engine
    const signal = new AbortController().signal
    const x: ModelTaskKey = { key: "x", ended: false }
    const y: ModelTaskKey = { key: "y", ended: false }
    const ask = (task: ModelTaskKey, lane: number) =>
      generateOn(
        loaded,
        settings,
        { role: "chat", messages: [{ role: "user", content: `Task ${task.key}.` }], options: { maxTokens: 2 } },
        signal,
        task,
        lane
      )
    // lane 1 first: sequence 1, though sequence 0 is free too; then y, on lane 0, takes sequence 0 from its owner
    await ask(x, 1)
    expect(loaded.slots[1]!.owner).toBe(x)
    await ask(y, 0)
    expect(loaded.slots[0]!.owner).toBe(y)
    expect(loaded.slots[1]!.owner).toBe(x)
  })
})
