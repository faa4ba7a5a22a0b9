// Text from outside (tool responses, recorded examples) put inside a user message for a model: fenced and
// labelled, so it stays data the system prompt says is never an instruction.

/** A backtick fence longer than any backtick run in `text`, so the text can never close it. */
export const fenceFor = (text: string): string =>
  "`".repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)))

/** `text` in a fenced block whose info string is `label` (e.g. `tool-response`). */
export const fencedData = (label: string, text: string): string => {
  const fence = fenceFor(text)
  return `${fence}${label}\n${text}\n${fence}`
}
