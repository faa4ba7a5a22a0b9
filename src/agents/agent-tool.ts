// Agents as tools: a whole Smurfs pipeline with its own tool library, offered as one tool of another pipeline.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { z } from "zod"
import { LanguageModel } from "../llm/language-model.ts"
import type { Tool, ToolLibrary } from "../tools/tool.ts"
import { Trace } from "../trace/events.ts"
import { smurfs } from "./smurfs.ts"
import type { SmurfsOptions } from "./smurfs-options.ts"

/** How deep the current pipeline is nested inside agent tools (0 = the top-level pipeline). */
export const AgentDepth = Context.Reference<number>("smurfs/AgentDepth", { defaultValue: () => 0 })

export interface AgentToolDefinition {
  /** The tool's name as the calling pipeline's executor sees it. */
  readonly name: string
  /** What the agent can do, for the calling executor. */
  readonly description: string
  /** The agent's own tools. */
  readonly tools: ReadonlyArray<Tool> | ToolLibrary
  /** Options of the agent's pipeline (its own step limit, planner, ...). */
  readonly options?: Omit<SmurfsOptions, "onEvent"> | undefined
  /** Deepest nesting of agent tools allowed; a call deeper than this fails as a tool. Default 2. */
  readonly maxDepth?: number | undefined
  /** Milliseconds the whole agent may take before its call is abandoned as failed. Default 10 minutes. */
  readonly timeoutMs?: number | undefined
}

export const agentToolDefaults = { maxDepth: 2, timeoutMs: 600_000 } as const

/**
 * Wrap a Smurfs pipeline as one tool. It runs on the caller's model (and within the caller's call
 * budget); its events are nested in the caller's trace, marked with the agent's name and depth.
 */
export const defineAgentTool = (definition: AgentToolDefinition): Tool => {
  const library: ToolLibrary = Array.isArray(definition.tools)
    ? { name: definition.name, tools: definition.tools }
    : (definition.tools as ToolLibrary)
  const maxDepth = definition.maxDepth ?? agentToolDefaults.maxDepth
  let calls = 0
  return {
    name: definition.name,
    description: definition.description,
    parameters: z.object({
      task: z.string().min(1).describe("the task for the agent, self-contained: every name, number and unit it needs")
    }) as unknown as z.ZodObject<z.ZodRawShape>,
    // a whole pipeline outlasts the timeout meant for one tool call
    meta: {
      agent: true,
      tools: library.tools.map((t) => t.name),
      timeoutMs: definition.timeoutMs ?? agentToolDefaults.timeoutMs
    },
    call: (args) =>
      Effect.gen(function* () {
        const depth = (yield* AgentDepth) + 1
        if (depth > maxDepth)
          return {
            ok: false,
            content: "",
            error: `agent "${definition.name}" would run at depth ${depth}, deeper than its limit ${maxDepth}; solve this step with another tool`
          }
        const model = yield* Effect.serviceOption(LanguageModel)
        if (Option.isNone(model))
          return {
            ok: false,
            content: "",
            error: `agent "${definition.name}" has no model to run on; call it from a pipeline`
          }
        const parent = yield* Trace
        const id = `${definition.name}-${++calls}`
        const trajectory = yield* smurfs({
          ...definition.options,
          onEvent: (event) =>
            parent.forward?.({ ...event, agent: event.agent ?? definition.name, agentdepth: event.agentdepth ?? depth })
        })({ id, query: String(args["task"] ?? ""), tools: library }).pipe(
          Effect.provideService(LanguageModel, model.value),
          Effect.provideService(AgentDepth, depth)
        )
        return trajectory.finishType === "give_answer"
          ? { ok: true, content: trajectory.finalAnswer }
          : {
              ok: false,
              content: "",
              error: `agent "${definition.name}" found no answer${trajectory.error ? `: ${trajectory.error}` : ""}`
            }
      })
  }
}
