// Prompt templates: Markdown files in prompts/ with {{placeholders}}, split into system and user parts.
import { readFileSync } from "node:fs"
import { packageRoot } from "../package-root.ts"

const PROMPTS_DIR = new URL("prompts/", packageRoot)
const cache = new Map<string, Template>()

export interface Template {
  readonly name: string
  /** The static part (instructions); byte-identical across calls so that servers can reuse its cached prefix. */
  readonly system: string
  /** The changing part, with {{placeholders}}. */
  readonly user: string
  /**
   * Example wording for the fields of the reply's JSON shape (`{{format}}`, rendered from the reply's
   * schema by `jsonShape`), by field name: the template's `---examples---` section, one `field: words` a line.
   */
  readonly examples: Readonly<Record<string, string>>
}

/**
 * Load `prompts/<name>.md`. A line `---user---` separates the system part from the user part; a
 * template without it is all user text. An optional last section after `---examples---` holds the
 * example wording of the reply's fields.
 */
export const loadTemplate = (name: string, dir: URL = PROMPTS_DIR): Template => {
  const key = `${dir.href}${name}`
  const hit = cache.get(key)
  if (hit) return hit
  const file = readFileSync(new URL(`${name}.md`, dir), "utf8")
  const [text, exampleLines] = file.includes("\n---examples---\n") ? file.split("\n---examples---\n", 2) : [file, ""]
  const [system, user] = text!.includes("\n---user---\n") ? text!.split("\n---user---\n", 2) : ["", text!]
  const examples = Object.fromEntries(
    exampleLines!
      .split("\n")
      .map((line) => /^([A-Za-z0-9_]+):\s*(.*)$/.exec(line.trim()))
      .filter((m) => m !== null)
      .map((m) => [m[1]!, m[2]!])
  )
  const template = { name, system: system!.trim(), user: user!.trim(), examples }
  cache.set(key, template)
  return template
}

/** A template text split at its placeholders: text, name, text, name, ..., text. */
const compiled = new Map<string, ReadonlyArray<string>>()
const MAX_COMPILED = 256
const partsOf = (text: string): ReadonlyArray<string> => {
  let parts = compiled.get(text)
  if (parts === undefined) {
    parts = text.split(/\{\{\s*([a-zA-Z0-9_]+)\s*\}\}/)
    if (compiled.size >= MAX_COMPILED) compiled.clear()
    compiled.set(text, parts)
  }
  return parts
}

/**
 * Fill {{placeholders}}; a placeholder without a value is an error, so a template and its caller cannot
 * drift apart. Each text is split at its placeholders once (agents render the same few on every call).
 */
export const render = (text: string, values: Readonly<Record<string, string | number>>): string => {
  const parts = partsOf(text)
  let out = parts[0]!
  for (let i = 1; i < parts.length; i += 2) {
    const key = parts[i]!
    const value = Object.hasOwn(values, key) ? values[key] : undefined
    if (value === undefined) throw new Error(`prompt placeholder {{${key}}} has no value`)
    out += String(value) + parts[i + 1]!
  }
  return out
}

/** The system and user messages of a template for the given values. */
export const renderTemplate = (name: string, values: Readonly<Record<string, string | number>>, dir?: URL) => {
  const template = loadTemplate(name, dir)
  return {
    system: render(template.system, values),
    user: render(template.user, values)
  }
}
