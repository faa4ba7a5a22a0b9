// The simulated environment (MirrorAPI style): on a miss, the model writes a plausible response, which is stored for replay.
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { z } from "zod"
import { fencedData } from "../../agents/fenced-data.ts"
import { renderTemplate } from "../../agents/prompt-template.ts"
import { LanguageModel } from "../../llm/language-model.ts"
import { generateObject } from "../../llm/structured.ts"
import type { ToolResult } from "../tool.ts"
import { canonicalArgs } from "./canonical.ts"
import type { ToolCall, ToolEnvironment } from "./environment.ts"
import { formatRecordedResponse, parseRecordedResponse, type Recording, type ReplayIndex } from "./recorded.ts"
import { refuseSymlinksSync } from "../../trace/guarded-fs.ts"
import { appendJsonLine } from "../../trace/jsonl.ts"
import { redactText, redactValue } from "../../trace/redact.ts"

/** The file, inside a store folder, that simulated responses are appended to (responses.jsonl format). */
export const SIMULATED_STORE_FILE = "simulated-responses.jsonl"

/** What the model must reply: StableToolBench's `{error, response}`. */
export const SimulatedResponse = z.object({
  error: z.string().default(""),
  response: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
})

export interface SimulatedOptions {
  /** Recordings: looked up first, source of examples, and where generated responses are added. */
  readonly index: ReplayIndex
  /** Folder to append generated responses to, so that the next run replays them; none keeps them in memory only. */
  readonly storeDir?: string | undefined
  /** The folder the store must stay in when it is inside one (a run directory): no symbolic link below it is followed. */
  readonly storeRoot?: string | undefined
  /** Recorded examples of the same API shown to the model. */
  readonly maxExamples?: number | undefined
  /** Characters of the examples text (StableToolBench: 2,048). */
  readonly maxExampleChars?: number | undefined
}

const DEFAULTS = { maxExamples: 5, maxExampleChars: 2048 } as const

const apiDocText = (call: ToolCall): string =>
  JSON.stringify(
    {
      tool: call.doc.tool_name,
      category: call.doc.category_name,
      api: call.doc.api_name,
      description: call.doc.api_description,
      method: call.doc.method,
      required_parameters: call.doc.required_parameters,
      optional_parameters: call.doc.optional_parameters
    },
    null,
    1
  )

const templateText = (template: unknown): string =>
  template === undefined || template === null || template === "" ? "(none)" : typeof template === "string" ? template : JSON.stringify(template)

const examplesText = (examples: ReadonlyArray<Recording>, maxChars: number): string => {
  if (examples.length === 0) return "(none)"
  const text = examples.map((e) => `${e.args} -> ${e.response}`).join("\n")
  return text.length > maxChars ? `${text.slice(0, maxChars)}...` : text
}

export interface SimulatedEnvironment extends ToolEnvironment {
  /** Model calls made so far (misses of the index). */
  readonly generated: () => number
}

/** Build the simulated environment with the current LanguageModel. */
export const makeSimulatedEnvironment = (options: SimulatedOptions): Effect.Effect<SimulatedEnvironment, never, LanguageModel> =>
  Effect.gen(function* () {
    const model = yield* LanguageModel
    const maxExamples = options.maxExamples ?? DEFAULTS.maxExamples
    const maxExampleChars = options.maxExampleChars ?? DEFAULTS.maxExampleChars
    const storeFile = options.storeDir === undefined ? undefined : join(options.storeDir, SIMULATED_STORE_FILE)
    let generated = 0

    const store = (recording: Recording) =>
      Effect.sync(() => {
        options.index.add(recording)
        if (storeFile === undefined) return
        try {
          if (options.storeRoot !== undefined) refuseSymlinksSync(options.storeRoot, options.storeDir!)
          mkdirSync(options.storeDir!, { recursive: true })
          // the stored copy is redacted: a model may have echoed a key into a simulated response
          appendJsonLine(storeFile, redactValue(recording))
        } catch {
          // a store that cannot be written only costs a model call next run; the response itself is fine
        }
      })

    const simulate = (call: ToolCall): Effect.Effect<ToolResult> => {
      const prompt = renderTemplate("simulate-tool", {
        api_doc: apiDocText(call),
        template: templateText(call.doc.template_response),
        // recorded responses are data (fenced) and may hold a key a server echoed: redacted before they are sent
        examples: fencedData("recorded-examples", redactText(examplesText(options.index.examples(call.stdTool, call.stdApi, maxExamples), maxExampleChars))),
        input: fencedData("api-input", JSON.stringify(call.args))
      })
      return generateObject({
        role: "tool.simulate",
        schema: SimulatedResponse,
        messages: [
          { role: "system", content: prompt.system },
          { role: "user", content: prompt.user }
        ],
        options: { temperature: 0 }
      }).pipe(
        Effect.provideService(LanguageModel, model),
        Effect.tap(() => Effect.sync(() => generated++)),
        Effect.flatMap(({ value }) => {
          const recording: Recording = {
            tool: call.stdTool,
            api: call.stdApi,
            args: canonicalArgs(call.args),
            response: formatRecordedResponse(value.error, value.response),
            cls: "simulated",
            n: 1
          }
          return Effect.as(store(recording), parseRecordedResponse(recording.response))
        }),
        Effect.catch((e) =>
          Effect.succeed<ToolResult>({ ok: false, content: "", error: `the simulated environment could not produce a response: ${e.message}` })
        )
      )
    }

    // concurrent identical misses share one model call instead of generating (and storing) twice
    const inflight = new Map<string, Effect.Effect<ToolResult>>()
    const simulateOnce = (call: ToolCall): Effect.Effect<ToolResult> => {
      const key = `${call.stdTool}\u0000${call.stdApi}\u0000${canonicalArgs(call.args)}`
      const running = inflight.get(key)
      if (running) return running
      return Effect.flatMap(Effect.cached(simulate(call).pipe(Effect.ensuring(Effect.sync(() => inflight.delete(key))))), (shared) => {
        inflight.set(key, shared)
        return shared
      })
    }

    return {
      name: "simulated",
      generated: () => generated,
      serve: (call) =>
        Effect.suspend(() => {
          const recorded = options.index.lookup(call.stdTool, call.stdApi, call.args)
          return recorded ? Effect.succeed(parseRecordedResponse(recorded.response)) : simulateOnce(call)
        })
    } satisfies SimulatedEnvironment
  })
