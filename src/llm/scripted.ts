// A deterministic model whose replies come from a script: a list, or lists keyed by agent role.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { readFileBounded } from "../trace/guarded-fs.ts"
import { InvalidModelSpec, ModelServerError } from "./errors.ts"
import { type GenerateRequest, type GenerateResponse, LanguageModel, type ToolCallRequest } from "./language-model.ts"

/** One scripted reply: text, a JSON value (sent as its JSON text), native tool calls, or a function of the request. */
export type ScriptedReply =
  | string
  | { readonly toolCalls: ReadonlyArray<ToolCallRequest>; readonly text?: string }
  | ((request: GenerateRequest) => string | object)
  | Record<string, unknown>
  | ReadonlyArray<unknown>

/**
 * A script. A list is consumed in order by every role; a record maps a role (or a role prefix such
 * as "executor", or "*") to its own list. `cycle` restarts a list when it runs out instead of failing.
 */
export type Script =
  | ReadonlyArray<ScriptedReply>
  | { readonly [role: string]: ReadonlyArray<ScriptedReply> | boolean | undefined; readonly $cycle?: boolean }

/** A rough token count (4 characters a token) for providers that report none. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

const isToolCallsReply = (r: unknown): r is { toolCalls: ReadonlyArray<ToolCallRequest>; text?: string } =>
  typeof r === "object" && r !== null && !Array.isArray(r) && Array.isArray((r as { toolCalls?: unknown }).toolCalls)

/** The list of replies a role draws from: exact role, then its prefixes ("executor.choose" -> "executor"), then "*". */
const queueKey = (script: Script, role: string): string | undefined => {
  if (Array.isArray(script)) return "*"
  const record = script as Record<string, unknown>
  const parts = role.split(".")
  for (let i = parts.length; i > 0; i--) {
    const key = parts.slice(0, i).join(".")
    if (Array.isArray(record[key])) return key
  }
  return Array.isArray(record["*"]) ? "*" : undefined
}

export const makeScriptedModel = (script: Script, name = "scripted") => {
  const cursors = new Map<string, number>()
  const cycle = !Array.isArray(script) && (script as { $cycle?: boolean }).$cycle === true
  const generate = (request: GenerateRequest) =>
    Effect.suspend(() => {
      const started = Date.now()
      const key = queueKey(script, request.role)
      const list =
        key === undefined
          ? undefined
          : ((Array.isArray(script)
              ? script
              : (script as Record<string, unknown>)[key]) as ReadonlyArray<ScriptedReply>)
      if (!list || list.length === 0)
        return Effect.fail(
          new ModelServerError({ host: name, detail: `the script has no replies for role "${request.role}"` })
        )
      const index = cursors.get(key!) ?? 0
      if (index >= list.length && !cycle)
        return Effect.fail(
          new ModelServerError({
            host: name,
            detail: `the script ran out of replies for role "${request.role}" after ${list.length}`
          })
        )
      cursors.set(key!, index + 1)
      const entry = list[index % list.length]!
      const reply = typeof entry === "function" ? entry(request) : entry
      const toolCalls = isToolCallsReply(reply) ? reply.toolCalls : undefined
      const text =
        typeof reply === "string"
          ? reply
          : toolCalls
            ? ((reply as { text?: string }).text ?? "")
            : JSON.stringify(reply)
      const promptText = request.messages.map((m) => m.content).join("\n")
      const response: GenerateResponse = {
        text,
        toolCalls,
        usage: { promptTokens: estimateTokens(promptText), completionTokens: estimateTokens(text) },
        model: name,
        durationMs: Date.now() - started
      }
      return Effect.succeed(response)
    })
  return LanguageModel.of({
    info: { spec: `scripted:${name}`, provider: "scripted", model: name, contextTokens: 32_768, supportsTools: true },
    generate
  })
}

/** A scripted model Layer from a script value. */
export const scriptedLayer = (script: Script, name = "scripted") =>
  Layer.sync(LanguageModel, () => makeScriptedModel(script, name))

/** Read a script file (JSON); a clear error when it is missing or malformed. */
export const readScript = (file: string): Effect.Effect<Script, InvalidModelSpec> =>
  Effect.try({
    try: () => JSON.parse(readFileBounded(file)) as unknown,
    catch: (e) =>
      new InvalidModelSpec({
        spec: `scripted:${file}`,
        reason: `cannot read the script file (${(e as Error).message})`
      })
  }).pipe(
    Effect.flatMap((value) =>
      Array.isArray(value) || (typeof value === "object" && value !== null)
        ? Effect.succeed(value as Script)
        : Effect.fail(
            new InvalidModelSpec({
              spec: `scripted:${file}`,
              reason: "the script must be a JSON list of replies or an object of lists keyed by role"
            })
          )
    )
  )

/** A scripted model Layer from a JSON file. */
export const scriptedFileLayer = (file: string) =>
  Layer.effect(
    LanguageModel,
    Effect.map(readScript(file), (script) => makeScriptedModel(script, file))
  )
