import * as Effect from "effect/Effect"
import { z } from "zod"
import { BadPathError } from "../../bad-path.ts"
import { dataRecord } from "../data-record.ts"
import { dataOf, isKind, isTopLevel } from "../events.ts"
import { readFileBounded } from "../guarded-fs.ts"
import type { FinishType, RunEvent } from "../record.ts"

/** A function as StableToolBench lists it in `available_tools`. */
export interface FunctionSpec {
  readonly name: string
  readonly description: string
  readonly parameters: Record<string, unknown>
}

/** One node of `answer_details`: system, user, assistant (text) or tool (`{name, arguments, response}`). */
export interface AnswerNode {
  readonly role: string
  readonly message: string | { readonly name: string; readonly arguments: string; readonly response: string }
  readonly next: ReadonlyArray<AnswerNode>
}
const AnswerNodeSchema: z.ZodType<AnswerNode> = z.lazy(() =>
  z.object({
    role: z.string(),
    message: z.union([z.string(), z.object({ name: z.string(), arguments: z.string(), response: z.string() })]),
    next: z.array(AnswerNodeSchema)
  })
)

const FlatFunction = z.looseObject({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown())
})

/**
 * A function of `available_tools`: flat, as older StableToolBench runs wrote it, or
 * `{"type": "function", "function": {...}}` as newer ones do; read as the flat shape.
 */
export const AvailableTool = z.union([
  FlatFunction,
  z.object({ type: z.literal("function"), function: FlatFunction }).transform((t) => t.function)
])

/** The `answer` of a converted prediction: what ToolEval's judges are shown. */
export const ConvertedAnswerBody = z.object({
  method: z.string(),
  total_steps: z.number(),
  final_answer: z.string(),
  answer_details: z.array(AnswerNodeSchema)
})
export type ConvertedAnswerBody = z.infer<typeof ConvertedAnswerBody>

export const ConvertedAnswer = z.object({
  query: z.string(),
  available_tools: z.array(AvailableTool),
  answer: ConvertedAnswerBody
})
export type ConvertedAnswer = z.infer<typeof ConvertedAnswer>

/** A converted file: query id -> answer (any id, `__proto__` too: a null-prototype object). */
export const ConvertedFile = dataRecord(z.string(), ConvertedAnswer)
export type ConvertedFile = z.infer<typeof ConvertedFile>

/** What the converter needs of a task's run (a TaskRecord has all of it). */
export interface ConvertibleRun {
  readonly taskId: string
  readonly method: string
  readonly query: string
  readonly finalAnswer: string
  readonly finishType: FinishType
  readonly events: ReadonlyArray<Pick<RunEvent, "type" | "data" | "subtask" | "agent">>
}

/** One action of a chain: a thought, then a function call and what it returned ("" for Finish). */
export interface ChainStepLike {
  readonly thought?: string | undefined
  readonly tool: string
  readonly arguments: string
  readonly response: string
}

const FINISH = "Finish"

/** StableToolBench's `final_answer`: the Finish call's arguments as pretty JSON text. */
export const finishAnswerText = (finalAnswer: string): string =>
  JSON.stringify({ return_type: "give_answer", final_answer: finalAnswer }, null, 2)

/**
 * A function's entry of `available_tools` as StableToolBench writes it: parameters with `type`,
 * `properties`, `required` and (for API functions, not for Finish) the `optional` names.
 */
export const availableTool = (spec: FunctionSpec): FunctionSpec => {
  const properties = (spec.parameters["properties"] ?? {}) as Record<string, unknown>
  const required = Array.isArray(spec.parameters["required"]) ? (spec.parameters["required"] as Array<string>) : []
  const parameters: Record<string, unknown> = { type: "object", properties, required }
  if (spec.name !== FINISH) parameters["optional"] = Object.keys(properties).filter((k) => !required.includes(k))
  return { name: spec.name, description: spec.description, parameters }
}

const argsText = (args: unknown): string => JSON.stringify(args ?? {}, null, 2)

/**
 * The chain to write. Methods that end with a chosen path (ReAct, DFSDT) put it on their final event;
 * for the others (Smurfs) it is every thought and tool call in order.
 */
export const chainOf = (run: ConvertibleRun): ReadonlyArray<ChainStepLike> => {
  const final = run.events.findLast((e) => isKind(e, "final_answer") || isKind(e, "give_up"))
  const recorded =
    final === undefined
      ? undefined
      : isKind(final, "give_up")
        ? dataOf(final, "give_up").chain
        : dataOf(final, "final_answer").chain
  if (Array.isArray(recorded)) return recorded as ReadonlyArray<ChainStepLike>
  const steps: Array<ChainStepLike> = []
  // Subtasks of a plan may run concurrently: a thought pairs with the next call of its own subtask.
  // A sub-agent's events are left out: its work is the one call of the agent tool.
  const thoughts = new Map<number | undefined, string>()
  for (const e of run.events) {
    if (!isTopLevel(e)) continue
    if (isKind(e, "thought")) thoughts.set(e.subtask, String(dataOf(e, "thought").thought ?? ""))
    if (isKind(e, "tool_call")) {
      const call = dataOf(e, "tool_call")
      steps.push({
        thought: thoughts.get(e.subtask) ?? "",
        tool: String(call.tool),
        arguments: argsText(call.args),
        response: String(call.content ?? "")
      })
      thoughts.delete(e.subtask)
    }
  }
  return steps
}

/**
 * The `answer_details` chain as convert_to_answer_format.py builds it: system -> user -> ..., each
 * node the only child of the one before. An answered run is written from its messages: a reply that
 * called a function is its tool node only (their converter drops the text beside a call), a reply
 * that called none is an assistant node. A run without an answer is written from its tree, where
 * every reply's text is a thought node before its call.
 */
export const answerDetails = (run: ConvertibleRun): { details: Array<AnswerNode>; totalSteps: number } => {
  const flat: Array<Omit<AnswerNode, "next">> = [
    { role: "system", message: "" },
    { role: "user", message: "" }
  ]
  const steps = [...chainOf(run)]
  const answered = run.finishType === "give_answer"
  // A method that answers without a Finish call (Smurfs) gets one, so that ToolEval sees a finished chain.
  if (answered && steps.at(-1)?.tool !== FINISH)
    steps.push({ tool: FINISH, arguments: finishAnswerText(run.finalAnswer), response: "" })
  for (const step of steps) {
    if (step.thought && (!answered || step.tool === "")) flat.push({ role: "assistant", message: step.thought })
    if (step.tool !== "")
      flat.push({
        role: "tool",
        message: { name: step.tool, arguments: step.arguments, response: step.tool === FINISH ? "" : step.response }
      })
  }
  let details: Array<AnswerNode> = []
  for (const node of flat.reverse()) details = [{ ...node, next: details }]
  return { details, totalSteps: flat.length }
}

/** The StableToolBench method name (CoT@1, DFS_woFilter_w2) a run recorded, else its runner name. */
const methodOf = (run: ConvertibleRun): string => {
  const final = run.events.findLast((e) => isKind(e, "final_answer") || isKind(e, "give_up"))
  const method =
    final === undefined
      ? undefined
      : isKind(final, "give_up")
        ? dataOf(final, "give_up").method
        : dataOf(final, "final_answer").method
  return typeof method === "string" ? method : run.method
}

/** True when the run's method writes `final_answer` as plain text, as the Smurfs authors' converter does (ToolBench's is the Finish arguments' JSON). */
const plainFinalAnswer = (run: ConvertibleRun): boolean =>
  run.events.findLast((e) => isKind(e, "final_answer"))?.data["finalAnswerText"] === "plain"

/** The `answer` part of a run's converted prediction: what ToolEval's judges see of it. */
export const convertedAnswerOf = (run: ConvertibleRun): ConvertedAnswerBody => {
  const { details, totalSteps } = answerDetails(run)
  return {
    method: methodOf(run),
    total_steps: totalSteps,
    final_answer:
      run.finishType === "give_answer" && run.finalAnswer
        ? plainFinalAnswer(run)
          ? run.finalAnswer
          : finishAnswerText(run.finalAnswer)
        : "",
    answer_details: details
  }
}

/** One query's converted answer; `tools` are the task's functions (Finish is added when missing). */
export const toConverted = (
  run: ConvertibleRun,
  tools: ReadonlyArray<FunctionSpec>,
  finish: FunctionSpec
): ConvertedAnswer => {
  const functions = tools.some((t) => t.name === FINISH) ? tools : [...tools, finish]
  return {
    query: run.query,
    available_tools: functions.map((f) => ({ ...availableTool(f) })),
    answer: convertedAnswerOf(run)
  }
}

/** A converted file could not be read. */
export class ConvertedFormatError extends BadPathError("ConvertedFormatError") {
  constructor(args: { readonly path: string; readonly problem: string }) {
    super({
      ...args,
      hint: `Expected StableToolBench's converted predictions ({query_id: {query, available_tools, answer}}), as written by \`smurfs bench\` or StableToolBench's convert_to_answer_format.py.`
    })
  }
}

/** Read and validate a converted predictions file (ours or StableToolBench's). */
export const readConverted = (file: string): Effect.Effect<ConvertedFile, ConvertedFormatError> =>
  Effect.gen(function* () {
    const raw = yield* Effect.try({
      try: () => JSON.parse(readFileBounded(file)) as unknown,
      catch: (e) =>
        new ConvertedFormatError({
          path: file,
          problem: `cannot read it as JSON (${(e as Error).message.split("\n")[0]})`
        })
    })
    const parsed = ConvertedFile.safeParse(raw)
    if (!parsed.success)
      return yield* new ConvertedFormatError({
        path: file,
        problem: z.prettifyError(parsed.error).split("\n").slice(0, 4).join("; ")
      })
    return parsed.data
  })
