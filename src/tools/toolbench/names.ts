// StableToolBench's name rules: standardized tool, API, parameter and category names, and function names.
import type { ApiDoc } from "./api-doc.ts"

/** Parameter and API names that StableToolBench prefixes with `is_` (Python keywords and the like). */
export const RESERVED_NAMES: ReadonlyArray<string> = ["from", "class", "return", "false", "true", "id", "and"]

/** Longest function name OpenAI accepted; StableToolBench keeps the LAST 64 characters. */
export const MAX_FUNCTION_NAME = 64

/**
 * StableToolBench's `standardize`: every character other than ASCII letters, digits, `_`, `^` and CJK
 * ideographs (U+4E00 to U+9FA5; the regex class keeps those) becomes `_`; runs of `_` collapse; lowercase;
 * `_` trimmed at both ends; `get_` prefixed when the result starts with a digit.
 */
export const standardizeName = (name: string): string => {
  let s = name.replace(/[^\u4e00-\u9fa5^a-zA-Z0-9_]/g, "_")
  s = s.replace(/_{2,}/g, "_").toLowerCase()
  s = s.replace(/^_+/, "").replace(/_+$/, "")
  if (/^\p{Nd}/u.test(s)) s = `get_${s}`
  return s
}

/** StableToolBench's `change_name`: reserved names get an `is_` prefix. */
export const changeName = (name: string): string => (RESERVED_NAMES.includes(name) ? `is_${name}` : name)

/** A parameter's (or API's) name as the model sees it. */
export const standardizeParameterName = (name: string): string => changeName(standardizeName(name))

/** The standardized tool name (`Kick.com API | Kick API` -> `kick_com_api_kick_api`). */
export const stdToolName = (doc: Pick<ApiDoc, "tool_name">): string => standardizeName(doc.tool_name)

/** The standardized API name, reserved names prefixed (`id` -> `is_id`). */
export const stdApiName = (doc: Pick<ApiDoc, "api_name">): string => changeName(standardizeName(doc.api_name))

/** The function name shown to a model: `<std api>_for_<std tool>`, cut to its last 64 characters. */
export const functionName = (doc: Pick<ApiDoc, "tool_name" | "api_name">): string =>
  `${stdApiName(doc)}_for_${stdToolName(doc)}`.slice(-MAX_FUNCTION_NAME)

/** StableToolBench's category folder name: spaces, commas and slashes become `_`, then `__` becomes `_`. */
export const standardizeCategory = (category: string): string => {
  let s = category.replace(/[ ,/]/g, "_")
  s = s.replace(/__/g, "_")
  return s
}
