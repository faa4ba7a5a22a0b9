// ToolEval's judge functions (check_answer_status, parse_answer_status, select_better_answer): the
// texts, argument schemas and temperature of StableToolBench's tooleval_gpt-3.5-turbo_default, read
// from a checkout (--stb), or our own wording of the same rules with the same schemas.
import { createRequire } from "node:module"
import { z } from "zod"
import { loadTemplate, render } from "../../src/text/prompt-template.ts"
import {
  hasStbFile,
  pythonFormat,
  readStbFile,
  STB_FILES,
  StbFilesError,
  unescapePython
} from "../../src/text/stabletoolbench-files.ts"
import { AnswerStatus } from "./labels.ts"

export const JUDGE_FUNCTIONS = ["check_answer_status", "parse_answer_status", "select_better_answer"] as const
export type JudgeFunction = (typeof JUDGE_FUNCTIONS)[number]

/** Our description of the reason ToolEval asks for inside the function's arguments (return_reason=True adds it). */
const OUR_REASON = "The reason for the decision."
const Reason = z.string().describe(OUR_REASON)

export const StatusVerdict = z.object({ answer_status: AnswerStatus, reason: Reason })
/** A status without its reason: what the win round's re-judge asks (their check_is_solved with return_reason=False). */
export const StatusOnly = z.object({ answer_status: AnswerStatus })
type StatusFunction = "check_answer_status" | "parse_answer_status"
/**
 * ToolEval's `index` is any number; a grammar-constrained judge (Ollama's format, llama.cpp's json_schema) then
 * writes 4.8 as readily as 1. The schema sent allows only the two answers' indexes; the prompt is unchanged.
 */
const WIN_INDEXES = [0, 1] as const
export const IndexVerdict = z.object({
  index: z.literal(WIN_INDEXES).describe("The `index` value in the selected better answer."),
  reason: Reason
})

export interface JudgePrompts {
  /** Which texts these are, recorded with every label: "smurfs" or "stabletoolbench:<dir>". */
  readonly source: string
  /** The sampling temperature of every judge call (ToolEval's config: 0.2). */
  readonly temperature: number
  /** The user message of a function for its fields ({query, answer} or {query, answer_0, answer_1}). */
  readonly render: (fn: JudgeFunction, values: Readonly<Record<string, string>>) => string
  /** The arguments each function returns, as sent to the judge (JSON Schema) and checked on the reply. */
  readonly status: Readonly<Record<StatusFunction, z.ZodType<z.infer<typeof StatusVerdict>>>>
  /** The same functions asked without a reason, as the win round's re-judge asks them (return_reason=False). */
  readonly statusOnly: Readonly<Record<StatusFunction, z.ZodType<z.infer<typeof StatusOnly>>>>
  readonly index: z.ZodType<z.infer<typeof IndexVerdict>>
  /** The output limit of every judge call (ToolEval's config: max_tokens 1000). */
  readonly maxTokens: number
}

/** ToolEval's temperature, also used with our own wording so that K judge runs can differ as theirs do. */
export const TOOLEVAL_TEMPERATURE = 0.2
/** ToolEval's output limit (its config's max_tokens), also used with our own wording. */
export const TOOLEVAL_MAX_TOKENS = 1000

const TEMPLATES: Record<JudgeFunction, string> = {
  check_answer_status: "judge-check-answer",
  parse_answer_status: "judge-parse-answer",
  select_better_answer: "judge-select-better"
}

/** Our wording (prompts/judge-*.md), ToolEval's argument schemas and temperature. */
export const smurfsJudgePrompts = (): JudgePrompts => ({
  source: "smurfs",
  temperature: TOOLEVAL_TEMPERATURE,
  render: (fn, values) => render(loadTemplate(TEMPLATES[fn]).user, values),
  status: { check_answer_status: StatusVerdict, parse_answer_status: StatusVerdict },
  statusOnly: { check_answer_status: StatusOnly, parse_answer_status: StatusOnly },
  index: IndexVerdict,
  maxTokens: TOOLEVAL_MAX_TOKENS
})

const FunctionConfig = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  parameters: z.looseObject({
    type: z.literal("object"),
    properties: z.record(z.string(), z.unknown()),
    required: z.array(z.string())
  })
})
const EvaluatorConfig = z.looseObject({
  completions_kwargs: z.looseObject({
    temperature: z.number(),
    max_tokens: z.number().int().positive().optional(),
    functions: z.array(FunctionConfig)
  })
})

/**
 * A function's argument schema from the config, with its description (what their forced function call sends beside
 * it) and the reason ToolEval adds with return_reason=True (described as `reason` says; none: asked without).
 */
const argumentsSchema = <A>(
  config: z.infer<typeof EvaluatorConfig>,
  name: JudgeFunction,
  path: string,
  check: z.ZodType<A>,
  reason: string | undefined,
  narrowed: Readonly<Record<string, Record<string, unknown>>> = {}
): z.ZodType<A> => {
  const fn = config.completions_kwargs.functions.find((f) => f.name === name)
  if (!fn) throw new StbFilesError({ path, problem: `no function ${name} in completions_kwargs.functions` })
  const properties = { ...fn.parameters.properties }
  // a property the decision rules read narrowed to the values they accept, its own type and description kept
  for (const [key, narrow] of Object.entries(narrowed))
    if (key in properties) properties[key] = { ...(properties[key] as Record<string, unknown>), ...narrow }
  const schema = z.fromJSONSchema({
    type: "object",
    ...(fn.description === undefined ? {} : { description: fn.description }),
    properties: { ...properties, ...(reason === undefined ? {} : { reason: { type: "string", description: reason } }) },
    required: [...fn.parameters.required, ...(reason === undefined ? [] : ["reason"])]
  })
  // Their schema is what the judge is sent; ours checks that it still yields what the decision rules read.
  return schema.pipe(check) as unknown as z.ZodType<A>
}

const cache = new Map<string, JudgePrompts>()

/** ToolEval's own judge: template.txt's function descriptions, config.yaml's schemas and temperature. */
export const stabletoolbenchJudgePrompts = (dir: string): JudgePrompts => {
  const hit = cache.get(dir)
  if (hit) return hit
  const templatePath = `${dir}/${STB_FILES.toolevalTemplate}`
  const configPath = `${dir}/${STB_FILES.toolevalConfig}`
  const template = readStbFile(dir, STB_FILES.toolevalTemplate)
  const descriptions = new Map<string, string>()
  // as their evaluator reads it: <function><name>..</name><description>..</description></function>
  for (const [, body] of template.matchAll(/<function>([\s\S]*?)<\/function>/g)) {
    const name = /<name>([\s\S]*?)<\/name>/.exec(body!)?.[1]
    const description = /<description>([\s\S]*?)<\/description>/.exec(body!)?.[1]
    if (name !== undefined && description !== undefined) descriptions.set(name, description)
  }
  for (const fn of JUDGE_FUNCTIONS)
    if (!descriptions.has(fn)) throw new StbFilesError({ path: templatePath, problem: `no <function> named ${fn}` })
  // yaml (some 70 modules) is loaded here, the one place that reads YAML, not by every command that judges or reports
  const { parse: parseYaml } = createRequire(import.meta.url)("yaml") as typeof import("yaml")
  let raw: unknown
  try {
    raw = parseYaml(readStbFile(dir, STB_FILES.toolevalConfig))
  } catch (e) {
    if (e instanceof StbFilesError) throw e
    throw new StbFilesError({ path: configPath, problem: `not valid YAML (${(e as Error).message.split("\n")[0]})` })
  }
  const config = EvaluatorConfig.safeParse(raw)
  if (!config.success)
    throw new StbFilesError({
      path: configPath,
      problem: `not an evaluator config: ${z.prettifyError(config.error).split("\n")[0]}`
    })
  const reason = reasonDescription(dir)
  const prompts: JudgePrompts = {
    source: `stabletoolbench:${dir}`,
    temperature: config.data.completions_kwargs.temperature,
    maxTokens: config.data.completions_kwargs.max_tokens ?? TOOLEVAL_MAX_TOKENS,
    render: (fn, values) => pythonFormat(descriptions.get(fn)!, values),
    status: {
      check_answer_status: argumentsSchema(config.data, "check_answer_status", configPath, StatusVerdict, reason),
      parse_answer_status: argumentsSchema(config.data, "parse_answer_status", configPath, StatusVerdict, reason)
    },
    statusOnly: {
      check_answer_status: argumentsSchema(config.data, "check_answer_status", configPath, StatusOnly, undefined),
      parse_answer_status: argumentsSchema(config.data, "parse_answer_status", configPath, StatusOnly, undefined)
    },
    index: argumentsSchema(config.data, "select_better_answer", configPath, IndexVerdict, reason, {
      index: { enum: [...WIN_INDEXES] }
    })
  }
  cache.set(dir, prompts)
  return prompts
}

/**
 * The description of the reason their function_call adds (registered_cls/tooleval.py), read when the checkout has the
 * file; a partial copy without it (the prompt files only) has ours.
 */
const reasonDescription = (dir: string): string => {
  if (!hasStbFile(dir, STB_FILES.toolevalCall)) return OUR_REASON
  const path = `${dir}/${STB_FILES.toolevalCall}`
  const match = /\['reason'\]\s*=\s*\{[^}]*?'description'\s*:\s*'((?:[^'\\\n]|\\.)*)'/.exec(
    readStbFile(dir, STB_FILES.toolevalCall)
  )
  if (!match) throw new StbFilesError({ path, problem: "no description of the 'reason' property found" })
  return unescapePython(match[1]!)
}

/** The judge's texts for a checkout, or our own wording without one. */
export const judgePrompts = (stbDir: string | undefined): JudgePrompts =>
  stbDir === undefined ? smurfsJudgePrompts() : stabletoolbenchJudgePrompts(stbDir)
