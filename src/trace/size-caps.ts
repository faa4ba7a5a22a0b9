// Size caps, in one place: what a run keeps of, and sends back from, text that a model server or a tool
// chose the length of. A 20 MB reply once became a 503 MB task record and 3.9 GB of RSS for two tasks.

/**
 * The caps.
 * - `recordStringChars`: characters a task record keeps of any one string (a model reply, an
 *   observation, a thought, a prompt under --full-trace): the first part, then a note of the original
 *   length. 64 Ki characters keeps every ordinary reply whole.
 * - `sentBackChars`: characters of a model's own reply that go back to it in the conversation (ReAct and
 *   DFSDT keep the assistant message); observations are cut separately (ToolBench's 1,024 characters),
 *   and reflections quote at most 4,000 characters (guardrails).
 */
export const SIZE_CAPS = {
  recordStringChars: 64 * 1024,
  sentBackChars: 16 * 1024,
  /**
   * Bytes read of one HTTP reply from a model server: past it the reply is dropped and the call fails
   * (a ModelServerError that says so), so a run's memory stays bounded whatever a server sends.
   * 32 MiB is far above any real chat reply.
   */
  replyBytes: 32 * 1024 * 1024
} as const

/** `text` cut to `max` characters, with a note of the original length when it was longer. */
export const capText = (text: string, max: number): string =>
  text.length > max ? `${text.slice(0, max)}… [cut: ${text.length.toLocaleString("en-US")} characters in all]` : text

/** A copy of a JSON-like value with every string longer than `max` cut by {@link capText}. */
export const capStrings = <A>(value: A, max: number = SIZE_CAPS.recordStringChars): A => {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return capText(v, max)
    if (Array.isArray(v)) return v.map(walk)
    if (v !== null && typeof v === "object" && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null))
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
    return v
  }
  return walk(value) as A
}
