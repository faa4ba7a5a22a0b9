// The model-output fault run: many Smurfs tasks on the demo tools against a seeded faulty model, with its figures.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { rngFor } from "../../bench/eval/rng.ts"
import { smurfs } from "../../src/agents/smurfs.ts"
import type { GuardrailOptions, SmurfsExecutor } from "../../src/agents/smurfs-options.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { renderTemplate } from "../../src/text/prompt-template.ts"
import { demoLibrary } from "../../src/tools/demo/index.ts"
import type { ToolLibrary } from "../../src/tools/tool.ts"
import { dataOf, isKind } from "../../src/trace/events.ts"
import type { Trajectory } from "../../src/trace/trajectory.ts"
import { BAD_REPLY_DEFAULTS, type BadReplyOptions, makeFaultyModel, type SentFault } from "./bad-replies.ts"

export interface ModelOutputFaultOptions extends Partial<BadReplyOptions> {
  /** Seed of every draw: the same seed gives the same replies, trajectories and figures. */
  readonly seed?: number | undefined
  /** Tasks to run (one after another, so that the draws stay in order). */
  readonly tasks?: number | undefined
  readonly guardrails?: Partial<GuardrailOptions> | undefined
  /** The tool library of every task; the demo tools by default. */
  readonly library?: ToolLibrary | undefined
  /** The executor under test: the paper's three requests per step (default), or `fused`. */
  readonly executor?: SmurfsExecutor | undefined
  /** How the fused executor calls a tool: a native tool call (default; the faulty model calls tools) or one JSON object. */
  readonly toolCalling?: "native" | "json" | undefined
}

export const MODEL_OUTPUT_DEFAULTS = { seed: 7, tasks: 120 } as const

/** Queries the demo tools can work on; the faulty model does not read them closely, the tools do. */
const QUERIES = [
  "What is 12% of the height of Mount Everest in feet?",
  "What is the capital of France and how many people live there?",
  "Convert 10 km to miles.",
  "How many days are there between 2024-01-01 and 2024-03-01?",
  "Convert 250 USD to EUR and add 5.",
  "What is sqrt(16) / 4?",
  "How fast is the speed of light in km per hour?",
  "What is the population of France divided by 1000?"
]

/** Caught and recovered counts of one guardrail; recovered = a later attempt of the same call was valid (or the guardrail repaired the reply). */
export interface GuardrailFigure {
  caught: number
  recovered: number
}

export interface ModelOutputReport {
  readonly seed: number
  readonly tasks: number
  readonly executor: SmurfsExecutor
  /** How the fused executor called tools (undefined for the three-call executor). */
  readonly toolCalling: "native" | "json" | undefined
  readonly answered: number
  readonly gaveUp: number
  /** Tasks whose method failed or died instead of returning a trajectory. */
  readonly crashes: number
  /** Tasks that returned without a final answer or a recorded give-up. */
  readonly lost: number
  readonly goodReplies: number
  /** The fused executor's JSON requests (not counting reflections): with native tool calls, its fallbacks after the server's parse errors. */
  readonly fusedJsonRequests: number
  readonly badReplies: number
  readonly faultsByKind: Readonly<Record<string, number>>
  readonly faultsByRole: Readonly<Record<string, number>>
  /** Bad replies per `role/kind`, to tell that each role got each of its kinds. */
  readonly faultsByRoleKind: Readonly<Record<string, number>>
  /** Bad replies that the schema tolerates (extra keys outside tool arguments): no guardrail is due. */
  readonly tolerated: number
  /** Per guardrail, from the trajectories' guardrail events. */
  readonly guardrails: Readonly<Record<string, GuardrailFigure>>
  /** Per guardrail, from the trajectories' totals (must equal the events). */
  readonly totals: Readonly<Record<string, GuardrailFigure>>
  /** Per guardrail, the bad replies the generator sent that it must catch. */
  readonly expected: Readonly<Record<string, number>>
  /** Recovery per kind of bad reply (the guardrail events matched to the replies in order). */
  readonly byKind: Readonly<Record<string, GuardrailFigure>>
  /** Tasks whose guardrail events did not match, one by one, the bad replies sent; each entry says how. */
  readonly mismatches: ReadonlyArray<string>
  /** The largest prompt sent (estimated tokens), and the model's context window it must fit. */
  readonly maxPromptTokens: number
  readonly contextTokens: number
  /**
   * Reflection messages sent (generateObject's, and the fused executor's after a native reply), and those that
   * were not in the `reflection` role (or, for the fused executor's reflection on a call, in the call's `tool` message).
   */
  readonly reflections: number
  readonly reflectionsInOtherRoles: number
}

const bump = (record: Record<string, number>, key: string, by = 1) => void (record[key] = (record[key] ?? 0) + by)
const bumpFigure = (record: Record<string, GuardrailFigure>, key: string, recovered: boolean) => {
  const figure = (record[key] ??= { caught: 0, recovered: 0 })
  figure.caught++
  if (recovered) figure.recovered++
}

/** The first words of a reflection: each template rendered without its values, up to its first placeholder. */
const reflectionStarts = () =>
  (["reflection", "executor-fused-reflection", "tool-call-parse-error"] as const).map((name) => ({
    start: renderTemplate(name, { error: "\u0000", reply: "" }).user.split("\u0000")[0]!,
    // the fused executor answers a rejected call with a tool message (chat templates expect one per call)
    roles: name === "executor-fused-reflection" ? ["reflection", "tool"] : ["reflection"]
  }))

const endsProperly = (t: Trajectory): boolean => {
  const last = t.events.at(-1)
  if (last === undefined || !isKind(last, "task_finished")) return false
  if (t.finishType === "give_answer") return t.finalAnswer.trim().length > 0
  return t.events.some((e) => isKind(e, "give_up"))
}

/** Compare a task's guardrail events with the bad replies sent, in order; a description of the first difference. */
const matchFaults = (
  taskId: string,
  t: Trajectory,
  sent: ReadonlyArray<SentFault>,
  byKind: Record<string, GuardrailFigure>
): string | undefined => {
  const due = sent.filter((f) => f.guardrail !== undefined)
  const events = t.events.filter((e) => isKind(e, "guardrail")).map((e) => dataOf(e, "guardrail"))
  for (let i = 0; i < Math.max(due.length, events.length); i++) {
    const f = due[i],
      e = events[i]
    if (!f || !e || e["guardrail"] !== f.guardrail || e["role"] !== f.role)
      return `${taskId}: guardrail event ${i} is ${e ? `${String(e["guardrail"])}@${String(e["role"])}` : "missing"}, the reply sent was ${f ? `${f.kind}@${f.role} (due: ${f.guardrail})` : "none"}`
  }
  events.forEach((e, i) => {
    bumpFigure(byKind, due[i]!.kind, e["recovered"] === true)
  })
  return undefined
}

/** Run the tasks and gather the figures; never fails (a crash is counted, not thrown). */
export const runModelOutputFaults = (options: ModelOutputFaultOptions = {}): Effect.Effect<ModelOutputReport> =>
  Effect.gen(function* () {
    const seed = options.seed ?? MODEL_OUTPUT_DEFAULTS.seed
    const count = options.tasks ?? MODEL_OUTPUT_DEFAULTS.tasks
    const replyOptions: BadReplyOptions = { ...BAD_REPLY_DEFAULTS, ...options }
    const library = options.library ?? demoLibrary()
    const executor = options.executor ?? "three-call"
    const toolCalling = executor === "fused" ? (options.toolCalling ?? "native") : undefined
    // the Answer agent on every step, as the suite was written for (its figures in docs/reliability.md): short responses
    // as step answers (the improved default since issue 33) would leave answerer.step and answerer.verify few requests
    const rules = { answerShortResponses: undefined }
    const method = smurfs({ guardrails: options.guardrails, executor, toolCalling, rules })
    const starts = reflectionStarts()
    let answered = 0,
      gaveUp = 0,
      crashes = 0,
      lost = 0,
      goodReplies = 0,
      fusedJsonRequests = 0,
      tolerated = 0,
      reflections = 0,
      reflectionsInOtherRoles = 0,
      maxPromptTokens = 0,
      contextTokens = 0
    const faultsByKind: Record<string, number> = {}
    const faultsByRole: Record<string, number> = {}
    const faultsByRoleKind: Record<string, number> = {}
    const guardrails: Record<string, GuardrailFigure> = {}
    const totals: Record<string, GuardrailFigure> = {}
    const expected: Record<string, number> = {}
    const byKind: Record<string, GuardrailFigure> = {}
    const mismatches: Array<string> = []
    for (let i = 0; i < count; i++) {
      const taskId = `fault-${seed}-${i}`
      const { model, ledger } = makeFaultyModel(rngFor(seed, "task", i), replyOptions)
      contextTokens = model.info.contextTokens
      const exit = yield* Effect.exit(
        method({ id: taskId, query: QUERIES[i % QUERIES.length]!, tools: library }).pipe(
          Effect.provideService(LanguageModel, model)
        )
      )
      goodReplies += ledger.good
      fusedJsonRequests += ledger.fusedJson
      for (const f of ledger.faults) {
        bump(faultsByKind, f.kind)
        bump(faultsByRole, f.role)
        bump(faultsByRoleKind, `${f.role}/${f.kind}`)
        if (f.guardrail === undefined) tolerated++
        else bump(expected, f.guardrail)
      }
      if (Exit.isFailure(exit)) {
        crashes++
        mismatches.push(`${taskId}: crashed: ${Cause.pretty(exit.cause).split("\n")[0]}`)
        continue
      }
      const t = exit.value
      if (!endsProperly(t)) lost++
      else if (t.finishType === "give_answer") answered++
      else gaveUp++
      for (const e of t.events) {
        if (isKind(e, "guardrail"))
          bumpFigure(guardrails, String(dataOf(e, "guardrail").guardrail), dataOf(e, "guardrail").recovered === true)
        if (isKind(e, "model_call"))
          maxPromptTokens = Math.max(maxPromptTokens, Number(dataOf(e, "model_call").promptTokens ?? 0))
        if (isKind(e, "model_call"))
          for (const m of dataOf(e, "model_call").messages ?? []) {
            const reflection = starts.find((r) => m.content.startsWith(r.start))
            if (reflection) reflections++
            if (reflection && !reflection.roles.includes(m.role)) reflectionsInOtherRoles++
          }
      }
      for (const [name, n] of Object.entries(t.totals.guardrails)) {
        const figure = (totals[name] ??= { caught: 0, recovered: 0 })
        figure.caught += n
        figure.recovered += t.totals.guardrailsRecovered?.[name] ?? 0
      }
      const mismatch = matchFaults(taskId, t, ledger.faults, byKind)
      if (mismatch) mismatches.push(mismatch)
    }
    const badReplies = Object.values(faultsByKind).reduce((a, b) => a + b, 0)
    return {
      seed,
      tasks: count,
      executor,
      toolCalling,
      answered,
      gaveUp,
      crashes,
      lost,
      goodReplies,
      fusedJsonRequests,
      badReplies,
      faultsByKind,
      faultsByRole,
      faultsByRoleKind,
      tolerated,
      guardrails,
      totals,
      expected,
      byKind,
      mismatches,
      maxPromptTokens,
      contextTokens,
      reflections,
      reflectionsInOtherRoles
    }
  })

const pct = (f: GuardrailFigure) => (f.caught === 0 ? "-" : `${((100 * f.recovered) / f.caught).toFixed(1)}%`)

/** The figures as a plain-text table. */
export const formatModelOutputReport = (r: ModelOutputReport): string => {
  const lines = [
    `model-output faults, ${r.executor} executor${r.toolCalling ? ` (${r.toolCalling} tool calls)` : ""} (seed ${r.seed}): ${r.tasks} tasks, ${r.goodReplies + r.badReplies} replies, ${r.badReplies} bad (${r.tolerated} tolerated by the schema)`,
    `tasks: ${r.answered} answered, ${r.gaveUp} gave up (recorded), crashes ${r.crashes}, lost ${r.lost}`,
    `largest prompt: ${r.maxPromptTokens} tokens (context window ${r.contextTokens})`,
    ...(r.toolCalling === "native"
      ? [`fallbacks to JSON after the server could not parse a call three times: ${r.fusedJsonRequests}`]
      : []),
    "",
    "bad replies per kind                   recovered within the retries",
    ...Object.entries(r.faultsByKind).map(
      ([kind, n]) =>
        `  ${kind.padEnd(20)} ${String(n).padStart(6)}   ${r.byKind[kind] ? `${pct(r.byKind[kind])} of ${r.byKind[kind].caught}` : "(tolerated)"}`
    ),
    "",
    "bad replies per role",
    ...Object.entries(r.faultsByRole).map(([role, n]) => `  ${role.padEnd(20)} ${String(n).padStart(6)}`),
    "",
    "guardrail          due   events  totals  recovered  rate",
    ...Object.entries(r.guardrails).map(
      ([name, f]) =>
        `  ${name.padEnd(16)} ${String(r.expected[name] ?? 0).padStart(5)} ${String(f.caught).padStart(8)} ${String(r.totals[name]?.caught ?? 0).padStart(7)} ${String(f.recovered).padStart(10)}  ${pct(f)}`
    ),
    "",
    `reflection messages: ${r.reflections} (in another role than "reflection": ${r.reflectionsInOtherRoles}); mismatches: ${r.mismatches.length}`
  ]
  return lines.join("\n")
}
