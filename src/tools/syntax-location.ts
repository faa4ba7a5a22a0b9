// Where a tool module's syntax error is (file:line:column), so the user can open the spot.
import { readFileSync } from "node:fs"
import * as nodeModule from "node:module"

/** The line and column (1-based) of a compile error's code frame: a `<file>:<line>` line, source lines (the last is that line), a caret line. */
const fromCodeFrame = (stack: string): { line: number; column: number } | undefined => {
  const lines = stack.split("\n")
  const caretAt = lines.findIndex((l) => /^\s*\^+\s*$/.test(l))
  if (caretAt < 2) return undefined
  for (let i = caretAt - 2; i >= 0; i--) {
    const head = /:(\d+)$/.exec(lines[i]!)
    if (head) return { line: Number(head[1]), column: lines[caretAt]!.indexOf("^") + 1 }
  }
  return undefined
}

type Strip = (code: string) => string

/**
 * Node's TypeScript loader puts a code frame into the error's stack; V8's JavaScript parse errors
 * keep theirs private. For those, the file is parsed once more by Node's own type stripper (which
 * parses without running anything) to find the spot.
 */
const reparse = (file: string): { line: number; column: number } | undefined => {
  const strip = (nodeModule as { stripTypeScriptTypes?: Strip }).stripTypeScriptTypes
  if (strip === undefined) return undefined
  const emit = process.emitWarning
  // the stripper is flagged experimental; its warning would only confuse a user fixing a typo
  process.emitWarning = () => {}
  try {
    strip(readFileSync(file, "utf8"))
    return undefined
  } catch (e) {
    return fromCodeFrame(String((e as Error).stack ?? ""))
  } finally {
    process.emitWarning = emit
  }
}

/** `file:line:column: message` for a syntax error met while importing `file`, or undefined when `error` is not one. */
export const describeSyntaxError = (file: string, error: unknown): string | undefined => {
  const e = error as { name?: string; code?: string; message?: string; stack?: string }
  if (e?.name !== "SyntaxError" && e?.code !== "ERR_INVALID_TYPESCRIPT_SYNTAX") return undefined
  const at = fromCodeFrame(String(e.stack ?? "")) ?? reparse(file)
  return `${file}${at ? `:${at.line}:${at.column}` : ""}: syntax error: ${e.message ?? String(error)}`
}
