// The `llama:<file.gguf | hf:... | https://... >` provider: the embedded llama.cpp engine (src/llm/llama.ts). A loaded
// model is held per file and settings for the process and released when its last user lets go; its doctor says what
// binary runs it, where, and whether the machine has the memory.
import { freemem } from "node:os"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { plural } from "../../plural.ts"
import { InvalidModelSpec } from "../errors.ts"
import { LanguageModel } from "../language-model.ts"
import {
  checkGgufHeader,
  defaultThreads,
  generateOn,
  type LlamaEngine,
  type LlamaSettings,
  llamaBinding,
  loadEngine,
  loadFailureMessage,
  loadNodeLlama,
  requestFailure
} from "../llama.ts"
import { offlineByEnv } from "../model-files/cache-dir.ts"
import { DownloadUnavailable } from "../model-files/errors.ts"
import {
  DEFAULT_MODEL_BYTES,
  DEFAULT_MODEL_SOURCE,
  modelSourceStatus,
  normalizeModelSource,
  pullCommand
} from "../model-files/source.ts"
import { ModelLane } from "../model-lanes.ts"
import { envSetting, MODEL_DEFAULTS, type ModelOptions } from "../model-options.ts"
import { isLocalSource, resolveModelSource } from "../model-source.ts"
import { ModelTask } from "../model-task.ts"
import { tryPromiseWithin } from "../provider-errors.ts"
import { type ProviderCheck, type ProviderChecks, registerProvider } from "../providers.ts"

const GPU_SETTINGS: Readonly<Record<string, LlamaSettings["gpu"]>> = {
  auto: "auto",
  off: false,
  false: false,
  cpu: false,
  cuda: "cuda",
  vulkan: "vulkan",
  metal: "metal"
}

const positiveInteger = (text: string | undefined): number | undefined => {
  const n = Number(text)
  return Number.isInteger(n) && n > 0 ? n : undefined
}

/** The engine's settings for a source, defaults and environment (SMURFS_LLAMA_THREADS, SMURFS_LLAMA_GPU) applied. */
export const llamaSettings = (source: string, options: ModelOptions = {}): LlamaSettings => ({
  source,
  contextSize: options.numCtx,
  sequences: Math.max(1, options.concurrency ?? MODEL_DEFAULTS.concurrency.llama),
  threads: options.threads ?? positiveInteger(envSetting("SMURFS_LLAMA_THREADS")) ?? defaultThreads(),
  gpu: GPU_SETTINGS[(envSetting("SMURFS_LLAMA_GPU") ?? "auto").toLowerCase()] ?? "auto",
  timeoutMs: options.timeoutMs ?? MODEL_DEFAULTS.timeoutMs,
  seed: options.seed ?? MODEL_DEFAULTS.seed,
  temperature: options.temperature ?? MODEL_DEFAULTS.temperature
})

/** The settings that decide what is loaded: equal ones share one engine. */
const engineKey = (s: LlamaSettings): string => JSON.stringify([s.source, s.contextSize, s.sequences, s.threads, s.gpu])

/** How long an engine nobody holds stays loaded: a model built per task, or a simulator between its calls, finds it. */
const IDLE_MS = 30_000

interface Held {
  readonly engine: Promise<LlamaEngine>
  refs: number
  idle?: ReturnType<typeof setTimeout> | undefined
}
const held = new Map<string, Held>()

/** The engine of these settings, loaded on first use; each hold is let go once (`letGo`). */
const holdEngine = (settings: LlamaSettings): Promise<LlamaEngine> => {
  const key = engineKey(settings)
  let entry = held.get(key)
  if (entry === undefined) {
    const created: Held = { engine: loadEngine(settings), refs: 0 }
    // a load that failed is not kept: the next user tries again (and is told again)
    created.engine.catch(() => {
      if (held.get(key) === created) held.delete(key)
    })
    held.set(key, created)
    entry = created
  }
  entry.refs++
  clearTimeout(entry.idle)
  return entry.engine
}

const letGo = (settings: LlamaSettings): void => {
  const key = engineKey(settings)
  const entry = held.get(key)
  if (entry === undefined) return
  entry.refs = Math.max(0, entry.refs - 1)
  if (entry.refs > 0) return
  clearTimeout(entry.idle)
  // the timer keeps no process alive: a program that is done exits, the model with it
  entry.idle = setTimeout(() => {
    if (entry.refs > 0 || held.get(key) !== entry) return
    held.delete(key)
    entry.engine.then((e) => e.dispose()).catch(() => undefined)
  }, IDLE_MS)
  entry.idle.unref?.()
}

/** Engines loaded now (tests: they are released when let go). */
export const loadedLlamaEngines = (): number => held.size

/** Let go of every idle engine at once (tests, and a process that wants its memory back). */
export const disposeIdleLlamaEngines = async (): Promise<void> => {
  const idle = [...held.entries()].filter(([, e]) => e.refs === 0)
  for (const [key, entry] of idle) {
    clearTimeout(entry.idle)
    held.delete(key)
  }
  await Promise.all(idle.map(([, e]) => e.engine.then((x) => x.dispose()).catch(() => undefined)))
}

/** A load that failed as the layer's error: a whole message (the file, the package to install), or a bug. */
const loadError = (spec: string, e: unknown): InvalidModelSpec => {
  const said = loadFailureMessage(e)
  if (said === undefined) throw e
  // a model that could not be downloaded is unavailable (exit 4), as a server that cannot be reached
  return new InvalidModelSpec({ spec, reason: said, whole: true, unavailable: e instanceof DownloadUnavailable })
}

const layer = (source: string, spec: string, options: ModelOptions): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  Layer.effect(
    LanguageModel,
    Effect.gen(function* () {
      const settings = llamaSettings(source, options)
      const engine = yield* Effect.acquireRelease(
        Effect.tryPromise({ try: () => holdEngine(settings), catch: (e) => loadError(spec, e) }),
        () => Effect.sync(() => letGo(settings))
      )
      return LanguageModel.of({
        info: {
          spec,
          provider: "llama",
          model: engine.path,
          contextTokens: engine.contextSize,
          supportsTools: true
        },
        generate: (request) => {
          const timeoutMs = request.options?.timeoutMs ?? settings.timeoutMs
          // the task's requests go back to its own sequence while it lives
          return Effect.flatMap(Effect.all([Effect.service(ModelTask), Effect.service(ModelLane)]), ([task, lane]) =>
            tryPromiseWithin(
              timeoutMs,
              async (signal) => {
                // held for the request: a model whose layer is gone (a simulator built apart) stays loaded while used
                const current = await holdEngine(settings)
                try {
                  return await generateOn(current, settings, request, signal, task, lane)
                } finally {
                  letGo(settings)
                }
              },
              (e, timedOut) => requestFailure(e, request, timeoutMs, timedOut, engine.path)
            )
          )
        },
        timeoutMs: settings.timeoutMs
      })
    })
  )

const megabytes = (bytes: number): string =>
  bytes < 1024 * 1024
    ? `${Math.ceil(bytes / 1024)} KB`
    : `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`

const doctor = (source: string, options: ModelOptions): Effect.Effect<ProviderChecks> =>
  Effect.promise(async (): Promise<ProviderChecks> => {
    const settings = llamaSettings(source, options)
    const checks: Array<ProviderCheck> = []
    // a model still to download: doctor says what and where, and fetches nothing (`smurfs pull` does, or the first run)
    const status = (() => {
      try {
        return modelSourceStatus(source)
      } catch {
        return undefined // a malformed source: resolveModelSource below says what is wrong
      }
    })()
    if (status !== undefined && !status.present && status.kind !== "path") {
      const offline = offlineByEnv()
      const size =
        normalizeModelSource(source) === DEFAULT_MODEL_SOURCE
          ? `${(await import("../model-files/progress.ts")).formatBytes(DEFAULT_MODEL_BYTES)} `
          : ""
      return {
        checks: [
          {
            name: "model file",
            status: offline ? "fail" : "warn",
            detail: `${status.source} is not downloaded yet: ${size}from ${status.url ?? status.source}${status.path ? ` into ${status.path}` : " into the model cache"}`,
            advice: `\`${pullCommand(source)}\` fetches it now (the first run fetches it too)${offline ? "; offline (SMURFS_OFFLINE or HF_HUB_OFFLINE) nothing is fetched" : ""}`
          }
        ],
        ...(offline
          ? { problem: "unavailable" as const }
          : {
              instead: {
                name: "structured reply",
                status: "skip" as const,
                detail: "tried once the model file is here"
              }
            })
      }
    }
    let path: string
    try {
      path = await resolveModelSource(source)
      checkGgufHeader(path)
    } catch (e) {
      return {
        checks: [{ name: "model file", status: "fail", detail: loadFailureMessage(e) ?? String(e) }],
        problem: "bad-spec"
      }
    }
    let m: Awaited<ReturnType<typeof loadNodeLlama>>
    let llama: Awaited<ReturnType<typeof llamaBinding>>
    try {
      m = await loadNodeLlama()
      llama = await llamaBinding(settings.gpu)
    } catch (e) {
      return {
        checks: [{ name: "engine", status: "fail", detail: loadFailureMessage(e) ?? String(e) }],
        problem: "bad-spec"
      }
    }
    const devices = llama.gpu === false ? [] : await llama.getGpuDeviceNames().catch(() => [] as string[])
    checks.push({
      name: "engine",
      status: "pass",
      detail: `node-llama-cpp ${await m.getModuleVersion()}, ${llama.buildType} binary, ${llama.gpu === false ? "CPU" : `${llama.gpu} GPU${devices.length > 0 ? ` (${devices.join(", ")})` : ""}`}, ${plural(settings.threads, "thread")}`
    })
    const info = await m.readGgufFileInfo(path).catch((e: unknown) => e as Error)
    if (info instanceof Error)
      return {
        checks: [
          ...checks,
          { name: "model file", status: "fail", detail: `${path} cannot be read as GGUF: ${info.message}` }
        ],
        problem: "bad-spec"
      }
    const { size } = await import("node:fs/promises").then((fs) => fs.stat(path))
    const architecture = (info.metadata as { general?: { architecture?: string } }).general?.architecture ?? "unknown"
    checks.push({
      name: "model file",
      status: "pass",
      detail: `${path} (${megabytes(size)}, GGUF v${info.version}, ${architecture})`
    })
    try {
      const insights = await m.GgufInsights.from(info, llama)
      const contextSize = settings.contextSize ?? Math.min(8192, insights.trainContextSize ?? 8192)
      const modelNeeds = await insights.estimateModelResourceRequirementsV2({ gpuLayers: 0 })
      const contextNeeds = await insights.estimateContextResourceRequirementsV2({
        contextSize,
        modelGpuLayers: 0,
        sequences: settings.sequences
      })
      const needed = modelNeeds.cpuRam + contextNeeds.cpuRam
      const free = freemem()
      checks.push({
        name: "memory",
        status: needed <= free ? "pass" : "warn",
        detail: `about ${megabytes(needed)} for the model and a context of ${contextSize} tokens × ${plural(settings.sequences, "sequence")}; ${megabytes(free)} free`,
        ...(needed <= free ? {} : { advice: "Lower --num-ctx or --concurrency, or use a smaller quantisation." })
      })
    } catch (e) {
      checks.push({ name: "memory", status: "skip", detail: `not estimated (${(e as Error).message})` })
    }
    return { checks }
  })

registerProvider({
  name: "llama",
  usage: "llama:<file.gguf>",
  bare: true,
  restName: "source",
  claims: (bare) => /\.gguf$/i.test(bare),
  layer,
  settingsKey: (source, options) => engineKey(llamaSettings(source, options)),
  doctor,
  // a file is the machine's own; a model anyone can fetch may travel in a queue job
  portable: (source) => !isLocalSource(source),
  // a sequence per request in flight, each its own cache
  slots: (source, options) => Effect.succeed(llamaSettings(source, options).sequences),
  concurrency: () => MODEL_DEFAULTS.concurrency.llama,
  wording: {
    unreachable: () =>
      "The embedded llama.cpp engine could not run the model. Check `smurfs doctor --model llama:...`.",
    modelMissing: (model) => `The model file ${model} cannot be used. Check the path after "llama:".`,
    address: "the path after llama:"
  }
})
