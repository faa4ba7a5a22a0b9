// Python's json.dumps with its defaults (what ToolEval sends its judge): ", " and ": " separators,
// keys in insertion order, every character outside ASCII escaped as \uXXXX.

const escapeNonAscii = (text: string): string =>
  text.replace(/[\u007f-\uffff]/g, (c) => (c === "\u007f" ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`))

export const pythonJsonDumps = (value: unknown): string => {
  if (value === null || value === undefined) return "null"
  if (typeof value === "string") return escapeNonAscii(JSON.stringify(value))
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : JSON.stringify(value)
  if (typeof value === "boolean") return value ? "true" : "false"
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(", ")}]`
  if (typeof value === "object")
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${escapeNonAscii(JSON.stringify(k))}: ${pythonJsonDumps(v)}`)
      .join(", ")}}`
  return escapeNonAscii(JSON.stringify(String(value)))
}
