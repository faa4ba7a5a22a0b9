// What the simulator model is sent on a cache miss: StableToolBench's own server prompts (read from a checkout,
// GPT style or MirrorAPI style) or our template, which states the same rules.
import { createRequire } from "node:module"
import type { GenerateRequest, Message } from "../../llm/language-model.ts"
import { fencedData } from "../../text/fenced-data.ts"
import { renderTemplate } from "../../text/prompt-template.ts"
import {
  inheritedFields,
  pythonConstant,
  pythonFormat,
  readStbFile,
  STB_FILES,
  StbFilesError,
  unescapePython
} from "../../text/stabletoolbench-files.ts"
import { redactText } from "../../trace/redact.ts"
import { standardizeCategory } from "../toolbench/names.ts"
import type { ToolCall } from "./environment.ts"
import { pythonRepr, pythonStrRepr } from "./python-repr.ts"
import type { Recording } from "./recorded.ts"
import { writtenKey } from "./written-args.ts"

/** Whose server the simulation follows: main.py (GPT style) or the MirrorAPI server. */
export const SIMULATOR_STYLES = ["gpt", "mirrorapi"] as const
export type SimulatorStyle = (typeof SIMULATOR_STYLES)[number]

/** An earlier response of the same API as a cache file holds it: its key (the arguments' repr) and its value. */
const cacheEntryOf = (recording: Recording): { key: string; value: unknown } => {
  let value: unknown = recording.response
  try {
    value = JSON.parse(recording.response)
  } catch {
    // a response recorded cut is shown as its text
  }
  if (recording.key !== undefined) return { key: recording.key, value }
  let args: unknown
  try {
    args = JSON.parse(recording.args)
  } catch {
    args = recording.args
  }
  return { key: typeof args === "object" && args !== null ? pythonRepr(args) : String(args), value }
}

export interface SimulatorPrompts {
  /** Recorded in run.json: "smurfs", "stabletoolbench:<dir>" or "mirrorapi:<dir>". */
  readonly source: string
  /** Sampling as their server's config sets it (ours: 0). */
  readonly temperature: number
  /** The seed sent; undefined: the simulator model's own; null: none (their GPT-style server sends none). */
  readonly seed?: number | null | undefined
  readonly maxTokens?: number | undefined
  /** How the reply's `{error, response}` shape is asked for (GenerateRequest.formatAs); undefined: its JSON Schema. */
  readonly formatAs?: GenerateRequest["formatAs"]
  /**
   * False when the simulation reads and writes no cache, as their MirrorAPI servers keep none: every call is asked of
   * the simulator, and its response is stored nowhere. Undefined: responses are cached and replayed (their main.py).
   */
  readonly cached?: boolean | undefined
  /** How many earlier responses of the API the prompt shows (0: none). */
  readonly maxExamples: number
  /** The messages for one call, with up to `maxExamples` earlier responses of the same API. */
  readonly messages: (call: ToolCall, examples: ReadonlyArray<Recording>) => Array<Message>
}

/**
 * The cache key StableToolBench's server uses for a call: `str(tool_input)`, the repr of the decoded arguments (of
 * the model's own text when the reference profile kept it: its key order and numbers as written).
 */
export const cacheKeyOf = (args: Readonly<Record<string, unknown>>): string => writtenKey(args) ?? pythonRepr(args)

/** Python's str() of `list(cache.items())[:n]`: a list of (key, value) tuples. */
const examplesRepr = (examples: ReadonlyArray<Recording>): string =>
  `[${examples
    .map(cacheEntryOf)
    .map((e) => `(${pythonStrRepr(e.key)}, ${pythonRepr(e.value)})`)
    .join(", ")}]`

const templateText = (template: unknown): string =>
  template === undefined || template === null || template === ""
    ? "(none)"
    : typeof template === "string"
      ? template
      : JSON.stringify(template)

/** Our own wording (prompts/simulate-tool.md): the same rules as their server's, examples fenced as data. */
export const smurfsSimulatorPrompts = (): SimulatorPrompts => ({
  source: "smurfs",
  temperature: 0,
  maxExamples: 5,
  messages: (call, examples) => {
    const text = examples.map((e) => `${e.args} -> ${e.response}`).join("\n")
    const prompt = renderTemplate("simulate-tool", {
      api_doc: JSON.stringify(
        {
          tool: call.doc.tool_name,
          category: call.doc.category_name,
          api: call.doc.api_name,
          description: call.doc.api_description,
          method: call.doc.method,
          required_parameters: call.doc.required_parameters,
          optional_parameters: call.doc.optional_parameters
        },
        null,
        1
      ),
      template: templateText(call.doc.template_response),
      // recorded responses are data (fenced) and may hold a key a server echoed: redacted before they are sent
      examples: fencedData(
        "recorded-examples",
        redactText(text === "" ? "(none)" : text.length > 2048 ? `${text.slice(0, 2048)}...` : text)
      ),
      input: fencedData("api-input", JSON.stringify(call.args))
    })
    return [
      { role: "system", content: prompt.system },
      { role: "user", content: prompt.user }
    ]
  }
})

/** `yaml` loads when a StableToolBench config is read, not with `import "smurfs"` (its node build is CommonJS). */
const parseYaml = (text: string): unknown =>
  (createRequire(import.meta.url)("yaml") as typeof import("yaml")).parse(text)

const Config = (path: string, text: string): Record<string, unknown> => {
  try {
    const value: unknown = parseYaml(text)
    if (typeof value === "object" && value !== null) return value as Record<string, unknown>
  } catch {
    // reported below
  }
  throw new StbFilesError({ path, problem: "not a YAML mapping" })
}

const temperatureOf = (dir: string, file: string): number => {
  const config = Config(`${dir}/${file}`, readStbFile(dir, file))
  const t = config["temperature"]
  if (typeof t !== "number") throw new StbFilesError({ path: `${dir}/${file}`, problem: "no numeric temperature" })
  return t
}

type Term = { readonly text: string } | { readonly name: string; readonly cut?: number | undefined }

/** main.py's user prompt: a `+` of string literals and `str(name)` / `str(name)[:n]` terms, read as they are written. */
const userPromptTerms = (source: string, path: string): Array<Term> => {
  const line = /\n\s*user_prompt\s*=\s*("[^\n]*)\n/.exec(source)
  if (!line) throw new StbFilesError({ path, problem: "no user_prompt = ... line found" })
  const expr = line[1]!
  const term = /\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|str\((\w+)\)(?:\[:(\d+)\])?)\s*(\+|$)/y
  const terms: Array<Term> = []
  while (term.lastIndex < expr.length) {
    const m = term.exec(expr)
    if (!m)
      throw new StbFilesError({ path, problem: `user_prompt is not a sum of strings and str(...) terms: ${expr}` })
    if (m[3] !== undefined) terms.push({ name: m[3], cut: m[4] === undefined ? undefined : Number(m[4]) })
    else terms.push({ text: unescapePython(m[1] ?? m[2] ?? "") })
    if (m[5] === "") break
  }
  return terms
}

const cache = new Map<string, SimulatorPrompts>()

/**
 * The GPT-style simulation of StableToolBench's server/main.py (fake_response_function_chat): its system
 * prompt and user prompt, up to 5 earlier responses of the API from its cache file (fewer while their text
 * is over 2,048 characters), temperature from server/config.yml.
 */
export const stabletoolbenchSimulatorPrompts = (dir: string, reference = false): SimulatorPrompts => {
  const key = `gpt\u0000${reference}\u0000${dir}`
  const hit = cache.get(key)
  if (hit) return hit
  const path = `${dir}/${STB_FILES.serverMain}`
  const source = readStbFile(dir, STB_FILES.serverMain)
  const system = pythonConstant(source, "system_prompt", path)
  const terms = userPromptTerms(source, path)
  const exampleNum = Number(/\n\s*example_num\s*=\s*(\d+)/.exec(source)?.[1] ?? 5)
  const prompts: SimulatorPrompts = {
    source: `stabletoolbench:${dir}`,
    temperature: temperatureOf(dir, STB_FILES.serverConfig),
    maxTokens: 1024,
    // reference: their request as their server sends it, a JSON object asked for and no seed
    ...(reference ? { formatAs: "json_object" as const, seed: null } : {}),
    maxExamples: exampleNum,
    messages: (call, examples) => {
      // their api_doc: the tool's description (from their tools folder; a query's api_list has none) and the API's name and description
      const apiDoc = {
        tool_description: typeof call.doc["tool_description"] === "string" ? call.doc["tool_description"] : "",
        api_info: [{ name: call.doc.api_name, description: call.doc.api_description }]
      }
      let shown = examples.slice(0, exampleNum)
      while (examplesRepr(shown).length > 2048 && shown.length > 1) shown = shown.slice(0, -1)
      const values: Record<string, string> = {
        api_doc: pythonRepr(apiDoc),
        api_example: examplesRepr(shown),
        tool_input: cacheKeyOf(call.args)
      }
      const user = terms
        .map((t) => {
          if ("text" in t) return t.text
          const value = values[t.name]
          if (value === undefined)
            throw new StbFilesError({
              path,
              problem: `user_prompt uses str(${t.name}), which this reader does not know`
            })
          return t.cut === undefined ? value : value.slice(0, t.cut)
        })
        .join("")
      return [
        { role: "system", content: system },
        { role: "user", content: user }
      ]
    }
  }
  cache.set(key, prompts)
  return prompts
}

/**
 * MirrorAPI's simulation (server/main_mirrorapi_cache.py): system_prompts.py's SFT_SYSTEM and the server's
 * USER_PROMPT filled with the API's doc and the request (no examples), temperature from its config, seed 42.
 */
export const mirrorApiSimulatorPrompts = (dir: string, reference = false): SimulatorPrompts => {
  const key = `mirrorapi\u0000${reference}\u0000${dir}`
  const hit = cache.get(key)
  if (hit) return hit
  const system = pythonConstant(
    readStbFile(dir, STB_FILES.mirrorSystemPrompts),
    "SFT_SYSTEM",
    `${dir}/${STB_FILES.mirrorSystemPrompts}`
  )
  const user = pythonConstant(readStbFile(dir, STB_FILES.mirrorMain), "USER_PROMPT", `${dir}/${STB_FILES.mirrorMain}`)
  const inherited = inheritedFields(user)
  if (inherited.length > 0)
    throw new StbFilesError({
      path: `${dir}/${STB_FILES.mirrorMain}`,
      problem: `USER_PROMPT has the field {${inherited[0]}}, which the simulator never fills`
    })
  const prompts: SimulatorPrompts = {
    source: `mirrorapi:${dir}`,
    temperature: temperatureOf(dir, STB_FILES.mirrorConfig),
    seed: 42,
    maxTokens: 2048,
    // reference: their client asks for no format, and their MirrorAPI server reads and writes no cache
    ...(reference ? { formatAs: "none" as const, cached: false } : {}),
    maxExamples: 0,
    messages: (call) => {
      const category = standardizeCategory(call.doc.category_name)
      const apiDoc = {
        api_name: call.stdApi,
        api_description: call.doc.api_description,
        required_parameters: call.doc.required_parameters,
        optional_parameters: call.doc.optional_parameters,
        tool_description: typeof call.doc["tool_description"] === "string" ? call.doc["tool_description"] : "",
        // their client sends the standardized tool name (rapidapi.py's standard_tool_name), which their server puts here
        tool_name: reference ? call.stdTool : call.doc.tool_name,
        tool_category: category
      }
      const { toolbench_key: _key, ...request } = call.args
      return [
        { role: "system", content: system },
        { role: "user", content: pythonFormat(user, { api_doc: pythonRepr(apiDoc), request: pythonRepr(request) }) }
      ]
    }
  }
  cache.set(key, prompts)
  return prompts
}

/**
 * The simulator's texts: StableToolBench's (with a checkout) in the given style, else ours. `reference` (the profile)
 * also sends their requests as their servers do (docs/fidelity.md: the tool server).
 */
export const simulatorPrompts = (
  stbDir: string | undefined,
  style: SimulatorStyle = "gpt",
  reference = false
): SimulatorPrompts =>
  stbDir === undefined
    ? smurfsSimulatorPrompts()
    : style === "mirrorapi"
      ? mirrorApiSimulatorPrompts(stbDir, reference)
      : stabletoolbenchSimulatorPrompts(stbDir, reference)
