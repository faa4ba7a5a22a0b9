// The simulated model: answers every agent role of every method from the task it knows, with seeded faults and
// simulated latency. It never calls a real model; its figures measure the framework, not a model.
import { existsSync } from "node:fs"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { InvalidModelSpec } from "../../src/llm/errors.ts"
import {
  type GenerateRequest,
  type GenerateResponse,
  LanguageModel,
  type LanguageModelShape,
  type ToolCallRequest
} from "../../src/llm/language-model.ts"
import { ModelLane } from "../../src/llm/model-lanes.ts"
import { hashSeed, rngFor } from "../eval/rng.ts"
import { makeCatalog } from "./catalog.ts"
import { CurrentTask } from "./current-task.ts"
import { drawFault, malformed, refusal } from "./faults.ts"
import { type Recordings, readRecordings, type SimQuery, type SimTask } from "./knowledge.ts"
import { FAULT_KINDS, type FaultKind, parseSimSpec, type SimOptions, simDefaults } from "./options.ts"
import { decide, faultSurface, type Intent } from "./policy.ts"
import { makePrefixCache, type PrefixCacheTotals } from "./prefix-cache.ts"
import { schemaValueOf } from "./schema-value.ts"
import type { ServerModel } from "./server.ts"
import { makeTokenCounter, TOKENIZER } from "./tokens.ts"

/** Counters of one simulated model, for the perf harness. */
export interface SimStats {
  calls: number
  promptTokens: number
  completionTokens: number
  /** Calls that got each fault. */
  readonly faults: Record<FaultKind, number>
  /** Milliseconds the simulator itself spent (deciding, tokenizing), to tell it apart from the framework's time. */
  simMs: number
  /** Milliseconds of simulated latency slept. */
  sleptMs: number
  /** The modelled server's prefix cache (option `cache=N`): tokens cached and computed, GPU time. */
  readonly prefixCache: PrefixCacheTotals | undefined
  /** The same by the calling agent's role. */
  readonly prefixCacheByRole: Map<string, { requests: number; uncachedTokens: number; gpuMs: number }>
}

export interface SimModel {
  readonly model: LanguageModelShape
  readonly stats: SimStats
  readonly options: SimOptions
}

/** The reply an intent becomes: a native tool call when the request offers tools, else JSON text in the requested format. */
const write = (
  intent: Intent,
  request: GenerateRequest,
  callId: string
): { text: string; toolCalls?: ReadonlyArray<ToolCallRequest> } => {
  if (intent.kind === "object") return { text: JSON.stringify(intent.value) }
  if (request.tools && request.tools.length > 0)
    return { text: intent.thought, toolCalls: [{ id: callId, name: intent.name, arguments: intent.args }] }
  const fields: Record<string, unknown> = { thought: intent.thought, action: intent.name, action_input: intent.args }
  const value = request.format
    ? schemaValueOf(request.format, (path) => (path.length === 1 ? fields[path[0]!] : undefined))
    : fields
  return { text: JSON.stringify(value) }
}

/** What makes two requests different, for the fault draws: the role and every message. */
const fingerprint = (request: GenerateRequest): number => {
  let h = hashSeed(request.role)
  for (const m of request.messages) h = hashSeed(`${h}\u0000${m.role}\u0000${m.content}`)
  return h
}

/** A plan whose subtasks are all independent (`dependsOn: []`): each API of a task is its own call. */
const asGraphPlan = (intent: Intent): Intent => {
  if (intent.kind !== "object" || typeof intent.value !== "object" || intent.value === null) return intent
  const subtasks = (intent.value as { subtasks?: unknown }).subtasks
  if (!Array.isArray(subtasks)) return intent
  return {
    kind: "object",
    value: { ...intent.value, subtasks: subtasks.map((task) => ({ task: String(task), dependsOn: [] })) }
  }
}

/**
 * A simulated model over the given recordings. With `server` (the perf harness's modelled server in virtual time),
 * each reply waits until that server has served the request, in place of `options.prefixCache`'s one at a time.
 */
export const makeSimModel = (
  options: SimOptions = simDefaults,
  recordings: Recordings = readRecordings(options.data),
  spec = "sim",
  server?: ServerModel
): SimModel => {
  const prefixCache = options.prefixCache ? makePrefixCache(options.prefixCache) : undefined
  const stats: SimStats = {
    calls: 0,
    promptTokens: 0,
    completionTokens: 0,
    faults: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>,
    simMs: 0,
    sleptMs: 0,
    prefixCache: prefixCache?.totals,
    prefixCacheByRole: new Map()
  }
  const tokens = makeTokenCounter()
  const catalog = makeCatalog(options.data, recordings)
  /** The runner's task, else the ToolBench query the prompt quotes, else only what any API of the data set takes. */
  const taskOf = (request: GenerateRequest, query: SimQuery | undefined): SimTask =>
    query !== undefined
      ? catalog.taskOf(query)
      : (catalog.recognize(request) ?? { id: "", query: "", apis: [], byName: catalog.anyApi })
  const answer = (request: GenerateRequest, query: SimQuery | undefined, lane: number | undefined) => {
    const print = fingerprint(request)
    const rng = rngFor(options.seed, request.role, print)
    const fault = drawFault(options, faultSurface(request), rng)
    const decided = decide(request, taskOf(request, query), fault, rng)
    const intent = options.plan === "graph" && request.role === "planner" ? asGraphPlan(decided) : decided
    const written = write(intent, request, `call_${print.toString(36)}`)
    const reply =
      fault === "refusal"
        ? { text: refusal() }
        : fault === "malformed"
          ? {
              text: malformed(
                written.toolCalls ? `{"name": "${written.toolCalls[0]!.name}", "arguments": ` : written.text,
                rng
              )
            }
          : written
    if (fault) stats.faults[fault]++
    const promptTokens = tokens.prompt(request)
    const completionTokens =
      tokens.text(reply.text) +
      (reply.toolCalls ?? []).reduce((n, c) => n + tokens.text(c.name) + tokens.text(JSON.stringify(c.arguments)), 0)
    const served =
      server === undefined
        ? undefined
        : server.request(query?.id ?? "", tokens.encodePrompt(request), tokens.encodeReply(reply), request.role, lane)
    if (prefixCache && !server) {
      const served = prefixCache.serve(tokens.encodePrompt(request), tokens.encodeReply(reply))
      const role = stats.prefixCacheByRole.get(request.role) ?? { requests: 0, uncachedTokens: 0, gpuMs: 0 }
      stats.prefixCacheByRole.set(request.role, {
        requests: role.requests + 1,
        uncachedTokens: role.uncachedTokens + served.uncachedTokens,
        gpuMs: role.gpuMs + served.gpuMs
      })
    }
    return { reply, usage: { promptTokens, completionTokens }, served }
  }
  const generate = (request: GenerateRequest) =>
    Effect.flatMap(Effect.all([Effect.service(CurrentTask), Effect.service(ModelLane)]), ([query, lane]) =>
      Effect.suspend(() => {
        const started = performance.now()
        const { reply, usage, served } = answer(request, query, lane)
        stats.calls++
        stats.promptTokens += usage.promptTokens
        stats.completionTokens += usage.completionTokens
        stats.simMs += performance.now() - started
        const waitMs =
          options.latencyMs +
          usage.promptTokens * options.promptTokenMs +
          usage.completionTokens * options.completionTokenMs
        const respond = Effect.sync(
          (): GenerateResponse => ({ ...reply, usage, model: options.name, durationMs: performance.now() - started })
        )
        if (served !== undefined) return Effect.andThen(served, respond)
        if (waitMs <= 0) return respond
        stats.sleptMs += waitMs
        return Effect.andThen(Effect.sleep(waitMs), respond)
      })
    )
  const model = LanguageModel.of({
    info: {
      spec,
      provider: "sim",
      model: options.name,
      contextTokens: options.contextTokens,
      supportsTools: options.tools
    },
    generate
  })
  return { model, stats, options }
}

/** The sim's description for reports: what it counts with and what its figures mean. */
export const SIM_NOTE = `simulated model (bench/sim: no real model is called; tokens counted with ${TOKENIZER}): its figures measure the framework, not a model`

/** The LanguageModel Layer for `sim` / `sim:<options>` (what `--model sim:...` resolves to). */
export const simModelLayer = (spec: string): Layer.Layer<LanguageModel, InvalidModelSpec> =>
  Layer.effect(
    LanguageModel,
    Effect.suspend(() => {
      const parsed = parseSimSpec(spec)
      if ("error" in parsed) return Effect.fail(parsed.error)
      if (parsed.options.data !== simDefaults.data && !existsSync(parsed.options.data))
        return Effect.fail(
          new InvalidModelSpec({
            spec,
            reason: `the data directory ${parsed.options.data} does not exist (data= must point at a ToolBench directory with responses.jsonl)`
          })
        )
      return Effect.succeed(makeSimModel(parsed.options, undefined, spec).model)
    })
  )
