// τ²'s natural-language assertions judged by a model (`--judge`), as τ²'s NLAssertionsEvaluator asks its judge: the
// instructions as the system message, the conversation (`role: content` a line) and the task's assertions (as a Python
// list) as the user message, a JSON reply with one `{expectedOutcome, reasoning, metExpectation}` per assertion. The
// instructions are τ²'s own, read from the user's checkout (src/tau2/evaluator/evaluator_nl_assertions.py), else our
// wording (prompts/tau2-nl-assertions.md). A judge that fails or answers out of shape gives no verdict, never a fake one.
import { existsSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { z } from "zod"
import { LanguageModel, type LanguageModelShape } from "../../../src/llm/language-model.ts"
import { generateObject } from "../../../src/llm/structured.ts"
import { loadTemplate, render } from "../../../src/text/prompt-template.ts"
import { pythonStrRepr } from "../../../src/tools/environments/python-repr.ts"
import { readFileBounded } from "../../../src/trace/guarded-fs.ts"
import type { NlVerdict } from "./port.ts"
import type { TranscriptMessage } from "./transcript.ts"

/** The judge's role in model calls and traces. */
export const NL_JUDGE_ROLE = "tau2.nl_judge"

/** τ²'s evaluator in a checkout, whose `system_prompt` is the judge's instructions. */
export const nlEvaluatorPath = (tau2Dir: string): string =>
  join(tau2Dir, "src", "tau2", "evaluator", "evaluator_nl_assertions.py")

/**
 * The judge's instructions: τ²'s `system_prompt` from the checkout's evaluator (sent as it stands there, indentation
 * included, as τ² sends it), else our own wording; `source` says which, for run.json. An evaluator file without a
 * `system_prompt = """..."""` throws (a checkout of another shape: say so rather than judge with other words).
 */
export const nlJudgePromptOf = (tau2Dir: string): { readonly text: string; readonly source: string } => {
  const path = nlEvaluatorPath(tau2Dir)
  if (!existsSync(path)) return { text: loadTemplate("tau2-nl-assertions").system, source: "smurfs" }
  const found = /system_prompt\s*=\s*"""([\s\S]*?)"""/.exec(readFileBounded(path))
  if (found === null) throw new Error(`${path} holds no system_prompt = """...""" to judge with`)
  return { text: found[1]!, source: `tau2:${path}` }
}

/** The conversation as τ²'s evaluator writes it for its judge: `role: content` a line, `None` for no text. */
export const judgeTranscript = (messages: ReadonlyArray<TranscriptMessage>): string =>
  messages.map((m) => `${m.role}: ${m.content ?? "None"}`).join("\n")

/** The judge's reply, as τ²'s evaluator reads it. */
export const NlJudgeReply = z.object({
  results: z.array(
    z.object({
      expectedOutcome: z.string(),
      reasoning: z.string(),
      metExpectation: z.boolean()
    })
  )
})
export type NlJudgeReply = z.infer<typeof NlJudgeReply>

/** The judge's verdicts, or why there are none (the NL component is then not evaluated). */
export type NlJudgement =
  | { readonly kind: "judged"; readonly verdicts: ReadonlyArray<NlVerdict> }
  | { readonly kind: "failed"; readonly problem: string }

export interface NlJudge {
  readonly model: LanguageModelShape
  /** The judge's model spec, for messages. */
  readonly spec: string
  /** The judge's instructions (`nlJudgePromptOf`). */
  readonly prompt: string
}

/** The judge's request messages for a conversation and its assertions. */
export const nlJudgeMessages = (
  prompt: string,
  messages: ReadonlyArray<TranscriptMessage>,
  assertions: ReadonlyArray<string>
) => [
  { role: "system" as const, content: prompt },
  {
    role: "user" as const,
    content: render(loadTemplate("tau2-nl-assertions").user, {
      conversation: judgeTranscript(messages),
      assertions: `[${assertions.map(pythonStrRepr).join(", ")}]`
    })
  }
]

/**
 * Judge a finished conversation's assertions (temperature 0, as τ²'s). One verdict per assertion, in the list's order,
 * is required (τ² would count a reply of no results as all met); a reply out of shape is reflected back as any
 * structured reply is, and after that, like a server failure, gives `failed` with what went wrong.
 */
export const judgeNlAssertions = (
  judge: NlJudge,
  messages: ReadonlyArray<TranscriptMessage>,
  assertions: ReadonlyArray<string>
): Effect.Effect<NlJudgement> =>
  generateObject({
    role: NL_JUDGE_ROLE,
    messages: nlJudgeMessages(judge.prompt, messages, assertions),
    schema: NlJudgeReply,
    check: (reply) =>
      reply.results.length === assertions.length
        ? undefined
        : {
            guardrail: "tau2.nl_judge.count",
            error: `give exactly one result per expected outcome: ${assertions.length} expected, ${reply.results.length} given`
          },
    options: { temperature: 0 }
  }).pipe(
    Effect.provideService(LanguageModel, judge.model),
    Effect.map(
      ({ value }): NlJudgement => ({
        kind: "judged",
        verdicts: value.results.map((r, i) => ({
          nl_assertion: assertions[i]!,
          met: r.metExpectation,
          justification: r.reasoning
        }))
      })
    ),
    Effect.catch((e) => Effect.succeed(failedWith(judge, e))),
    Effect.catchDefect((e) => Effect.succeed(failedWith(judge, e)))
  )

const failedWith = (judge: NlJudge, error: unknown): NlJudgement => {
  const detail = error instanceof Error ? error.message : String(error)
  const tag = (error as { _tag?: unknown } | null)?._tag
  return {
    kind: "failed",
    problem: `the judge (${judge.spec}) gave no verdict: ${typeof tag === "string" ? `${tag}: ` : ""}${detail.split("\n")[0]}`
  }
}
