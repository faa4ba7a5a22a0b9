// ToolEval's judge functions (check_answer_status, parse_answer_status, select_better_answer): the
// texts, argument schemas and temperature of StableToolBench's tooleval_gpt-3.5-turbo_default, read
// from a checkout (--stb), or our own wording of the same rules with the same schemas.
import { parse as parseYaml } from "yaml"
import { z } from "zod"
import { loadTemplate, render } from "../../src/text/prompt-template.ts"
import { pythonFormat, readStbFile, STB_FILES, StbFilesError } from "../../src/text/stabletoolbench-files.ts"
import { AnswerStatus } from "./labels.ts"

export const JUDGE_FUNCTIONS = ["check_answer_status", "parse_answer_status", "select_better_answer"] as const
export type JudgeFunction = (typeof JUDGE_FUNCTIONS)[number]

/** ToolEval asks for the reason inside the function's arguments (return_reason=True adds it). */
const Reason = z.string().describe("The reason for the decision.")

export const StatusVerdict = z.object({ answer_status: AnswerStatus, reason: Reason })
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
  readonly status: Readonly<
    Record<"check_answer_status" | "parse_answer_status", z.ZodType<z.infer<typeof StatusVerdict>>>
  >
  readonly index: z.ZodType<z.infer<typeof IndexVerdict>>
}

/** ToolEval's temperature, also used with our own wording so that K judge runs can differ as theirs do. */
export const TOOLEVAL_TEMPERATURE = 0.2

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
  index: IndexVerdict
})

const FunctionConfig = z.looseObject({
  name: z.string(),
  parameters: z.looseObject({
    type: z.literal("object"),
    properties: z.record(z.string(), z.unknown()),
    required: z.array(z.string())
  })
})
const EvaluatorConfig = z.looseObject({
  completions_kwargs: z.looseObject({ temperature: z.number(), functions: z.array(FunctionConfig) })
})

/** A function's argument schema from the config, with the reason ToolEval adds. */
const argumentsSchema = <A>(
  config: z.infer<typeof EvaluatorConfig>,
  name: JudgeFunction,
  path: string,
  check: z.ZodType<A>,
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
    properties: {
      ...properties,
      reason: { type: "string", description: "The reason for the decision." }
    },
    required: [...fn.parameters.required, "reason"]
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
  const prompts: JudgePrompts = {
    source: `stabletoolbench:${dir}`,
    temperature: config.data.completions_kwargs.temperature,
    render: (fn, values) => pythonFormat(descriptions.get(fn)!, values),
    status: {
      check_answer_status: argumentsSchema(config.data, "check_answer_status", configPath, StatusVerdict),
      parse_answer_status: argumentsSchema(config.data, "parse_answer_status", configPath, StatusVerdict)
    },
    index: argumentsSchema(config.data, "select_better_answer", configPath, IndexVerdict, {
      index: { enum: [...WIN_INDEXES] }
    })
  }
  cache.set(dir, prompts)
  return prompts
}

/** The judge's texts for a checkout, or our own wording without one. */
export const judgePrompts = (stbDir: string | undefined): JudgePrompts =>
  stbDir === undefined ? smurfsJudgePrompts() : stabletoolbenchJudgePrompts(stbDir)
