// The `openai:<model>` provider (any OpenAI-compatible /v1 server): settings from OPENAI_BASE_URL and OPENAI_API_KEY,
// the model wrapped in resilience (or a pool of --endpoints), the doctor's checks, the presence check and its wording.
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { type InvalidModelSpec, ModelNotFound, modelListing } from "../errors.ts"
import type { LanguageModel } from "../language-model.ts"
import { envSetting, MODEL_DEFAULTS, type ModelOptions, resilienceSettings } from "../model-options.ts"
import { listOpenAIModels, makeOpenAIModel, type OpenAISettings } from "../openai.ts"
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
  think: options.think
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

const doctor = (model: string, options: ModelOptions): Effect.Effect<ProviderChecks> =>
  Effect.gen(function* () {
    const settings = openaiSettings(model, options)
    const models = yield* Effect.result(listOpenAIModels(settings))
    if (models._tag === "Failure")
      return {
        checks: [{ name: "server", status: "fail", detail: models.failure.message }],
        problem: "unavailable"
      } satisfies ProviderChecks
    const listed = models.success.includes(model)
    return {
      checks: [
        {
          name: "server",
          status: "pass",
          detail: `the server at ${settings.baseURL} answers (${models.success.length} models listed)`
        },
        listed
          ? { name: "model", status: "pass", detail: `${model} is listed` }
          : {
              name: "model",
              status: "warn",
              detail: `${model} is not in /v1/models; some servers serve it anyway`,
              advice: modelListing(models.success)
            },
        { name: "tools", status: "skip", detail: "OpenAI-compatible servers do not report tool support; assumed" }
      ]
    } satisfies ProviderChecks
  })

/** ModelNotFound when /v1/models lists models and the model is not among them; a server that lists none passes. */
const present = (model: string, options: ModelOptions): Effect.Effect<void, ModelNotFound> =>
  Effect.gen(function* () {
    const listed = yield* Effect.orElseSucceed(listOpenAIModels(openaiSettings(model, options)), () => undefined)
    if (listed !== undefined && listed.length > 0 && !listed.includes(model))
      return yield* Effect.fail(new ModelNotFound({ provider: "openai", model, available: listed }))
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
  concurrency: () => MODEL_DEFAULTS.concurrency.openai,
  wording: {
    unreachable: (host) =>
      `Cannot reach the model server at ${host}. Start the server, or set OPENAI_BASE_URL to where it listens.`,
    modelMissing: (model) =>
      `The server does not serve the model "${model}". Check the name with GET /v1/models, or load the model on the server.`,
    address: "OPENAI_BASE_URL",
    addressPath: "OPENAI_BASE_URL (usually ending in /v1)"
  }
})
