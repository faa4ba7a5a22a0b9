// Health checks of a model setup: server reachable, model present, tool support, one structured reply.
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { z } from "zod"
import { renderTemplate } from "../text/prompt-template.ts"
import { type GenerateError, type InvalidModelSpec, ModelNotFound, type ProviderError } from "./errors.ts"
import type { LanguageModel } from "./language-model.ts"
import { ollamaCapabilities, ollamaModels, ollamaVersion } from "./ollama.ts"
import { listOpenAIModels } from "./openai.ts"
import { type ModelOptions, type ModelSpec, ollamaSettings, openaiSettings, parseModelSpec } from "./spec.ts"
import { readScript, type Script } from "./scripted.ts"
import { generateObject } from "./structured.ts"

export type CheckStatus = "pass" | "warn" | "fail" | "skip"

export interface DoctorCheck {
  readonly name: string
  readonly status: CheckStatus
  /** What was found. */
  readonly detail: string
  /** What to do about it, when something is wrong. */
  readonly advice?: string | undefined
}

/** What went wrong overall, which decides the exit code: a bad spec, an unusable server or model, or a failed reply. */
export type DoctorProblem = "bad-spec" | "unavailable" | "failed"

export interface DoctorReport {
  readonly spec: string
  readonly checks: ReadonlyArray<DoctorCheck>
  readonly problem?: DoctorProblem | undefined
}

/** The reply the structured-output check asks for. */
const Probe = z.object({ ok: z.literal(true), sum: z.number() })
const PROBE_ARGS = { a: 2, b: 3 }

/** The models a server has, for advice when the requested one is missing. */
const listing = (names: ReadonlyArray<string>): string =>
  names.length === 0 ? "The server has no models yet." : `The server has: ${names.slice(0, 12).join(", ")}${names.length > 12 ? ", ..." : ""}.`

/** A spec that cannot be used is bad input; a server nobody answers at or without the model is unavailable; the rest failed the test reply. */
const problemOf = (e: GenerateError | InvalidModelSpec): DoctorProblem =>
  e.kind === "bad-input" ? "bad-spec" : "fatalToTask" in e && e.fatalToTask ? "unavailable" : "failed"

interface ServerChecks {
  readonly checks: ReadonlyArray<DoctorCheck>
  /** Set when the server cannot be used, so that the model call is not tried. */
  readonly problem?: DoctorProblem | undefined
}

const ollamaChecks = (model: string, options: ModelOptions): Effect.Effect<ServerChecks> =>
  Effect.gen(function* () {
    const settings = ollamaSettings(model, options)
    const version = yield* Effect.result(ollamaVersion(settings))
    if (version._tag === "Failure")
      return { checks: [{ name: "server", status: "fail", detail: version.failure.message }], problem: "unavailable" } satisfies ServerChecks
    const server: DoctorCheck = { name: "server", status: "pass", detail: `Ollama ${version.success} is running at ${settings.host}` }
    const capabilities = yield* Effect.result(ollamaCapabilities(settings))
    if (capabilities._tag === "Failure") {
      const names = yield* Effect.orElseSucceed(ollamaModels(settings), () => [] as string[])
      return {
        checks: [server, { name: "model", status: "fail", detail: capabilities.failure.message, advice: capabilities.failure instanceof ModelNotFound ? listing(names) : undefined }],
        problem: "unavailable"
      } satisfies ServerChecks
    }
    const tools = capabilities.success.includes("tools")
    return {
      checks: [
        server,
        { name: "model", status: "pass", detail: `${model} is present (${capabilities.success.join(", ") || "no capabilities reported"})` },
        tools
          ? { name: "tools", status: "pass", detail: `${model} supports native tool calling` }
          : {
              name: "tools",
              status: "warn",
              detail: `${model} does not declare native tool calling`,
              advice: "The agents still work: they choose tools through JSON replies. For native tool calls pick a model with the tools capability (e.g. qwen2.5, llama3.1)."
            }
      ]
    } satisfies ServerChecks
  })

const openaiChecks = (model: string, options: ModelOptions): Effect.Effect<ServerChecks> =>
  Effect.gen(function* () {
    const settings = openaiSettings(model, options)
    const models = yield* Effect.result(listOpenAIModels(settings))
    if (models._tag === "Failure") return { checks: [{ name: "server", status: "fail", detail: models.failure.message }], problem: "unavailable" } satisfies ServerChecks
    const listed = models.success.includes(model)
    return {
      checks: [
        { name: "server", status: "pass", detail: `the server at ${settings.baseURL} answers (${models.success.length} models listed)` },
        listed
          ? { name: "model", status: "pass", detail: `${model} is listed` }
          : { name: "model", status: "warn", detail: `${model} is not in /v1/models; some servers serve it anyway`, advice: listing(models.success) },
        { name: "tools", status: "skip", detail: "OpenAI-compatible servers do not report tool support; assumed" }
      ]
    } satisfies ServerChecks
  })

const serverChecks = (parsed: ModelSpec, options: ModelOptions): Effect.Effect<ServerChecks> => {
  if ("registered" in parsed) return Effect.map(parsed.registered.doctor(parsed.options), (checks) => ({ checks }))
  switch (parsed.provider) {
    case "ollama":
      return ollamaChecks(parsed.model, options)
    case "openai":
      return openaiChecks(parsed.model, options)
    case "scripted":
      return Effect.succeed({ checks: [{ name: "server", status: "skip", detail: `scripted replies from ${parsed.file}; no server involved` }] })
  }
}

/** Whether a script can answer the doctor's probe: a plain list of replies, or replies for the role "doctor" (or "*"). */
const answersProbe = (script: Script): boolean => Array.isArray(script) || Array.isArray((script as Record<string, unknown>)["doctor"]) || Array.isArray((script as Record<string, unknown>)["*"])

/** A scripted model needs no server; its script must be readable, and the probe is asked only when the script can answer it. */
const scriptedChecks = (spec: string, file: string, layer: Layer.Layer<LanguageModel, InvalidModelSpec>): Effect.Effect<DoctorReport> =>
  Effect.gen(function* () {
    const server: DoctorCheck = { name: "server", status: "skip", detail: "a scripted model needs no server: nothing to start or pull" }
    const script = yield* Effect.result(readScript(file))
    if (script._tag === "Failure") return { spec, checks: [server, { name: "script", status: "fail", detail: script.failure.message }], problem: "bad-spec" } satisfies DoctorReport
    const roles = Array.isArray(script.success) ? `${script.success.length} replies` : `replies for ${Object.keys(script.success).filter((k) => !k.startsWith("$")).join(", ")}`
    const read: DoctorCheck = { name: "script", status: "pass", detail: `${file} holds ${roles}` }
    if (!answersProbe(script.success))
      return { spec, checks: [server, read, { name: "structured output", status: "skip", detail: 'the script has no reply for the probe (role "doctor"); replies are only what the script holds' }] } satisfies DoctorReport
    const structured = yield* structuredCheck(layer)
    return { spec, checks: [server, read, structured.check], problem: structured.problem } satisfies DoctorReport
  })

/** One small structured-output call through the model layer the commands use. */
const structuredCheck = (layer: Layer.Layer<LanguageModel, InvalidModelSpec>): Effect.Effect<{ check: DoctorCheck; problem?: DoctorProblem }> => {
  const prompt = renderTemplate("doctor", PROBE_ARGS)
  const ask = generateObject({
    role: "doctor",
    schema: Probe,
    messages: [
      { role: "system", content: prompt.system },
      { role: "user", content: prompt.user }
    ]
  })
  return Effect.provide(ask, layer).pipe(
    Effect.map((result) => {
      const expected = PROBE_ARGS.a + PROBE_ARGS.b
      const arithmetic = result.value.sum === expected ? "" : `; its arithmetic was off (${result.value.sum} for ${expected})`
      const tries = result.attempts > 1 ? ` after ${result.attempts} attempts` : ""
      return {
        check: {
          name: "structured output",
          status: "pass" as const,
          detail: `a valid JSON reply${tries} in ${Math.round(result.response.durationMs)} ms (${result.response.usage.promptTokens}+${result.response.usage.completionTokens} tokens)${arithmetic}`
        }
      }
    }),
    Effect.catch((e: ProviderError | InvalidModelSpec | GenerateError) =>
      Effect.succeed({ check: { name: "structured output", status: "fail" as const, detail: e.message }, problem: problemOf(e) })
    )
  )
}

/**
 * Run the checks for a spec. `layer` is the model the commands would use (so that `sim` and
 * `scripted` work too); the server checks talk to Ollama or the OpenAI-compatible server directly.
 * Never fails: every problem is a check in the report.
 */
export const runDoctor = (spec: string, layer: Layer.Layer<LanguageModel, InvalidModelSpec>, options: ModelOptions = {}): Effect.Effect<DoctorReport> =>
  Effect.gen(function* () {
    const parsed = yield* Effect.result(parseModelSpec(spec))
    if (parsed._tag === "Failure") return { spec, checks: [{ name: "model spec", status: "fail", detail: parsed.failure.message }], problem: "bad-spec" } satisfies DoctorReport
    if (!("registered" in parsed.success) && parsed.success.provider === "scripted") return yield* scriptedChecks(spec, parsed.success.file, layer)
    const server = yield* serverChecks(parsed.success, options)
    if (server.problem)
      return { spec, checks: [...server.checks, { name: "structured output", status: "skip", detail: "not tried: fix the problem above first" }], problem: server.problem } satisfies DoctorReport
    const structured = yield* structuredCheck(layer)
    return { spec, checks: [...server.checks, structured.check], problem: structured.problem } satisfies DoctorReport
  })
