// Health checks of a model setup: server reachable, model present, tool support, one structured reply.
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { z } from "zod"
import { renderTemplate } from "../text/prompt-template.ts"
import type { GenerateError, InvalidModelSpec, ProviderError } from "./errors.ts"
import type { LanguageModel } from "./language-model.ts"
import { type ModelOptions, parseModelSpec } from "./spec.ts"
import { generateObject } from "./structured.ts"

export type CheckStatus = "pass" | "warn" | "fail" | "skip"

export interface DoctorCheck {
  readonly name: string
  readonly status: CheckStatus
  /** What was found. */
  readonly detail: string
  /** What to do about it, when something is wrong. */
  readonly advice?: string | undefined
}

/** What went wrong overall, which decides the exit code: a bad spec, an unusable server or model, or a failed reply. */
export type DoctorProblem = "bad-spec" | "unavailable" | "failed"

export interface DoctorReport {
  readonly spec: string
  readonly checks: ReadonlyArray<DoctorCheck>
  readonly problem?: DoctorProblem | undefined
}

/** The reply the structured-output check asks for. */
const Probe = z.object({ ok: z.literal(true), sum: z.number() })
const PROBE_ARGS = { a: 2, b: 3 }

/** A spec that cannot be used is bad input; a server nobody answers at or without the model is unavailable; the rest failed the test reply. */
const problemOf = (e: GenerateError | InvalidModelSpec): DoctorProblem =>
  e.kind === "bad-input" ? "bad-spec" : "fatalToTask" in e && e.fatalToTask ? "unavailable" : "failed"

/** One small structured-output call through the model layer the commands use. */
const structuredCheck = (
  layer: Layer.Layer<LanguageModel, InvalidModelSpec>
): Effect.Effect<{ check: DoctorCheck; problem?: DoctorProblem }> => {
  const prompt = renderTemplate("doctor", PROBE_ARGS)
  const ask = generateObject({
    role: "doctor",
    schema: Probe,
    messages: [
      { role: "system", content: prompt.system },
      { role: "user", content: prompt.user }
    ]
  })
  return Effect.provide(ask, layer).pipe(
    Effect.map((result) => {
      const expected = PROBE_ARGS.a + PROBE_ARGS.b
      const arithmetic =
        result.value.sum === expected ? "" : `; its arithmetic was off (${result.value.sum} for ${expected})`
      const tries = result.attempts > 1 ? ` after ${result.attempts} attempts` : ""
      return {
        check: {
          name: "structured output",
          status: "pass" as const,
          detail: `a valid JSON reply${tries} in ${Math.round(result.response.durationMs)} ms (${result.response.usage.promptTokens}+${result.response.usage.completionTokens} tokens)${arithmetic}`
        }
      }
    }),
    Effect.catch((e: ProviderError | InvalidModelSpec | GenerateError) =>
      Effect.succeed({
        check: { name: "structured output", status: "fail" as const, detail: e.message },
        problem: problemOf(e)
      })
    )
  )
}

/**
 * Run the checks for a spec: the provider's own (server, model, script...), then one structured call through
 * `layer`, the model the commands would use. Never fails: every problem is a check in the report.
 */
export const runDoctor = (
  spec: string,
  layer: Layer.Layer<LanguageModel, InvalidModelSpec>,
  options: ModelOptions = {}
): Effect.Effect<DoctorReport> =>
  Effect.gen(function* () {
    const parsed = yield* Effect.result(parseModelSpec(spec))
    if (parsed._tag === "Failure")
      return {
        spec,
        checks: [{ name: "model spec", status: "fail", detail: parsed.failure.message }],
        problem: "bad-spec"
      } satisfies DoctorReport
    const own = yield* parsed.success.registered.doctor(parsed.success.rest, options)
    // a spec that cannot be used has nothing to try; a server that cannot serve is said to block the call
    if (own.problem === "bad-spec") return { spec, checks: own.checks, problem: own.problem } satisfies DoctorReport
    if (own.problem)
      return {
        spec,
        checks: [
          ...own.checks,
          { name: "structured output", status: "skip", detail: "not tried: fix the problem above first" }
        ],
        problem: own.problem
      } satisfies DoctorReport
    if (own.instead) return { spec, checks: [...own.checks, own.instead] } satisfies DoctorReport
    const structured = yield* structuredCheck(layer)
    return { spec, checks: [...own.checks, structured.check], problem: structured.problem } satisfies DoctorReport
  })
