// Reading StableToolBench's own prompt files from a checkout the user points to (--stb / SMURFS_STB):
// their texts are read at run time, never copied into this repository.
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import { BadPathError } from "../bad-path.ts"
import { readFileBounded, SOURCE_FILE_CAP_BYTES, UnreadableFile } from "./regular-file.ts"

/** The files read from a StableToolBench checkout, at their own paths under the folder that holds `toolbench/`. */
export const STB_FILES = {
  react: "toolbench/inference/Prompts/ReAct_prompts.py",
  treeSearch: "toolbench/inference/Prompts/Tree_search_prompts.py",
  rapidapi: "toolbench/inference/Downstream_tasks/rapidapi.py",
  // DFSDT's search (the former-observation line of its diversity prompt); read when the checkout has it
  dfs: "toolbench/inference/Algorithms/DFS.py",
  toolevalTemplate: "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/template.txt",
  toolevalConfig: "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/config.yaml",
  // the judge's function call (the description of the reason return_reason adds); read when the checkout has it
  toolevalCall: "toolbench/tooleval/evaluators/registered_cls/tooleval.py",
  facEval: "toolbench/tooleval/fac_eval.py",
  // the tool server (server/ beside toolbench/): the simulator's prompts and sampling settings
  serverMain: "server/main.py",
  serverConfig: "server/config.yml",
  mirrorSystemPrompts: "server/system_prompts.py",
  mirrorMain: "server/main_mirrorapi_cache.py",
  mirrorConfig: "server/config_mirrorapi_cache.yml"
} as const

/** The environment variable that names a StableToolBench checkout when --stb is not given. */
export const STB_ENV = "SMURFS_STB"

/** A StableToolBench file is missing or does not hold what we read from it. */
export class StbFilesError extends BadPathError("StbFilesError") {
  constructor(args: { readonly path: string; readonly problem: string }) {
    super({
      ...args,
      hint: `Pass --stb (or ${STB_ENV}) the folder of a StableToolBench checkout that holds toolbench/ and server/ (for example ../shared/toolbench/stabletoolbench), or leave it out to use this project's own wording.`
    })
  }
}

/** The checkout to read: the flag, else the environment, else none (our own wording). */
export const stbDirOf = (flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const dir = flag ?? env[STB_ENV]
  return dir === undefined || dir.trim() === "" ? undefined : resolve(dir)
}

/** Whether the checkout has a file (one it may lack: a partial copy holds only the prompt files). */
export const hasStbFile = (dir: string, file: string): boolean => existsSync(join(dir, file))

/** Read one file of the checkout; a StbFilesError names it when it is missing. */
export const readStbFile = (dir: string, file: string): string => {
  const path = join(dir, file)
  if (!existsSync(path)) throw new StbFilesError({ path, problem: "not found" })
  return readSourceFile(path, (problem) => new StbFilesError({ path, problem }))
}

/**
 * A file of a user's checkout, through the bounded regular-file reader: a FIFO, a device (/dev/zero) or a
 * directory at its path is refused at once, naming it, as is a file larger than SOURCE_FILE_CAP_BYTES.
 */
export const readSourceFile = (path: string, refuse: (problem: string) => Error): string => {
  try {
    return readFileBounded(path, SOURCE_FILE_CAP_BYTES)
  } catch (e) {
    throw e instanceof UnreadableFile ? refuse(e.problem) : e
  }
}

/** Python string escapes as they appear in their sources (\" \' \\ \n \t and line continuations). */
export const unescapePython = (text: string): string =>
  text.replace(/\\(\n|\\|"|'|n|t|r)/g, (_, c: string) =>
    c === "\n" ? "" : c === "n" ? "\n" : c === "t" ? "\t" : c === "r" ? "\r" : c
  )

/** The value of a module-level string constant `NAME = """..."""` (or '''...''', "...", '...'). */
export const pythonConstant = (source: string, name: string, path: string): string => {
  // [ \t]* where the name starts a line: \s* there would span runs of blank lines, a search quadratic in their number
  const match = new RegExp(`(?:^|\\n)[ \\t]*${name}[ \\t]*=\\s*[fr]?("""|'''|"|')([\\s\\S]*?)(?<!\\\\)\\1`).exec(source)
  if (!match) throw new StbFilesError({ path, problem: `no string ${name} found` })
  return unescapePython(match[2]!)
}

/**
 * The text around one `{field}` of the first double-quoted f-string (f"...") in `source` that holds it, after `lead`
 * (a regular expression's source) when given: what the f-string reads with the field filled in. Throws a
 * StbFilesError when no f-string holds the field.
 */
export const pythonFString = (source: string, field: string, path: string, lead = ""): ((value: string) => string) => {
  const escaped = field.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const match = new RegExp(`${lead}f"((?:[^"\\\n]|\\.)*?)\\{${escaped}\\}((?:[^"\\\n]|\\.)*)"`).exec(source)
  if (!match) throw new StbFilesError({ path, problem: `no f-string with {${field}} found` })
  const before = unescapePython(match[1]!)
  const after = unescapePython(match[2]!)
  return (value) => `${before}${value}${after}`
}

/** The first double-quoted string value of `"key": "..."` after `from` in `source`. */
export const pythonStringAfter = (
  source: string,
  from: number,
  key: string,
  path: string
): { value: string; end: number } => {
  const re = new RegExp(`"${key}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`, "g")
  re.lastIndex = from
  const match = re.exec(source)
  if (!match) throw new StbFilesError({ path, problem: `no "${key}" string found` })
  return { value: unescapePython(match[1]!), end: re.lastIndex }
}

/**
 * The fields of a str.format template that it may not name: `{__proto__}`, `{constructor}` and the other members
 * every object inherits would be read from Object (and render "[object Object]") rather than filled. Returned so
 * that the reader of a checkout refuses the file at once, naming it and the field, instead of a run failing later.
 */
export const inheritedFields = (template: string): Array<string> =>
  [...template.matchAll(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g)]
    .map((m) => m[1])
    .filter((key): key is string => key !== undefined && key in Object.prototype)

/** Python's str.format with named fields: {name} is replaced, {{ and }} are literal braces. */
export const pythonFormat = (template: string, values: Readonly<Record<string, string>>): string =>
  template.replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, key: string | undefined) => {
    if (whole === "{{") return "{"
    if (whole === "}}") return "}"
    // own fields only: `{__proto__}` or `{constructor}` in a checkout's template is a field with no value, not Object's
    const value = Object.hasOwn(values, key!) ? values[key!] : undefined
    if (value === undefined) throw new Error(`template field {${key}} has no value`)
    return value
  })
