// FAC (final-answer correctness, StableToolBench-MirrorAPI): toolbench/tooleval/fac_eval.py's prompt, read from a
// checkout, on the query and the final answer only; the judge's reply is read as Solved or Unsolved as they read it.
import * as Effect from "effect/Effect"
import { z } from "zod"
import type { ProviderError } from "../../src/llm/errors.ts"
import { LanguageModel } from "../../src/llm/language-model.ts"
import { pythonConstant, pythonFormat, readStbFile, STB_FILES } from "../../src/text/stabletoolbench-files.ts"
import { writeJsonAtomic } from "../../src/trace/atomic-write.ts"
import { pathInside, safeName } from "../../src/trace/file-names.ts"
import type { RunDirError } from "../../src/trace/fs-problem.ts"
import { redactText, redactValue } from "../../src/trace/redact.ts"
import { runFileName, runOf } from "../run-format.ts"
import type { JudgeInput } from "./judge-input.ts"
import { slug } from "./labels.ts"
import { readJsonIf } from "./store.ts"

/** fac_eval.py's prompt and sampling: temperature 0, at most 512 tokens. */
export interface FacPrompt {
  /** "stabletoolbench:<dir>", recorded with every label. */
  readonly source: string
  readonly render: (query: string, answer: string) => string
}

const cache = new Map<string, FacPrompt>()

/** The PROMPT of the checkout's fac_eval.py, filled with str.format as their script fills it. */
export const facPrompt = (dir: string): FacPrompt => {
  const hit = cache.get(dir)
  if (hit) return hit
  const template = pythonConstant(readStbFile(dir, STB_FILES.facEval), "PROMPT", `${dir}/${STB_FILES.facEval}`)
  const prompt: FacPrompt = {
    source: `stabletoolbench:${dir}`,
    render: (query, answer) => pythonFormat(template, { query, answer })
  }
  cache.set(dir, prompt)
  return prompt
}

/** fac_eval.py's get_response: "unsolved" anywhere is Unsolved, else "solved" anywhere is Solved, else Unsolved. */
export const facLabelOf = (reply: string): "Solved" | "Unsolved" => {
  const text = reply.toLowerCase().trim()
  return text.includes("unsolved") ? "Unsolved" : text.includes("solved") ? "Solved" : "Unsolved"
}

/**
 * The final answer fac_eval.py shows: the converted final_answer as it is (for a Finish call, its arguments'
 * JSON text), unless it starts with `{\\` (a double-encoded answer), which their script decodes first.
 */
export const facAnswerOf = (input: JudgeInput): string => {
  const text = input.answer.final_answer
  if (text.startsWith("{\\")) {
    try {
      const parsed = JSON.parse(text) as { final_answer?: unknown }
      if (typeof parsed.final_answer === "string") return parsed.final_answer
    } catch {
      // their json.loads would fail here too; the text is shown as it is
    }
  }
  return text
}

export const FacLabel = z.object({
  taskId: z.string(),
  method: z.string(),
  group: z.string(),
  judge: z.string(),
  prompts: z.string(),
  label: z.enum(["Solved", "Unsolved"]),
  /** The judge's reply (or why no judge was asked). */
  evaluation: z.string()
})
export type FacLabel = z.infer<typeof FacLabel>

/** `<store>/eval/<judge>/fac/<method>/<group>/<taskId>.json`. */
export const facLabelPath = (
  store: string,
  judge: string,
  method: string,
  group: string,
  taskId: string,
  agentRun = 0
) => pathInside(store, "eval", slug(judge), "fac", safeName(method), safeName(group), runFileName(taskId, agentRun))

/** One FAC label: an empty final answer is Unsolved without a judge call (fac_eval.py's "Parsing error" row). */
export const judgeFac = Effect.fn("Judge.fac")(function* (input: JudgeInput, prompt: FacPrompt) {
  const answer = facAnswerOf(input)
  if (answer === "") return { label: "Unsolved" as const, evaluation: "Empty final answer." }
  const model = yield* LanguageModel
  const reply = yield* model.generate({
    role: "judge.fac",
    messages: [{ role: "user", content: prompt.render(input.query, answer) }],
    options: { temperature: 0, maxTokens: 512 }
  })
  return { label: facLabelOf(reply.text), evaluation: reply.text }
})

export interface FacSummary {
  readonly judged: number
  readonly kept: number
}

/** FAC labels for every entry (one per task: their script samples at temperature 0); stored labels of the same texts are kept. */
export const evaluateFac = (
  entries: ReadonlyArray<JudgeInput>,
  options: {
    readonly store: string
    readonly judge: string
    readonly prompt: FacPrompt
    readonly concurrency?: number | undefined
    readonly force?: boolean | undefined
  }
): Effect.Effect<FacSummary, ProviderError | RunDirError, LanguageModel> =>
  Effect.gen(function* () {
    let judged = 0,
      kept = 0
    yield* Effect.forEach(
      entries,
      (entry) =>
        Effect.gen(function* () {
          const path = facLabelPath(options.store, options.judge, entry.method, entry.group, entry.taskId, runOf(entry))
          const stored = readJsonIf(path, FacLabel)
          if (stored && stored.prompts === options.prompt.source && !options.force) return void kept++
          const { label, evaluation } = yield* judgeFac(entry, options.prompt)
          yield* writeJsonAtomic(
            path,
            redactValue({
              taskId: entry.taskId,
              method: entry.method,
              group: entry.group,
              judge: options.judge,
              prompts: options.prompt.source,
              label,
              evaluation: redactText(evaluation)
            } satisfies FacLabel)
          )
          judged++
        }),
      { concurrency: options.concurrency ?? 4, discard: true }
    )
    return { judged, kept }
  })

/** FAC of one method and group from stored labels: the share Solved, over the tasks labelled. */
export const storedFac = (
  store: string,
  judgeSlug: string,
  entries: ReadonlyArray<JudgeInput>
): { rate: number; n: number } | undefined => {
  const labels = entries
    .map((e) => readJsonIf(facLabelPath(store, judgeSlug, e.method, e.group, e.taskId, runOf(e)), FacLabel))
    .filter((l) => l !== undefined)
  if (labels.length === 0) return undefined
  return { rate: (100 * labels.filter((l) => l.label === "Solved").length) / labels.length, n: labels.length }
}
