// The --model option of every command: a spec (bare Ollama names read as ollama:<name>) to a LanguageModel layer,
// with the benchmark's simulated model registered as the `sim` provider.
import "../../bench/sim/provider.ts"
import { providerNames } from "../llm/spec.ts"
import { closest } from "./did-you-mean.ts"

export { defaultModelSpec, modelLayer as resolveModelLayer } from "../llm/spec.ts"

/**
 * A bare Ollama model name (`qwen2.5:7b`, `llama3.1`) is read as `ollama:<name>`, with a notice to
 * say so. A provider that is a typo (`olama:x`) or a script file (`x.json`) is left alone, so the
 * spec's own error names the fix.
 */
export const normalizeModelSpec = (spec: string): { spec: string; notice?: string } => {
  const trimmed = spec.trim()
  const providers = providerNames()
  if (trimmed === "" || providers.includes(trimmed)) return { spec: trimmed }
  const prefix = trimmed.includes(":") ? trimmed.slice(0, trimmed.indexOf(":")).toLowerCase() : trimmed.toLowerCase()
  if (providers.includes(prefix)) return { spec: trimmed }
  if (/\.(json|jsonl)$/i.test(trimmed) || (trimmed.includes("/") && !trimmed.includes(":"))) return { spec: trimmed }
  // a one-letter slip of a provider's name (olama:, opnai:), not a model family that merely looks alike (llama3:)
  const typo = closest(prefix, providers)
  if (trimmed.includes(":") && /^[a-z]+$/.test(prefix) && typo !== undefined && typo[0] === prefix[0])
    return { spec: trimmed }
  return {
    spec: `ollama:${trimmed}`,
    notice: `"${trimmed}" is read as ollama:${trimmed} (write openai:, scripted: or sim for another provider)`
  }
}
