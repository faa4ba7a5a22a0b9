// Tool names every model provider accepts: letters, digits, `_` and `-`, at most 64 characters, unique.

/** Longest function name the model APIs accept. */
export const MAX_TOOL_NAME = 64

/** One name made model-safe: other characters become `_`, cut to 64; an empty result becomes `tool`. */
export const modelSafeName = (name: string): string =>
  name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, MAX_TOOL_NAME) || "tool"

/** Append `_2`, `_3`... to a name until it is not taken, keeping within 64 characters. */
export const uniqueName = (name: string, taken: ReadonlySet<string>): string => {
  if (!taken.has(name)) return name
  for (let n = 2; ; n++) {
    const suffix = `_${n}`
    const candidate = `${name.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`
    if (!taken.has(candidate)) return candidate
  }
}

/** Model-safe names for a list, in order; two names that become equal are told apart by a suffix. */
export const modelSafeNames = (names: ReadonlyArray<string>): Array<string> => {
  const taken = new Set<string>()
  return names.map((name) => {
    const safe = uniqueName(modelSafeName(name), taken)
    taken.add(safe)
    return safe
  })
}
