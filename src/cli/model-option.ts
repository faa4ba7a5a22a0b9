// The --model option of every command: a spec to a LanguageModel layer, the benchmark's simulated model included.
import { Effect, Layer } from "effect"
import { InvalidModelSpec } from "../llm/errors.ts"
import type { LanguageModel } from "../llm/language-model.ts"
import { DEFAULT_MODEL_SPEC, modelLayer, type ModelOptions, PROVIDERS } from "../llm/spec.ts"
import { closest } from "./did-you-mean.ts"

/** The spec a command uses when --model is not given: SMURFS_MODEL, else the default local model. */
export const defaultModelSpec = (): string => {
  const fromEnv = process.env.SMURFS_MODEL?.trim()
  return fromEnv && fromEnv.length > 0 ? fromEnv : DEFAULT_MODEL_SPEC
}

/**
 * A bare Ollama model name (`qwen2.5:7b`, `llama3.1`) is read as `ollama:<name>`, with a notice to
 * say so. A provider that is a typo (`olama:x`) or a script file (`x.json`) is left alone, so the
 * spec's own error names the fix.
 */
export const normalizeModelSpec = (spec: string): { spec: string; notice?: string } => {
  const trimmed = spec.trim()
  if (trimmed === "" || trimmed === "sim") return { spec: trimmed }
  const prefix = trimmed.includes(":") ? trimmed.slice(0, trimmed.indexOf(":")).toLowerCase() : trimmed.toLowerCase()
  if ((PROVIDERS as ReadonlyArray<string>).includes(prefix)) return { spec: trimmed }
  if (/\.(json|jsonl)$/i.test(trimmed) || trimmed.includes("/") && !trimmed.includes(":")) return { spec: trimmed }
  // a one-letter slip of a provider's name (olama:, opnai:), not a model family that merely looks alike (llama3:)
  const typo = closest(prefix, PROVIDERS)
  if (trimmed.includes(":") && /^[a-z]+$/.test(prefix) && typo !== undefined && typo[0] === prefix[0]) return { spec: trimmed }
  return { spec: `ollama:${trimmed}`, notice: `"${trimmed}" is read as ollama:${trimmed} (write openai:, scripted: or sim for another provider)` }
}

const isSim = (spec: string): boolean => {
  const trimmed = spec.trim()
  return trimmed === "sim" || trimmed.startsWith("sim:")
}

/**
 * The simulated model lives with the benchmark (bench/sim), above the library's layers, so it is
 * loaded on demand; a build without it fails with a clear InvalidModelSpec.
 */
const simLayer = (spec: string): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  Layer.unwrap(
    Effect.tryPromise({
      try: async () => {
        const module = (await import("../../bench/sim/index.ts")) as { simModelLayer?: (spec: string) => Layer.Layer<LanguageModel, InvalidModelSpec> }
        if (typeof module.simModelLayer !== "function") throw new Error("bench/sim does not export simModelLayer")
        return module.simModelLayer(spec)
      },
      catch: (e) => new InvalidModelSpec({ spec, reason: `the simulated model is unavailable in this build (${(e as Error).message})` })
    })
  )

/** The LanguageModel layer for a --model spec: `sim[:options]`, `ollama:<model>`, `openai:<model>` or `scripted:<file.json>`. */
export const resolveModelLayer = (spec: string, options: ModelOptions = {}): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  isSim(spec) ? simLayer(spec.trim()) : modelLayer(spec, options)
