// Shared fixtures of the pipeline suites: tools built on the Tool interface, a runner, event lookups.
import { Effect, Layer } from "effect"
import { z } from "zod"
import { smurfs } from "../src/agents/smurfs.ts"
import type { SmurfsOptions } from "../src/agents/smurfs-options.ts"
import { LanguageModel } from "../src/llm/language-model.ts"
import { makeScriptedModel, type Script } from "../src/llm/scripted.ts"
import type { Tool, ToolResult } from "../src/tools/tool.ts"
import { kindOf } from "../src/trace/events.ts"
import type { Trajectory } from "../src/trace/trajectory.ts"

export interface RecordingTool extends Tool {
  readonly calls: Array<Record<string, unknown>>
}

/** A tool whose behaviour is a function of its arguments and of how often it was called. */
export const makeTool = (
  name: string,
  parameters: z.ZodObject<z.ZodRawShape>,
  respond: (args: Record<string, unknown>, call: number) => ToolResult
): RecordingTool => {
  const calls: Array<Record<string, unknown>> = []
  return {
    name,
    description: `The ${name} tool.`,
    parameters,
    calls,
    call: (args) => Effect.sync(() => (calls.push(args), respond(args, calls.length)))
  }
}

export const heights: Record<string, number> = { "Mount Everest": 29032, K2: 28251 }

/** Height of a mountain in feet. */
export const heightTool = () =>
  makeTool("mountain_height", z.object({ name: z.string() }), (args) => {
    const h = heights[String(args["name"])]
    return h === undefined
      ? { ok: false, content: "", error: `unknown mountain ${String(args["name"])}` }
      : { ok: true, content: `${String(args["name"])} is ${h} feet high.` }
  })

/** Percentages: a real computation, so answers depend on the arguments. */
export const percentTool = () =>
  makeTool("percent_of", z.object({ percent: z.number().min(0).max(100), value: z.number() }), (args) => ({
    ok: true,
    content: String((Number(args["percent"]) * Number(args["value"])) / 100)
  }))

export const modelLayer = (script: Script, contextTokens?: number) =>
  Layer.sync(LanguageModel, () => {
    const model = makeScriptedModel(script)
    return contextTokens === undefined ? model : LanguageModel.of({ ...model, info: { ...model.info, contextTokens } })
  })

/**
 * The paper's loop, which the scripted pipeline tests are written for: three requests per step (thought, tool,
 * arguments) and the Answer agent on every step. The library's default is the fused executor with short responses as
 * answers (issue 33); `test/smurfs-fused.test.ts` and `test/smurfs-short-responses.test.ts` script that one.
 */
export const paperLoop = (options?: SmurfsOptions): SmurfsOptions => ({
  executor: "three-call",
  ...options,
  rules: { answerShortResponses: undefined, ...options?.rules }
})

/** Run Smurfs on `query` with a scripted model: the paper's loop (`paperLoop`) unless `options` say otherwise. */
export const runSmurfs = (
  query: string,
  tools: ReadonlyArray<Tool>,
  script: Script | Layer.Layer<LanguageModel>,
  options?: SmurfsOptions
): Promise<Trajectory> => {
  const layer: Layer.Layer<LanguageModel> = Layer.isLayer(script)
    ? (script as Layer.Layer<LanguageModel>)
    : modelLayer(script as Script)
  return Effect.runPromise(
    smurfs(paperLoop(options))({ id: "task-1", query, tools: { name: "test", tools } }).pipe(Effect.provide(layer))
  )
}

export const eventsOf = (t: Trajectory, kind: string) =>
  t.events.filter((e) => kindOf(e) === kind).map((e) => e.data as Record<string, any>)

/** The model calls a role made, with their messages. */
export const callsOf = (t: Trajectory, role: string) =>
  eventsOf(t, "model_call").filter((d) => d["role"] === role) as Array<{
    messages: Array<{ role: string; content: string }>
    ok: boolean
    promptTokens: number
  }>

/** The user text of a request: every user message (a request that continues an agent's exchange has several). */
export const userPrompt = (call: { messages: Array<{ role: string; content: string }> }) =>
  call.messages
    .filter((m) => m.role === "user")
    .map((m) => m.content)
    .join("\n\n")
export const systemPrompt = (call: { messages: Array<{ role: string; content: string }> }) =>
  call.messages.find((m) => m.role === "system")!.content

/** A reply made from the tool response the answerer was given (its `tool` message). */
export const fromObservation =
  (make: (observation: string) => object) =>
  (request: { messages: ReadonlyArray<{ role: string; content: string }> }) =>
    make(request.messages.findLast((m) => m.role === "tool")?.content ?? "NO TOOL MESSAGE")

/** A reply that reads a value out of the prompt, so scripted answers depend on what the pipeline passed. */
export const fromPrompt =
  (pattern: RegExp, make: (match: string) => object) => (request: { messages: ReadonlyArray<{ content: string }> }) => {
    const text = request.messages.map((m) => m.content).join("\n")
    const match = pattern.exec(text)
    return make(match?.[1] ?? "NOT FOUND")
  }
