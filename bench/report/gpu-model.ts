// The modelled server's GPU time of a task from its recorded tokens (`smurfs compare --gpu-model`): the simulated
// model's cost figures (bench/sim/prefix-cache.ts) applied to what a real run recorded.
import type { JudgeCost } from "../eval/judge-input.ts"
import { parseDurationMs } from "../sim/options.ts"
import { prefixCacheDefaults } from "../sim/prefix-cache.ts"

/** GPU milliseconds per prompt token computed (prefill) and per reply token (decode). */
export interface GpuModel {
  readonly prefillMsPerToken: number
  readonly decodeMsPerToken: number
}

/** The simulated server's figures: a 7-8B model on one consumer GPU. */
export const DEFAULT_GPU_MODEL: GpuModel = {
  prefillMsPerToken: prefixCacheDefaults.prefillMsPerToken,
  decodeMsPerToken: prefixCacheDefaults.decodeMsPerToken
}

/** `prefill=0.25ms,decode=20ms` (either may be left out; "" or "default" is the default); a message when it is not. */
export const parseGpuModel = (text: string): GpuModel | string => {
  let model = DEFAULT_GPU_MODEL
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0 && p !== "default")) {
    const eq = part.indexOf("=")
    const key = eq > 0 ? part.slice(0, eq).trim() : ""
    const ms = eq > 0 ? parseDurationMs(part.slice(eq + 1)) : undefined
    if ((key !== "prefill" && key !== "decode") || ms === undefined)
      return `"${part}" is not prefill=<duration> or decode=<duration> (e.g. prefill=0.25ms,decode=20ms)`
    model = key === "prefill" ? { ...model, prefillMsPerToken: ms } : { ...model, decodeMsPerToken: ms }
  }
  return model
}

/**
 * GPU seconds of one task on the modelled server without a prefix cache: every prompt token the task sent is
 * computed (prefill), every reply token decoded. A server that caches prompt prefixes computes fewer prompt tokens,
 * so this is an upper bound for it; undefined when the source does not record tokens.
 */
export const gpuSeconds = (model: GpuModel, cost: JudgeCost): number | undefined =>
  cost.promptTokens === undefined || cost.completionTokens === undefined
    ? undefined
    : (cost.promptTokens * model.prefillMsPerToken + cost.completionTokens * model.decodeMsPerToken) / 1000
