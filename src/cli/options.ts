// The options of every command, read one way: a node:util parseArgs table per command, defaults from the environment and smurfs.config.json, one-line errors with a hint.
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import type { ParseArgsOptionsConfig, parseArgs } from "node:util"
import { dataDirOf } from "../../bench/sample-data.ts"
import { parseThink, type Think } from "../llm/spec.ts"
import { type ApprovalPolicy, parseApproval } from "../tools/approval.ts"
import { readFileBounded, SOURCE_FILE_CAP_BYTES } from "../trace/guarded-fs.ts"
import { closest } from "./did-you-mean.ts"
import { ExitCode } from "./exit-codes.ts"
import { type CommandSpec, readFlags, UsageError, usageHint } from "./flags.ts"
import { normalizeModelSpec } from "./model-option.ts"
import { reportFailure } from "./run-program.ts"

export { type CommandSpec, UsageError, usageHint }

/** Bad input found while reading the options: a file where a directory belongs, a settings file that cannot be used. Exit code 3. */
export class BadInput extends Error {
  override readonly name = "BadInput"
  readonly kind = "bad-input" as const
}

/** A settings file (smurfs.config.json / .ts) that cannot be used. Exit code 3. */
export class ConfigError extends BadInput {}

/** Environment variables that give an option its default (below a flag, above smurfs.config.json). */
export const OPTION_ENV: Readonly<Record<string, string>> = {
  model: "SMURFS_MODEL",
  data: "SMURFS_DATA",
  stb: "SMURFS_STB",
  "stb-tools": "SMURFS_STB_TOOLS",
  simulator: "SMURFS_SIMULATOR",
  "smurfs-src": "SMURFS_SRC"
}

/** Repeatable options whose values may hold commas themselves (an MCP server's command line), so they are never split. */
const VERBATIM_LISTS = new Set(["tools", "mcp-env"])

/** Options whose value is a model spec: a bare Ollama model name is read as `ollama:<name>`. */
const MODEL_OPTIONS = new Set(["model", "judge"])

/** The files a project may keep its defaults in, in the working directory; the first found is used. */
export const CONFIG_FILES = ["smurfs.config.json", "smurfs.config.ts", "smurfs.config.js", "smurfs.config.mjs"] as const

type Setting = string | number | boolean | ReadonlyArray<string | number>

/** The settings file's content: option names (as typed after `--`) at the top level apply to every command that has them; a section named after a command applies to it alone. */
export type ConfigFile = Readonly<Record<string, Setting | Readonly<Record<string, Setting>>>>

export interface ParseContext {
  readonly env?: NodeJS.ProcessEnv | undefined
  readonly cwd?: string | undefined
  /** Where notices go (a bare model name read as an Ollama model); stderr by default. */
  readonly notice?: ((text: string) => void) | undefined
}

type Parsed<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>
>

export interface ParsedCommand<O extends ParseArgsOptionsConfig> {
  readonly values: Parsed<O>["values"] & { readonly help?: boolean | undefined }
  readonly positionals: Array<string>
  /** The options given on the command line (not filled in from the environment, a config file or a default). */
  readonly given: ReadonlySet<string>
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x)

/** Read smurfs.config.json (or .ts/.js) from `cwd`; undefined when there is none. */
export const loadConfigFile = (cwd: string): { path: string; config: ConfigFile } | undefined => {
  const file = CONFIG_FILES.map((f) => join(cwd, f)).find((p) => existsSync(p))
  if (file === undefined) return undefined
  let content: unknown
  try {
    if (file.endsWith(".json")) content = JSON.parse(readFileBounded(file, SOURCE_FILE_CAP_BYTES))
    else {
      // require() of an ES module is synchronous on Node 22.12+, and 22.18 strips types, so a .ts config loads here too.
      const module = createRequire(join(cwd, "noop.js"))(file) as { default?: unknown }
      content = module.default ?? module
    }
  } catch (e) {
    throw new ConfigError(
      `${file}: cannot read it (${(e as Error).message.split("\n")[0]}). Fix the file or remove it.`
    )
  }
  if (!isRecord(content))
    throw new ConfigError(`${file}: must hold an object of settings, e.g. { "model": "ollama:qwen2.5:7b" }.`)
  return { path: file, config: content as ConfigFile }
}

const settingText = (
  file: string,
  key: string,
  value: unknown,
  multiple: boolean
): string | boolean | Array<string> => {
  if (typeof value === "boolean") return value
  if (typeof value === "string" || typeof value === "number") return multiple ? [String(value)] : String(value)
  if (Array.isArray(value) && value.every((v) => typeof v === "string" || typeof v === "number")) {
    if (multiple) return value.map(String)
    throw new ConfigError(`${file}: "${key}" takes one value, not a list.`)
  }
  throw new ConfigError(`${file}: "${key}" must be a string, number, boolean or list (got ${JSON.stringify(value)}).`)
}

/** Comma lists and repeated flags alike: `--method a,b --method c` is a, b, c. */
export const splitList = (values: ReadonlyArray<string>): Array<string> =>
  values
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v.length > 0)

/**
 * Parse a command's arguments: unknown flags get a "did you mean", options declared `multiple` take
 * comma lists, model specs may be bare Ollama names, and an option not given on the command line
 * takes its value from its environment variable, then smurfs.config.json, then the table's default.
 */
export const parseCommand = <const O extends ParseArgsOptionsConfig>(
  spec: CommandSpec<O>,
  argv: ReadonlyArray<string>,
  context: ParseContext = {}
): ParsedCommand<O> => {
  const strict = readFlags(spec, argv)
  const values: Record<string, unknown> = { ...strict.values }
  const given = new Set(Object.keys(values))
  if (values["help"] === true)
    return { values: values as ParsedCommand<O>["values"], positionals: strict.positionals, given }

  const env = context.env ?? process.env
  const loaded = loadConfigFile(context.cwd ?? process.cwd())
  const section = loaded?.config[spec.name]
  if (section !== undefined && !isRecord(section))
    throw new ConfigError(`${loaded!.path}: "${spec.name}" must be an object of ${spec.name}'s settings.`)
  if (section !== undefined)
    for (const key of Object.keys(section))
      if (!(key in spec.options)) {
        const suggestion = closest(key, Object.keys(spec.options))
        throw new ConfigError(
          `${loaded!.path}: "${spec.name}" has no setting "${key}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}; the settings are its --options, without the dashes.`
        )
      }

  for (const [name, option] of Object.entries(spec.options)) {
    const multiple = option.multiple === true
    if (!given.has(name)) {
      const fromEnv = OPTION_ENV[name] !== undefined ? env[OPTION_ENV[name]!]?.trim() : undefined
      const fromFile =
        (section as Record<string, unknown> | undefined)?.[name] ??
        (isRecord(loaded?.config[name]) ? undefined : loaded?.config[name])
      if (fromEnv)
        values[name] =
          option.type === "boolean" ? fromEnv !== "0" && fromEnv !== "false" : multiple ? [fromEnv] : fromEnv
      else if (fromFile !== undefined) {
        const value = settingText(loaded!.path, name, fromFile, multiple)
        if ((option.type === "boolean") !== (typeof value === "boolean"))
          throw new ConfigError(
            `${loaded!.path}: "${name}" must be ${option.type === "boolean" ? "true or false" : "a value, not true/false"}.`
          )
        values[name] = value
      } else if (option.default !== undefined) values[name] = option.default
    }
    if (multiple && Array.isArray(values[name]) && !VERBATIM_LISTS.has(name))
      values[name] = splitList(values[name] as string[])
    if (MODEL_OPTIONS.has(name) && typeof values[name] === "string") {
      const normalized = normalizeModelSpec(values[name] as string)
      if (normalized.notice)
        (context.notice ?? ((t: string) => process.stderr.write(`${t}\n`)))(
          `smurfs ${spec.name}: --${name} ${normalized.notice}`
        )
      values[name] = normalized.spec
    }
    // `--data sample` (or SMURFS_DATA=sample, "data": "sample") is the sample shipped with the package
    if (name === "data" && typeof values[name] === "string") values[name] = dataDirOf(values[name] as string)
  }
  return { values: values as ParsedCommand<O>["values"], positionals: strict.positionals, given }
}

/** Whether the settings file has keys that are not the command's own options or section (checkSettingsKeys reads them). */
export const hasOtherSettingsKeys = (
  spec: CommandSpec<ParseArgsOptionsConfig>,
  cwd: string = process.cwd()
): boolean => {
  const loaded = loadConfigFile(cwd)
  return loaded !== undefined && Object.keys(loaded.config).some((key) => !(key in spec.options) && key !== spec.name)
}

/**
 * Every top-level key of the settings file must be some command's option or a command's section: a misspelled key
 * (`"modle"`) is bad input with a did-you-mean, never silently ignored. A key of the command's own options needs no
 * more; any other loads every command's options table to tell another command's option from a mistake.
 */
export const checkSettingsKeys = async (
  spec: CommandSpec<ParseArgsOptionsConfig>,
  cwd: string = process.cwd()
): Promise<void> => {
  const loaded = loadConfigFile(cwd)
  if (loaded === undefined) return
  const others = Object.keys(loaded.config).filter((key) => !(key in spec.options) && key !== spec.name)
  if (others.length === 0) return
  const { commandSpecs } = await import("./command-specs.ts")
  const specs = await commandSpecs()
  const sections = new Set(specs.map((s) => s.name))
  const options = new Set(specs.flatMap((s) => Object.keys(s.options)))
  for (const key of others) {
    const value = loaded.config[key]
    if (isRecord(value) ? sections.has(key) : options.has(key)) continue
    const suggestion = closest(key, isRecord(value) ? [...sections] : [...options])
    throw new ConfigError(
      `${loaded.path}: ${isRecord(value) ? `no command is named "${key}"` : `no command has a setting "${key}"`}${suggestion ? ` (did you mean "${suggestion}"?)` : ""}; the settings are the commands' --options without the dashes, and sections named after commands.`
    )
  }
}

/**
 * Run a command body with its parsed options: `--help` prints the help; a UsageError (from parsing
 * or thrown by the body) prints one line and a hint and exits 2; a ConfigError exits 3; any other
 * error is reported by its kind (`reportFailure`), a bug as a bug (exit 1).
 */
export const runCommand = async <const O extends ParseArgsOptionsConfig>(
  spec: CommandSpec<O>,
  argv: ReadonlyArray<string>,
  body: (parsed: ParsedCommand<O>) => Promise<number> | number
): Promise<number> => {
  try {
    const parsed = parseCommand(spec, argv)
    if (parsed.values.help === true) {
      console.log(spec.help)
      return ExitCode.Ok
    }
    // only a key no option of this command explains costs an await: the body installs its signal handlers before its
    // first await, and a Ctrl-C held while the command loaded is handed over then (src/cli/early-signals.ts)
    if (hasOtherSettingsKeys(spec)) await checkSettingsKeys(spec)
    return await body(parsed)
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`smurfs ${spec.name}: ${e.message}\n${usageHint(spec.name)}`)
      return ExitCode.Usage
    }
    return reportFailure(e, { command: spec.name })
  }
}

/** A whole number >= `min` from an option's text, or undefined when the option is absent. */
export const intOption = (name: string, text: string | undefined, min = 1): number | undefined => {
  if (text === undefined) return undefined
  const n = Number(text)
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`--${name} needs a ${min === 0 ? "non-negative" : "positive"} whole number (got "${text}")`)
  return n
}

/** `--lanes`: auto, off or a number of lanes; undefined when the option is absent. */
export const lanesOption = (name: string, text: string | undefined): "auto" | "off" | number | undefined => {
  if (text === undefined) return undefined
  const word = text.trim()
  if (word === "auto" || word === "off") return word
  const n = Number(word)
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`--${name} takes auto, off or a number of lanes, not "${text}"`)
  return n
}

/** A number within [min, max] (a sampling temperature), or a UsageError. */
export const numberOption = (name: string, text: string | undefined, min: number, max: number): number | undefined => {
  if (text === undefined) return undefined
  const n = Number(text)
  if (text.trim() === "" || !Number.isFinite(n) || n < min || n > max)
    throw new UsageError(`--${name} needs a number from ${min} to ${max} (got "${text}")`)
  return n
}

/** One of a fixed set of words, or a UsageError naming them. */
export const choiceOption = <const C extends string>(
  name: string,
  text: string | undefined,
  choices: ReadonlyArray<C>,
  fallback: C
): C => {
  if (text === undefined) return fallback
  if ((choices as ReadonlyArray<string>).includes(text)) return text as C
  const suggestion = closest(text, choices)
  throw new UsageError(
    `--${name} must be ${choices.join(", ")} (got "${text}")${suggestion ? `; did you mean ${suggestion}?` : ""}`
  )
}

/** Every entry of a list must be one of `choices`. */
export const choiceList = <const C extends string>(
  name: string,
  values: ReadonlyArray<string>,
  choices: ReadonlyArray<C>
): Array<C> => {
  const unknown = values.filter((v) => !(choices as ReadonlyArray<string>).includes(v))
  if (unknown.length > 0) {
    const suggestion = closest(unknown[0]!, choices)
    throw new UsageError(
      `--${name}: unknown ${unknown.map((u) => `"${u}"`).join(", ")}; use ${choices.join(", ")}${suggestion ? ` (did you mean ${suggestion}?)` : ""}`
    )
  }
  // a choice named twice is one: `--method react,react` would run (or queue) the same task twice under one record
  return [...new Set(values)] as Array<C>
}

/** `--think on|off|low|medium|high` as ModelOptions.think; undefined when not given. */
export const thinkOption = (text: string | undefined): Think | undefined =>
  text === undefined ? undefined : parseThink(choiceOption("think", text, ["on", "off", "low", "medium", "high"], "on"))

/**
 * `--approve`: the policy for calls of MCP tools that may change things. Not given: ask when a person is
 * at the terminal (stdin and stderr are one), else make every call, as before approval existed.
 */
export const approvalOption = (
  value: string | undefined,
  terminal: boolean = process.stdin.isTTY === true && process.stderr.isTTY === true
): ApprovalPolicy => {
  try {
    return parseApproval(value ?? (terminal ? "ask" : "all"))
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
}
