// The `ollama:<model>` provider: settings from OLLAMA_HOST, the model wrapped in resilience (or a pool of
// --endpoints), the doctor's server/model/tools checks, the presence check before a run, and Ollama's wording.
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { type InvalidModelSpec, ModelNotFound, modelListing } from "../errors.ts"
import type { LanguageModel } from "../language-model.ts"
import { envSetting, MODEL_DEFAULTS, type ModelOptions, resilienceSettings } from "../model-options.ts"
import {
  normalizeOllamaHost,
  type OllamaSettings,
  ollamaCapabilities,
  ollamaModel,
  ollamaModels,
  ollamaVersion
} from "../ollama.ts"
import { type ServedModel, servedLayer } from "../pool.ts"
import { type ProviderCheck, type ProviderChecks, registerProvider } from "../providers.ts"
import { resilient } from "../resilience.ts"

/** Ollama settings for a model, defaults and environment applied. */
export const ollamaSettings = (model: string, options: ModelOptions = {}): OllamaSettings => ({
  model,
  host: normalizeOllamaHost(options.host ?? envSetting("OLLAMA_HOST")),
  numCtx: options.numCtx ?? MODEL_DEFAULTS.numCtx,
  keepAlive: options.keepAlive ?? MODEL_DEFAULTS.keepAlive,
  timeoutMs: options.timeoutMs ?? MODEL_DEFAULTS.timeoutMs,
  seed: options.seed ?? MODEL_DEFAULTS.seed,
  temperature: options.temperature ?? MODEL_DEFAULTS.temperature,
  supportsTools: options.supportsTools,
  think: options.think
})

/** The model at one server (`url`: an endpoint of --endpoints), wrapped in that server's resilience. */
const served = (model: string, options: ModelOptions, url?: string): ServedModel => {
  const own = url === undefined ? options : { ...options, host: url }
  const settings = ollamaSettings(model, own)
  const resilience = resilienceSettings("ollama", settings.host, own)
  return {
    model: Effect.flatMap(ollamaModel(settings), (m) => resilient(m, resilience)),
    concurrency: resilience.concurrency,
    probe: ollamaVersion(settings)
  }
}

/** The settings of the model at the default server, environment applied: calls that agree on them may share one model. */
const settingsKey = (model: string, options: ModelOptions): string => {
  const settings = ollamaSettings(model, options)
  return JSON.stringify([settings, resilienceSettings("ollama", settings.host, options)])
}

const layer = (model: string, _spec: string, options: ModelOptions): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  servedLayer(options, (options, url) => served(model, options, url))

const doctor = (model: string, options: ModelOptions): Effect.Effect<ProviderChecks> =>
  Effect.gen(function* () {
    const settings = ollamaSettings(model, options)
    const version = yield* Effect.result(ollamaVersion(settings))
    if (version._tag === "Failure")
      return {
        checks: [{ name: "server", status: "fail", detail: version.failure.message }],
        problem: "unavailable"
      } satisfies ProviderChecks
    const server: ProviderCheck = {
      name: "server",
      status: "pass",
      detail: `Ollama ${version.success} is running at ${settings.host}`
    }
    const capabilities = yield* Effect.result(ollamaCapabilities(settings))
    if (capabilities._tag === "Failure") {
      const names = yield* Effect.orElseSucceed(ollamaModels(settings), () => [] as string[])
      return {
        checks: [
          server,
          {
            name: "model",
            status: "fail",
            detail: capabilities.failure.message,
            advice: capabilities.failure instanceof ModelNotFound ? modelListing(names) : undefined
          }
        ],
        problem: "unavailable"
      } satisfies ProviderChecks
    }
    const tools = capabilities.success.includes("tools")
    return {
      checks: [
        server,
        {
          name: "model",
          status: "pass",
          detail: `${model} is present (${capabilities.success.join(", ") || "no capabilities reported"})`
        },
        tools
          ? { name: "tools", status: "pass", detail: `${model} supports native tool calling` }
          : {
              name: "tools",
              status: "warn",
              detail: `${model} does not declare native tool calling`,
              advice:
                "The agents still work: they choose tools through JSON replies. For native tool calls pick a model with the tools capability (e.g. qwen2.5, llama3.1)."
            }
      ]
    } satisfies ProviderChecks
  })

/** ModelNotFound (naming the models the server has) when /api/show says the model is missing; anything else passes. */
const present = (model: string, options: ModelOptions): Effect.Effect<ReadonlyArray<string>, ModelNotFound> =>
  Effect.gen(function* () {
    const settings = ollamaSettings(model, options)
    const shown = yield* Effect.result(ollamaCapabilities(settings))
    if (shown._tag === "Success" || shown.failure._tag !== "ModelNotFound") return []
    const available = yield* Effect.orElseSucceed(ollamaModels(settings), () => undefined)
    return yield* Effect.fail(new ModelNotFound({ provider: "ollama", model, available }))
  })

/** OLLAMA_NUM_PARALLEL when this machine runs the server too: the number of requests Ollama serves at once. */
const ollamaParallel = (): number | undefined => {
  const value = Number(envSetting("OLLAMA_NUM_PARALLEL"))
  return Number.isInteger(value) && value > 0 ? value : undefined
}

/**
 * Whether Ollama's registry could hold a model of this name ([host/][namespace/]model[:tag], as `ollama pull` takes it),
 * so that `ollama pull` is suggested only where it can work: never for a path, a file or a name with spaces.
 */
export const pullableName = (model: string): boolean =>
  /^(?:[a-z0-9][a-z0-9._-]*\/){0,2}[a-z0-9][a-z0-9._-]*(?::[a-z0-9_][a-z0-9._-]{0,127})?$/i.test(model) &&
  !model.includes("..") &&
  !/\.(gguf|bin|json|safetensors)$/i.test(model)

registerProvider({
  name: "ollama",
  usage: "ollama:<model>",
  restName: "model",
  refuse: (rest) => (rest === "" ? 'the model name after "ollama:" is missing' : undefined),
  // a bare name that is no file is an Ollama model (the default provider)
  claims: (bare) => !/\.(json|gguf)$/i.test(bare),
  layer,
  settingsKey,
  doctor,
  present,
  portable: () => true,
  // Ollama says nothing of its slots: the requests it serves at once, as the user gave them (--model-concurrency) or
  // set them for the server on this machine
  slots: (_model, options) => Effect.succeed(options.concurrency ?? ollamaParallel()),
  concurrency: () => ollamaParallel() ?? MODEL_DEFAULTS.concurrency.ollama,
  wording: {
    unreachable: (host) =>
      `Cannot reach Ollama at ${host}. Start it with \`ollama serve\` (or open the Ollama app), or set OLLAMA_HOST to where it listens.`,
    modelMissing: (model) =>
      pullableName(model)
        ? `Ollama does not have the model "${model}". Download it with \`ollama pull ${model}\`.`
        : `Ollama does not have the model "${model}", and no registry could: a model's name is [host/][namespace/]name[:tag] (e.g. qwen2.5:7b). Check the spelling; \`ollama list\` shows the models it has.`,
    address: "OLLAMA_HOST",
    contextAdvice: () => "Raise --num-ctx (sent to Ollama as num_ctx with every request) or use fewer tools."
  }
})
