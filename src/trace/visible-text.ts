// Text from data (answers, tool output, tool descriptions, ids) as a terminal may show it: control characters visible, never obeyed.
//
// A model or a tool can return ESC sequences that retitle the window (ESC]0;...BEL), write the
// clipboard (ESC]52;...) or clear the screen (ESC[2J), and bidirectional overrides that make text read
// other than it is. Shown as `\x1b`, `\u202e`, they are harmless and still say what was there.

/** C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embeddings, overrides and isolates. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/
const CONTROLS = new RegExp(CONTROL.source, "g")

const escapeOf = (c: string): string => {
  const code = c.charCodeAt(0)
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`
}

/** The text with every control character written as its escape (`\x1b`); tabs and newlines stay. */
export const visibleText = (text: string): string => (CONTROL.test(text) ? text.replace(CONTROLS, escapeOf) : text)

/** A deep copy of a JSON-like value with every string made visible (keys too); other values are left as they are. */
export const visibleValue = <A>(value: A): A => {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return visibleText(v)
    if (depth > 64) return v // data nested this deep is not shown in a line anyway
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1))
    if (
      v !== null &&
      typeof v === "object" &&
      (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)
    )
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [visibleText(k), walk(x, depth + 1)]))
    return v
  }
  return walk(value, 0) as A
}
