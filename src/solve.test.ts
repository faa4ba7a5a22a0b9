import { createServer } from "node:net"
import { Effect, Layer, References, Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { ModelUnreachable } from "./index.ts"
import { LanguageModel } from "./llm/language-model.ts"
import { makeScriptedModel } from "./llm/scripted.ts"
import { solve } from "./solve.ts"
import { defineTool } from "./tools/define-tool.ts"
import type { RunEvent } from "./trace/events.ts"

const wordCount = defineTool({
  name: "word_count",
  description: "Count the words in a text.",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => ({ words: text.split(/\s+/).filter(Boolean).length })
})

/** The default loop's replies: one fused request per step; the short response is the step's answer (no Answer agent). */
const smurfsScript = {
  planner: [{ subtasks: ["Count the words of 'the quick brown fox'"] }],
  "executor.fused": [
    { thought: "word_count counts words.", tool: "word_count", arguments: { text: "the quick brown fox" } }
  ],
  verifier: [{ status: "solved", reason: "counted" }],
  "answerer.final": [{ answer: "'the quick brown fox' has 4 words." }]
}

const layerOf = (script: unknown) => Layer.succeed(LanguageModel, makeScriptedModel(script as never))

describe("solve (the Promise API)", () => {
  it("resolves with the trajectory and streams every event to onEvent", async () => {
    const seen: RunEvent[] = []
    const trajectory = await solve("How many words are in 'the quick brown fox'?", {
      model: layerOf(smurfsScript),
      tools: [wordCount],
      onEvent: (e) => seen.push(e)
    })
    expect(trajectory.finishType).toBe("give_answer")
    expect(trajectory.finalAnswer).toContain("4 words")
    expect(trajectory.totals.toolCalls).toBe(1)
    expect(seen.map((e) => e.id)).toEqual(trajectory.events.map((e) => e.id))
  })

  it("runs the ReAct baseline too, with its events reaching onEvent", async () => {
    const script = {
      "*": [
        { thought: "count", action: "word_count", action_input: { text: "a b c" } },
        { thought: "done", action: "Finish", action_input: { return_type: "give_answer", final_answer: "3 words" } }
      ]
    }
    const seen: string[] = []
    const trajectory = await solve("How many words in 'a b c'?", {
      model: layerOf(script),
      tools: [wordCount],
      method: "react",
      methodOptions: { toolCalling: "json" },
      onEvent: (e) => seen.push(e.type)
    })
    expect(trajectory.finalAnswer).toBe("3 words")
    expect(seen).toContain("dev.smurfs.tool_call")
    expect(seen.length).toBe(trajectory.events.length)
  })

  it("records no spans that nobody could read, and hands them to a tracer the model layer brings", async () => {
    const script = {
      "*": [
        { thought: "count", action: "word_count", action_input: { text: "a b" } },
        { thought: "done", action: "Finish", action_input: { return_type: "give_answer", final_answer: "2 words" } }
      ]
    }
    // the model notes whether its call is in a recorded span
    const tracing: Array<boolean> = []
    const noting = (inner: ReturnType<typeof makeScriptedModel>) =>
      LanguageModel.of({
        info: inner.info,
        generate: (request) =>
          Effect.flatMap(Effect.service(References.TracerEnabled), (enabled) => {
            tracing.push(enabled)
            return inner.generate(request)
          })
      })
    const model = () => Layer.succeed(LanguageModel, noting(makeScriptedModel(script as never)))
    const options = { tools: [wordCount], method: "react", methodOptions: { toolCalling: "json" } } as const
    expect((await solve("How many words in 'a b'?", { ...options, model: model() })).finalAnswer).toBe("2 words")
    expect(tracing).toEqual([false, false])
    // a model layer with a tracer of its own: every model call is a span it receives, as before
    const names: Array<string> = []
    const tracer = Tracer.make({
      span: (options) => {
        names.push(options.name)
        return Tracer.nativeTracer.span(options)
      }
    })
    tracing.length = 0
    const traced = Layer.merge(model(), Layer.succeed(Tracer.Tracer, tracer))
    expect((await solve("How many words in 'a b'?", { ...options, model: traced })).finalAnswer).toBe("2 words")
    expect(tracing).toEqual([true, true])
    expect(names.filter((n) => n === "LanguageModel.call")).toHaveLength(2)
  })

  it("rejects bad input with the library's actionable error", async () => {
    await expect(solve("q", { model: "nosuch", tools: [wordCount] })).rejects.toMatchObject({
      _tag: "InvalidModelSpec",
      message: expect.stringContaining("ollama:nosuch")
    })
    await expect(solve("q", { model: layerOf({}), tools: [wordCount, wordCount] })).rejects.toMatchObject({
      _tag: "DuplicateToolName"
    })
    await expect(solve("q", { model: layerOf({}), tools: "./no/such/tools.ts" })).rejects.toMatchObject({
      _tag: "ToolLoadError"
    })
  })

  it("rejects with the signal's reason when aborted, and the hung tool is abandoned", async () => {
    let started = false
    let abandoned = false
    const hang = defineTool({
      name: "hang",
      description: "Never answers.",
      parameters: z.object({}),
      timeoutMs: 60_000,
      execute: (_args, { signal }) => (
        (started = true),
        new Promise((_, reject) =>
          signal.addEventListener("abort", () => ((abandoned = true), reject(new Error("abandoned"))))
        )
      )
    })
    const script = { "*": [{ thought: "wait", action: "hang", action_input: {} }] }
    const controller = new AbortController()
    const pending = solve("wait", {
      model: layerOf(script),
      tools: [hang],
      method: "react",
      methodOptions: { toolCalling: "json" },
      signal: controller.signal
    })
    await Effect.runPromise(Effect.sleep(50))
    expect(started).toBe(true)
    controller.abort(new Error("stop now"))
    await expect(pending).rejects.toThrow("stop now")
    expect(abandoned).toBe(true)
  })

  it("rejects with ModelUnreachable when nobody answers at the server's address, and a task that gave up still resolves", async () => {
    // a loopback port that was just free: connecting is refused at once
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number }
        server.close(() => resolve(port))
      })
    })
    const refused = solve("How many words are in 'a b'?", {
      model: "ollama:qwen2.5:7b",
      modelOptions: { host: `http://127.0.0.1:${port}` },
      tools: [wordCount]
    })
    await expect(refused).rejects.toBeInstanceOf(ModelUnreachable)
    await expect(refused).rejects.toMatchObject({
      kind: "unavailable",
      message: expect.stringContaining(`127.0.0.1:${port}`)
    })
    // the model answered, with nothing usable: the task ran and gave up, which is a result
    const gaveUp = await solve("How many words in 'a b'?", {
      model: layerOf({ "*": ["not a plan"], $cycle: true }),
      tools: [wordCount]
    })
    expect(gaveUp.finishType).toBe("give_up")
  })
})
