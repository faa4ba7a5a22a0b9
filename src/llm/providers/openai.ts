// The `openai:<model>` provider (any OpenAI-compatible /v1 server): settings from OPENAI_BASE_URL and OPENAI_API_KEY,
// the model wrapped in resilience (or a pool of --endpoints), the doctor's checks, the presence check and its wording.
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { openaiServerContextAdvice } from "../context-overflow.ts"
import { type InvalidModelSpec, ModelNotFound, modelListing } from "../errors.ts"
import type { LanguageModel } from "../language-model.ts"
import { envSetting, MODEL_DEFAULTS, type ModelOptions, resilienceSettings } from "../model-options.ts"
import {
  listOpenAIModels,
  llamaServerSlots,
  makeOpenAIModel,
  type OpenAIServerModels,
  type OpenAISettings,
  openaiServerModels
} from "../openai.ts"
import { type ServedModel, servedLayer } from "../pool.ts"
import { type ProviderChecks, registerProvider } from "../providers.ts"
import { resilient } from "../resilience.ts"

/** OpenAI-compatible settings for a model, defaults and environment applied. */
export const openaiSettings = (model: string, options: ModelOptions = {}): OpenAISettings => ({
  model,
  baseURL: (options.baseURL ?? envSetting("OPENAI_BASE_URL") ?? MODEL_DEFAULTS.openaiBaseURL).replace(/\/+$/, ""),
  apiKey: options.apiKey ?? envSetting("OPENAI_API_KEY") ?? MODEL_DEFAULTS.openaiApiKey,
  numCtx: options.numCtx ?? MODEL_DEFAULTS.numCtx,
  timeoutMs: options.timeoutMs ?? MODEL_DEFAULTS.timeoutMs,
  seed: options.seed ?? MODEL_DEFAULTS.seed,
  temperature: options.temperature ?? MODEL_DEFAULTS.temperature,
  supportsTools: options.supportsTools,
  think: options.think,
  slotAffinity: options.slotAffinity
})

/** The model at one server (`url`: an endpoint of --endpoints), wrapped in that server's resilience. */
const served = (model: string, options: ModelOptions, url?: string): ServedModel => {
  const own = url === undefined ? options : { ...options, baseURL: url }
  const settings = openaiSettings(model, own)
  const resilience = resilienceSettings("openai", settings.baseURL, own)
  return {
    model: resilient(makeOpenAIModel(settings), resilience),
    concurrency: resilience.concurrency,
    probe: listOpenAIModels(settings)
  }
}

/** The settings of the model at the default server, environment applied: calls that agree on them may share one model. */
const settingsKey = (model: string, options: ModelOptions): string => {
  const settings = openaiSettings(model, options)
  return JSON.stringify([settings, resilienceSettings("openai", settings.baseURL, options)])
}

const layer = (model: string, _spec: string, options: ModelOptions): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  servedLayer(options, (options, url) => served(model, options, url))

/**
 * What the server's /v1/models says of `model` before a run: refused (ModelNotFound) when the server serves models
 * by name and lists others only (vLLM, llama.cpp's router, Ollama); warnings when it serves any name (llama.cpp's
 * server with one model: it lists the file's path) or its window is smaller than the one smurfs fits prompts to.
 */
export const modelCheck = (
  model: string,
  options: ModelOptions,
  served: OpenAIServerModels
): { readonly missing: boolean; readonly warnings: ReadonlyArray<string> } => {
  const listed = served.ids.includes(model)
  const anyName = served.server === "llama.cpp"
  const warnings: Array<string> = []
  if (!listed && anyName)
    warnings.push(
      `llama.cpp's server serves one model under any name: "${model}" runs ${served.ids[0] ?? "the model it loaded"}.`
    )
  const numCtx = options.numCtx ?? MODEL_DEFAULTS.numCtx
  if (served.contextTokens !== undefined && served.contextTokens < numCtx)
    warnings.push(
      `the server's context window is ${served.contextTokens} tokens, smaller than the ${numCtx} smurfs fits its prompts to (--num-ctx): set --num-ctx ${served.contextTokens}, or start the server with a larger window (${served.server === "vLLM" ? "vLLM --max-model-len" : "llama-server -c"}).`
    )
  return { missing: !listed && !anyName && served.ids.length > 0, warnings }
}

const doctor = (model: string, options: ModelOptions): Effect.Effect<ProviderChecks> =>
  Effect.gen(function* () {
    const settings = openaiSettings(model, options)
    const models = yield* Effect.result(openaiServerModels(settings))
    if (models._tag === "Failure")
      return {
        checks: [{ name: "server", status: "fail", detail: models.failure.message }],
        problem: "unavailable"
      } satisfies ProviderChecks
    const served = models.success
    const check = modelCheck(model, options, served)
    const listed = served.ids.includes(model)
    return {
      checks: [
        {
          name: "server",
          status: "pass",
          detail: `the ${served.server === undefined ? "server" : `${served.server} server`} at ${settings.baseURL} answers (${served.ids.length} models listed)`
        },
        listed
          ? { name: "model", status: "pass", detail: `${model} is listed` }
          : check.missing
            ? {
                name: "model",
                status: "fail",
                detail: `${model} is not in /v1/models, and this server serves only the models it lists`,
                advice: modelListing(served.ids)
              }
            : served.server === "llama.cpp"
              ? { name: "model", status: "warn", detail: check.warnings[0] ?? `${model} is served under any name` }
              : {
                  name: "model",
                  status: "warn",
                  detail: `${model} is not in /v1/models; some servers serve it anyway`,
                  advice: modelListing(served.ids)
                },
        ...(served.contextTokens !== undefined && served.contextTokens < (options.numCtx ?? MODEL_DEFAULTS.numCtx)
          ? [{ name: "context", status: "warn" as const, detail: check.warnings.at(-1) ?? "" }]
          : []),
        { name: "tools", status: "skip", detail: "OpenAI-compatible servers do not report tool support; assumed" }
      ],
      ...(check.missing ? { problem: "unavailable" as const } : {})
    } satisfies ProviderChecks
  })

/** ModelNotFound when the server serves models by name and lists others only; warnings otherwise (see modelCheck). */
const present = (model: string, options: ModelOptions): Effect.Effect<ReadonlyArray<string>, ModelNotFound> =>
  Effect.gen(function* () {
    const served = yield* Effect.orElseSucceed(openaiServerModels(openaiSettings(model, options)), () => undefined)
    if (served === undefined) return []
    const check = modelCheck(model, options, served)
    if (check.missing)
      return yield* Effect.fail(new ModelNotFound({ provider: "openai", model, available: served.ids }))
    return check.warnings
  })

registerProvider({
  name: "openai",
  usage: "openai:<model>",
  restName: "model",
  refuse: (rest) => (rest === "" ? 'the model name after "openai:" is missing' : undefined),
  layer,
  settingsKey,
  doctor,
  present,
  portable: () => true,
  // llama.cpp's server says its slots at /props; other servers (vLLM, Ollama's /v1) say none
  slots: (model, options) => Effect.promise(() => llamaServerSlots(openaiSettings(model, options))),
  concurrency: () => MODEL_DEFAULTS.concurrency.openai,
  wording: {
    unreachable: (host) =>
      `Cannot reach the model server at ${host}. Start the server, or set OPENAI_BASE_URL to where it listens.`,
    modelMissing: (model) =>
      `The server does not serve the model "${model}". Check the name with GET /v1/models, or load the model on the server.`,
    address: "OPENAI_BASE_URL",
    addressPath: "OPENAI_BASE_URL (usually ending in /v1)",
    contextAdvice: openaiServerContextAdvice
  }
})
