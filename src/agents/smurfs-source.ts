// Reading the Smurfs authors' texts from a checkout of their code the user points to (--smurfs-src /
// SMURFS_SRC): their repository has no licence, so the texts are read at run time, never copied here.
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import * as Data from "effect/Data"
import {
  inheritedFields,
  pythonConstant,
  pythonFormat,
  readSourceFile,
  unescapePython
} from "../text/stabletoolbench-files.ts"

/** Where the authors' code lives, for the messages that ask for a checkout. */
export const SMURFS_REPO = "https://github.com/FreedomIntelligence/Smurfs"

/** The environment variable that names a Smurfs checkout when --smurfs-src is not given. */
export const SMURFS_SRC_ENV = "SMURFS_SRC"

/** The files read, at their own paths under the checkout's root (the folder holding `Smurfs/`). */
export const SMURFS_FILES = {
  planner: "Smurfs/agents/planning_agent/prompt.py",
  executor: "Smurfs/agents/executor_agent/prompt.py",
  answerer: "Smurfs/agents/answer_agent/prompt.py",
  verifier: "Smurfs/agents/verifier_agent/prompt.py",
  inference: "Smurfs/inference/inference.py",
  utils: "Smurfs/inference/utils.py"
} as const

/**
 * Where their model clients live: `base.py` holds the system text (`sys_prompt`) that their vLLM client sends
 * before every prompt (their OpenAI client builds it and drops it). Read when present: a checkout without it runs
 * without a system message, and the run says so.
 */
export const SMURFS_MODEL_FILE = "Smurfs/model/base.py"

/** The prompt variables read, by file; each a triple-quoted langchain template with `{placeholders}`. */
const PROMPTS = {
  task_decompose_prompt: "planner",
  generate_thought_prompt: "executor",
  choose_tool_prompt: "executor",
  choose_parameter_prompt: "executor",
  answer_generation_prompt: "answerer",
  final_answer_generation_prompt: "answerer",
  final_answer_check_prompt: "verifier"
} as const satisfies Record<string, keyof typeof SMURFS_FILES>

export type SmurfsPromptName = keyof typeof PROMPTS

/** A Smurfs checkout is missing or does not hold what is read from it. */
export class SmurfsSourceError extends Data.TaggedError("SmurfsSourceError")<{
  readonly path: string
  readonly problem: string
}> {
  override get message() {
    return `${this.path}: ${this.problem}. --profile reference runs the Smurfs authors' prompts from a checkout of their code: clone ${SMURFS_REPO} and pass its folder (the one holding Smurfs/) with --smurfs-src <dir> or ${SMURFS_SRC_ENV}.`
  }
}

/** The authors' texts, ready to fill. */
export interface SmurfsSource {
  /** Recorded in run.json: "smurfs-src:<dir>". */
  readonly source: string
  /** A prompt with its placeholders filled, as langchain's `PromptTemplate.format` fills it. */
  readonly render: (name: SmurfsPromptName, values: Readonly<Record<string, string>>) => string
  /** The hint the executor sees before the verifier gave one. */
  readonly firstHint: string
  /** The previous log of a path with no step yet (`get_answer_log` of an empty log). */
  readonly emptyLog: string
  /** The subtask answer when every tool failed at the root, around the partial answer. */
  readonly sorry: (partialAnswer: string) => string
  /**
   * The system message their vLLM client sends before every prompt (`sys_prompt` of `Smurfs/model/base.py`), or
   * undefined when the checkout lacks it (`systemMissing` says what was looked for).
   */
  readonly system: string | undefined
  readonly systemMissing?: string | undefined
}

const read = (dir: string, file: string): string => {
  const path = join(dir, file)
  if (!existsSync(path)) throw new SmurfsSourceError({ path, problem: "not found" })
  return readSourceFile(path, (problem) => new SmurfsSourceError({ path, problem }))
}

/** The first double-quoted string literal matched by `pattern`'s group 1, unescaped; a SmurfsSourceError when absent. */
const literal = (source: string, pattern: RegExp, path: string, what: string): string => {
  const match = pattern.exec(source)
  if (!match) throw new SmurfsSourceError({ path, problem: `no ${what} found` })
  return unescapePython(match[1]!)
}

const cache = new Map<string, SmurfsSource>()

/** The authors' texts from a checkout; throws a SmurfsSourceError naming the file that is missing or changed shape. */
export const readSmurfsSource = (dir: string): SmurfsSource => {
  const hit = cache.get(dir)
  if (hit) return hit
  const files = Object.fromEntries(Object.entries(SMURFS_FILES).map(([k, f]) => [k, read(dir, f)])) as Record<
    keyof typeof SMURFS_FILES,
    string
  >
  const templates = Object.fromEntries(
    Object.entries(PROMPTS).map(([name, file]) => {
      const path = join(dir, SMURFS_FILES[file])
      let template: string
      try {
        template = pythonConstant(files[file], name, path)
      } catch {
        throw new SmurfsSourceError({ path, problem: `no string ${name} found` })
      }
      const inherited = inheritedFields(template)
      if (inherited.length > 0)
        throw new SmurfsSourceError({
          path,
          problem: `${name} has the field {${inherited[0]}}, which no prompt fills (it would render Object's own member)`
        })
      return [name, template]
    })
  ) as Record<SmurfsPromptName, string>
  const inference = join(dir, SMURFS_FILES.inference)
  const firstHint = literal(
    files.inference,
    /\bhint\s*=\s*"((?:[^"\\\n]|\\.)*)"/,
    inference,
    'first hint (hint = "...")'
  )
  // the f-string around {partial_answer}: their subtask answer when every tool failed at the root
  const sorry = literal(
    files.inference,
    /f"((?:[^"\\\n]|\\.)*\{partial_answer\}(?:[^"\\\n]|\\.)*)"/,
    inference,
    'subtask answer f"...{partial_answer}"'
  )
  const [before, after] = sorry.split("{partial_answer}") as [string, string]
  const utils = join(dir, SMURFS_FILES.utils)
  const emptyLog = literal(
    files.utils,
    /def get_answer_log[\s\S]*?return\s+"((?:[^"\\\n]|\\.)*)"/,
    utils,
    "empty log text of get_answer_log"
  )
  const system = systemOf(dir)
  const source: SmurfsSource = {
    source: `smurfs-src:${dir}`,
    render: (name, values) => pythonFormat(templates[name], values),
    firstHint,
    emptyLog,
    sorry: (partial) => `${before}${partial}${after}`,
    ...system
  }
  cache.set(dir, source)
  return source
}

/** Their system text (`sys_prompt: str = "..."` in the model clients' base class), or what is missing. */
const systemOf = (dir: string): Pick<SmurfsSource, "system" | "systemMissing"> => {
  const path = join(dir, SMURFS_MODEL_FILE)
  if (!existsSync(path)) return { system: undefined, systemMissing: `${path} is not there` }
  try {
    const source = readSourceFile(path, (problem) => new SmurfsSourceError({ path, problem }))
    return { system: literal(source, /\bsys_prompt\s*(?::\s*str\s*)?=\s*"((?:[^"\\\n]|\\.)*)"/, path, "sys_prompt") }
  } catch (e) {
    return { system: undefined, systemMissing: e instanceof SmurfsSourceError ? `${path}: ${e.problem}` : String(e) }
  }
}

/**
 * What a reference run says at its start when the checkout lacks their system text (else undefined): their vLLM
 * client, which ran their local models, sends it before every prompt.
 */
export const smurfsSystemNote = (source: SmurfsSource): string | undefined =>
  source.systemMissing === undefined
    ? undefined
    : `the Smurfs checkout has no system text for the model (${source.systemMissing}; their vLLM client sends sys_prompt of ${SMURFS_MODEL_FILE} before every prompt): the authors' agents run without a system message (a current clone of ${SMURFS_REPO} has it).`

/** The checkout to read: the flag, else the environment, else none. */
export const smurfsSrcDirOf = (flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const dir = flag ?? env[SMURFS_SRC_ENV]
  return dir === undefined || dir.trim() === "" ? undefined : resolve(dir)
}
