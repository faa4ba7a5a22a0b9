// Options of the simulated model, read from a spec string `sim:latency=100ms,per_token=0.1ms,fault=0.1,seed=7`.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { InvalidModelSpec } from "../../src/llm/errors.ts"
import { packageRoot } from "../../src/package-root.ts"
import { sampleDataDir } from "../sample-data.ts"
import { type PrefixCacheOptions, prefixCacheDefaults } from "./prefix-cache.ts"

/** The kinds of misbehaviour the simulated model can inject. */
export const FAULT_KINDS = ["malformed", "unknown_tool", "wrong_args", "refusal"] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

export interface SimOptions {
  /** Fixed wait per call, in milliseconds. */
  readonly latencyMs: number
  /** Extra wait per prompt token, in milliseconds. */
  readonly promptTokenMs: number
  /** Extra wait per completion token, in milliseconds. */
  readonly completionTokenMs: number
  /**
   * Share of calls (0..1) that misbehave, the kind drawn evenly among those that fit the call
   * (a tool name can only be wrong where a tool is chosen).
   */
  readonly fault: number
  /** Extra per-kind rates (0..1) on top of `fault`. */
  readonly faults: Readonly<Record<FaultKind, number>>
  /** Seed of the fault draws: the same seed and request always give the same fault. */
  readonly seed: number
  /** The ToolBench data directory (queries and responses.jsonl). */
  readonly data: string
  /** Whether the model takes native tool calls; off makes ReAct/DFSDT use their JSON format. */
  readonly tools: boolean
  /** Context window reported to the agents, in tokens. */
  readonly contextTokens: number
  /** Name the model reports. */
  readonly name: string
  /**
   * How the planner writes its plan: `sequential` (plain subtasks, the paper's loop) or `graph`
   * (every subtask with `dependsOn: []`, so that they run at the same time).
   */
  readonly plan: "sequential" | "graph"
  /**
   * The server's prefix cache to model (`cache=4,prefill=0.25ms,decode=20ms,similarity=0.1`): slots, GPU
   * time per uncached prompt token and per reply token, the share of a prompt a slot must hold to be
   * taken; undefined (the default, `cache=0`) models none.
   */
  readonly prefixCache: PrefixCacheOptions | undefined
}

/**
 * The data directory next to the repository, `<repo>/../shared/toolbench` (from the package root, which a bundled dist/
 * keeps), when it is there; else the sample shipped with the package, so that the model knows the sample's tasks.
 */
export const DEFAULT_DATA_DIR = ((beside: string) => (existsSync(join(beside, "queries")) ? beside : sampleDataDir()))(
  fileURLToPath(new URL("../shared/toolbench", packageRoot))
)

export const simDefaults: SimOptions = {
  latencyMs: 0,
  promptTokenMs: 0,
  completionTokenMs: 0,
  fault: 0,
  faults: { malformed: 0, unknown_tool: 0, wrong_args: 0, refusal: 0 },
  seed: 0,
  data: DEFAULT_DATA_DIR,
  tools: true,
  contextTokens: 32_768,
  name: "sim",
  plan: "sequential",
  prefixCache: undefined
}

const KEYS = `latency, per_token, prompt_token, completion_token, fault, ${FAULT_KINDS.join(", ")}, seed, data, tools, context, name, plan, cache, prefill, decode, similarity`

/** Milliseconds from "100ms", "0.1ms", "1s", "250us", "2m" or a bare number of milliseconds. */
export const parseDurationMs = (text: string): number | undefined => {
  const m = /^(\d+(?:\.\d+)?|\.\d+)\s*(us|µs|ms|s|m)?$/.exec(text.trim())
  if (!m) return undefined
  const n = Number(m[1])
  switch (m[2]) {
    case "us":
    case "µs":
      return n / 1000
    case "s":
      return n * 1000
    case "m":
      return n * 60_000
    default:
      return n
  }
}

/** A rate from "0.1" or "10%". */
const parseRate = (text: string): number | undefined => {
  const t = text.trim()
  const n = t.endsWith("%") ? Number(t.slice(0, -1)) / 100 : Number(t)
  return Number.isFinite(n) && n >= 0 && n <= 1 && t.length > 0 ? n : undefined
}

/** Parse `sim` or `sim:key=value,...`; unknown keys and bad values are an `InvalidModelSpec` naming the valid ones. */
export const parseSimSpec = (spec: string): { readonly options: SimOptions } | { readonly error: InvalidModelSpec } => {
  const fail = (reason: string) => ({ error: new InvalidModelSpec({ spec, reason }) })
  if (spec !== "sim" && !spec.startsWith("sim:")) return fail('a simulated model spec starts with "sim"')
  const body = spec === "sim" ? "" : spec.slice(4)
  let options: { -readonly [K in keyof SimOptions]: SimOptions[K] } = {
    ...simDefaults,
    faults: { ...simDefaults.faults }
  }
  const faults = { ...simDefaults.faults }
  // prefill/decode alone model the default slots; cache=0 models none
  let cache: PrefixCacheOptions | undefined
  for (const part of body
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0)) {
    const eq = part.indexOf("=")
    if (eq <= 0) return fail(`"${part}" is not key=value (keys: ${KEYS})`)
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    const duration = () => parseDurationMs(value)
    switch (key) {
      case "latency": {
        const ms = duration()
        if (ms === undefined) return fail(`latency "${value}" is not a duration like 100ms or 1s`)
        options = { ...options, latencyMs: ms }
        break
      }
      case "per_token":
      case "prompt_token":
      case "completion_token": {
        const ms = duration()
        if (ms === undefined) return fail(`${key} "${value}" is not a duration like 0.1ms`)
        if (key !== "completion_token") options = { ...options, promptTokenMs: ms }
        if (key !== "prompt_token") options = { ...options, completionTokenMs: ms }
        break
      }
      case "fault": {
        const rate = parseRate(value)
        if (rate === undefined) return fail(`fault "${value}" is not a rate between 0 and 1 (or 0% to 100%)`)
        options = { ...options, fault: rate }
        break
      }
      case "seed": {
        const n = Number(value)
        if (!Number.isInteger(n)) return fail(`seed "${value}" is not an integer`)
        options = { ...options, seed: n }
        break
      }
      case "data":
        options = { ...options, data: value }
        break
      case "tools":
        if (!["native", "json", "true", "false"].includes(value)) return fail(`tools "${value}" is not native or json`)
        options = { ...options, tools: value === "native" || value === "true" }
        break
      case "context": {
        const n = Number(value)
        if (!Number.isInteger(n) || n < 512) return fail(`context "${value}" is not a token count of at least 512`)
        options = { ...options, contextTokens: n }
        break
      }
      case "name":
        options = { ...options, name: value }
        break
      case "plan":
        if (value !== "sequential" && value !== "graph") return fail(`plan "${value}" is not sequential or graph`)
        options = { ...options, plan: value }
        break
      case "cache": {
        const n = Number(value)
        if (!Number.isInteger(n) || n < 0)
          return fail(`cache "${value}" is not a number of slots (0 for no prefix cache)`)
        cache = { ...prefixCacheDefaults, ...cache, slots: n }
        break
      }
      case "prefill":
      case "decode": {
        const ms = duration()
        if (ms === undefined) return fail(`${key} "${value}" is not a duration per token like 0.25ms`)
        cache = { ...prefixCacheDefaults, ...cache, [key === "prefill" ? "prefillMsPerToken" : "decodeMsPerToken"]: ms }
        break
      }
      case "similarity": {
        const share = parseRate(value)
        if (share === undefined) return fail(`similarity "${value}" is not a share between 0 and 1`)
        cache = { ...prefixCacheDefaults, ...cache, similarity: share }
        break
      }
      default: {
        if ((FAULT_KINDS as ReadonlyArray<string>).includes(key)) {
          const rate = parseRate(value)
          if (rate === undefined) return fail(`${key} "${value}" is not a rate between 0 and 1`)
          faults[key as FaultKind] = rate
          break
        }
        return fail(`unknown option "${key}" (keys: ${KEYS})`)
      }
    }
  }
  if (options.fault + Object.values(faults).reduce((a, b) => a + b, 0) > 1)
    return fail("the fault rates add up to more than 1")
  const prefixCache = cache !== undefined && cache.slots > 0 ? cache : undefined
  return { options: { ...options, faults, prefixCache } }
}
