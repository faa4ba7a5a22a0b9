// Guardrails (MARCO) on tool choice and arguments: checks whose errors are reflected back to the model.
import * as Effect from "effect/Effect"
import { z } from "zod"
import { parametersJsonSchema } from "../tools/library.ts"
import { parseToolArgs, type Tool } from "../tools/tool.ts"
import { emit } from "../trace/events.ts"
import type { GuardrailOptions } from "./smurfs-options.ts"

/** A problem to reflect: the guardrail's name (for counters) and the exact error the model reads. */
export interface Problem {
  readonly guardrail: string
  readonly error: string
}

/** Levenshtein distance, for suggesting the tool a model probably meant. */
export const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = current
  }
  return previous[b.length]!
}

/** The valid name closest to `name`, when it is close enough to be a plausible typo. */
export const closestName = (name: string, names: ReadonlyArray<string>): string | undefined => {
  let best: { name: string; distance: number } | undefined
  for (const candidate of names) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase())
    if (!best || distance < best.distance) best = { name: candidate, distance }
  }
  return best && best.distance <= Math.max(2, Math.floor(best.name.length / 3)) ? best.name : undefined
}

/** Unknown or excluded tool name: the reflection names the valid tools (and the likely intended one). */
export const checkToolName = (
  name: string,
  allowed: ReadonlyArray<string>,
  all: ReadonlyArray<string>,
  options: GuardrailOptions
): Problem | undefined => {
  if (!options.unknownTool || allowed.includes(name)) return undefined
  const valid = `Valid tools: ${allowed.join(", ")}.`
  if (all.includes(name))
    return {
      guardrail: "excluded_tool",
      error: `the tool "${name}" already failed at this step; choose another one. ${valid}`
    }
  const guess = options.suggestTool ? closestName(name, allowed) : undefined
  return {
    guardrail: "unknown_tool",
    error: `there is no tool named "${name}". ${valid}${guess ? ` Did you mean "${guess}"?` : ""}`
  }
}

/** The tool choice schema: any string parses (so the guardrail can name the valid tools), the JSON Schema lists the allowed ones. */
export const choiceSchema = (allowed: ReadonlyArray<string>) =>
  z.object({ tool: z.string().meta({ enum: [...allowed] }) })

/**
 * The arguments schema: any object parses (so guardrails can classify problems); the model sees the
 * tool's own JSON Schema, closed to undeclared names. An undeclared argument is dropped before the
 * call anyway (`declaredArgs`), and an open object costs the decoding grammar a rule spelling out
 * "any name but these" letter by letter: for ToolBench's 60-parameter Airbnb search that rule alone
 * was half of a 23.9 KB grammar, near Ollama's 32 KB cut-off (`npm run bench:grammar`).
 */
export const argsSchema = (tool: Tool) =>
  z.record(z.string(), z.unknown()).meta({ ...parametersJsonSchema(tool), additionalProperties: false })

/** Split raw arguments into the declared ones and the names of undeclared ones. */
export const declaredArgs = (tool: Tool, raw: Record<string, unknown>) => {
  const declared = new Set(Object.keys(tool.parameters.shape))
  const args: Record<string, unknown> = {}
  const dropped: Array<string> = []
  for (const [key, value] of Object.entries(raw)) declared.has(key) ? (args[key] = value) : dropped.push(key)
  return { args, dropped }
}

const leaves = (value: unknown): Array<string | number> =>
  typeof value === "string" || typeof value === "number"
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(leaves)
      : value !== null && typeof value === "object"
        ? Object.values(value).flatMap(leaves)
        : []

/** Argument values that appear nowhere in `context` (case-insensitive); very short strings are not judged. */
export const ungrounded = (args: Record<string, unknown>, context: string): Array<string | number> => {
  const haystack = context.toLowerCase()
  return leaves(args).filter((v) => {
    const text = String(v).toLowerCase().trim()
    return text.length > 1 && !haystack.includes(text)
  })
}

/**
 * Check arguments against the tool's schema: missing required parameters and static rules each
 * have their own guardrail; undeclared parameters are not a problem here (they are dropped).
 */
export const checkArgs = (
  tool: Tool,
  raw: Record<string, unknown>,
  options: GuardrailOptions,
  groundingContext: string
): Problem | undefined => {
  const { args } = options.extraParams ? declaredArgs(tool, raw) : { args: raw }
  const result = parseToolArgs(tool, args)
  if (!result.success) {
    const missing = result.error.issues.filter((i) => i.path.length === 1 && !(String(i.path[0]) in args))
    if (missing.length > 0 && options.missingParams)
      return {
        guardrail: "missing_params",
        error: `missing required parameter(s) ${missing.map((i) => `"${String(i.path[0])}"`).join(", ")} of the tool "${tool.name}". Give a value for each.`
      }
    const rules = new z.ZodError(result.error.issues.filter((i) => !missing.includes(i)))
    if (rules.issues.length > 0 && options.paramRules)
      return {
        guardrail: "param_rules",
        error: `arguments break the rules of the tool "${tool.name}":\n${z.prettifyError(rules)}`
      }
  }
  if (options.grounding) {
    const invented = ungrounded(args, groundingContext)
    if (invented.length > 0)
      return {
        guardrail: "grounding",
        error: `the value(s) ${invented.map((v) => JSON.stringify(v)).join(", ")} appear nowhere in the subtask or the steps taken; use values from them.`
      }
  }
  return undefined
}

/**
 * The arguments a checked call is made with: with the extra-parameters guardrail, the tool's declared ones (an
 * undeclared one dropped, traced as a recovered `extra_params` guardrail of `role`), coerced by the tool's schema
 * (its coercions and defaults; on a rule violation the guardrails let through, the values as they came).
 */
export const usableArgs = (guardrails: GuardrailOptions, role: string, tool: Tool, raw: Record<string, unknown>) =>
  Effect.gen(function* () {
    if (!guardrails.extraParams) return raw
    const { args, dropped } = declaredArgs(tool, raw)
    if (dropped.length > 0)
      yield* emit("guardrail", {
        guardrail: "extra_params",
        role,
        error: `dropped undeclared parameter(s) ${dropped.join(", ")} of the tool "${tool.name}"`,
        attempt: 1,
        recovered: true
      })
    const parsed = parseToolArgs(tool, args)
    return parsed.success ? (parsed.data as Record<string, unknown>) : args
  })
