// Size caps, in one place: what a run keeps of, and sends back from, text that a model server or a tool
// chose the length of. A 20 MB reply once became a 503 MB task record and 3.9 GB of RSS for two tasks.

/**
 * The caps.
 * - `recordStringChars`: characters a task record keeps of any one string (a model reply, an
 *   observation, a thought, a prompt under --full-trace): the first part, then a note of the original
 *   length. 64 Ki characters keeps every ordinary reply whole.
 * - `recordBytes`: bytes of a whole task record (as written, indented JSON). Past it, long strings are cut
 *   harder, later ones more than earlier ones, each still noting its original length: a task of 150
 *   calls with 2 MB replies stays a 1 MiB file, not a 10 MB one. The runner's `maxRecordBytes` changes it.
 * - `sentBackChars`: characters of a model's own reply that go back to it in the conversation (ReAct and
 *   DFSDT keep the assistant message); observations are cut separately (ToolBench's 1,024 characters),
 *   and reflections quote at most 4,000 characters (guardrails).
 */
export const SIZE_CAPS = {
  recordStringChars: 64 * 1024,
  recordBytes: 1024 * 1024,
  /**
   * The smallest `recordBytes` a run may ask for: a record's own fields and events (ids, totals, one event per
   * step) take a few kilobytes before any string is cut, so a smaller cap could not be kept and is refused.
   */
  minRecordBytes: 64 * 1024,
  sentBackChars: 16 * 1024,
  /**
   * Bytes read of one HTTP reply from a model server: past it the reply is dropped and the call fails
   * (a ModelServerError that says so), so a run's memory stays bounded whatever a server sends.
   * 32 MiB is far above any real chat reply.
   */
  replyBytes: 32 * 1024 * 1024,
  /**
   * Characters of one model reply's text that the agents get (the rest is cut with a note of its length):
   * 4 Mi characters is 256 times what goes back to a model and far above any real answer, and keeps the
   * copies a reply goes through (parsing, events) small whatever a server sends.
   */
  replyChars: 4 * 1024 * 1024
} as const

const NOTE_END = " characters in all]"
const NOTE = /… \[cut: ([\d,]+) characters in all\]$/

/**
 * `text` cut to `max` characters, with a note of the original length when it was longer. A text cut
 * before (an event's string, cut as it was recorded) is cut again from its kept part and keeps its note
 * of the original length.
 */
export const capText = (text: string, max: number): string => {
  const note = text.endsWith(NOTE_END) ? NOTE.exec(text.slice(-64)) : null
  const body = note ? text.slice(0, text.length - note[0].length) : text
  if (body.length <= max) return text
  return `${body.slice(0, max)}… [cut: ${note ? note[1] : body.length.toLocaleString("en-US")} characters in all]`
}

/**
 * A copy of a JSON-like value with each string replaced by `cut(string)`, in the order JSON.stringify writes them.
 * Every event of a run is copied so as it is recorded: a loop over the keys, not entries and fromEntries.
 */
const mapStrings = <A>(value: A, cut: (text: string) => string): A => {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return cut(v)
    if (typeof v !== "object" || v === null) return v
    if (Array.isArray(v)) return v.map(walk)
    const proto: unknown = Object.getPrototypeOf(v)
    if (proto !== Object.prototype && proto !== null) return v
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(v)) {
      const x = walk((v as Record<string, unknown>)[k])
      // a key named __proto__ is data here, as fromEntries would keep it
      if (k === "__proto__")
        Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true })
      else out[k] = x
    }
    return out
  }
  return walk(value) as A
}

/**
 * Whether a JSON-like value holds a string longer than `max` (that {@link capStrings} would cut): one walk
 * that allocates nothing, so that a value with nothing to cut need not be copied.
 */
export const hasLongString = (value: unknown, max: number = SIZE_CAPS.recordStringChars): boolean => {
  if (typeof value === "string") return value.length > max
  if (typeof value !== "object" || value === null) return false
  if (Array.isArray(value)) {
    for (const v of value) if (hasLongString(v, max)) return true
    return false
  }
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return false
  for (const k in value) if (hasLongString((value as Record<string, unknown>)[k], max)) return true
  return false
}

/** A copy of a JSON-like value with every string longer than `max` cut by {@link capText}. */
export const capStrings = <A>(value: A, max: number = SIZE_CAPS.recordStringChars): A =>
  mapStrings(value, (text) => capText(text, max))

/**
 * The text a record file holds of each value capRecordSize returned (indented JSON, no final newline), as it measured
 * it: the runner writes that text, where it would render the record again (a record is rendered once, not three times).
 */
const renderedRecords = new WeakMap<object, { readonly text: string; readonly maxBytes: number }>()

/** A value's indented JSON, the text capRecordSize measured when it returned this value (rendered now otherwise). */
export const recordText = (value: unknown): string =>
  (typeof value === "object" && value !== null ? renderedRecords.get(value)?.text : undefined) ??
  JSON.stringify(value, null, 2) ??
  ""

/** Whether `value` is what capRecordSize returned for a cap of `maxBytes` or less: it fits `maxBytes` as it is. */
export const cappedAt = (value: unknown, maxBytes: number): boolean => {
  const rendered = typeof value === "object" && value !== null ? renderedRecords.get(value) : undefined
  return rendered !== undefined && rendered.maxBytes <= maxBytes
}

/** Bytes of a value as a record file holds it (indented JSON). */
export const recordBytes = (value: unknown): number => Buffer.byteLength(recordText(value), "utf8")

/** Bytes of `value` as a record file holds it, and `value` remembered with its text when it fits `maxBytes`. */
const fits = (value: unknown, maxBytes: number): boolean => {
  const text = JSON.stringify(value, null, 2) ?? ""
  if (Buffer.byteLength(text, "utf8") > maxBytes) return false
  if (typeof value === "object" && value !== null) renderedRecords.set(value, { text, maxBytes })
  return true
}

const jsonBytes = (text: string): number => Buffer.byteLength(JSON.stringify(text), "utf8")

/**
 * `value` with every string capped (`recordStringChars`) and, when it is still larger than `maxBytes`
 * as a file, its long strings cut harder: each string longer than a floor may keep at most half of the
 * bytes left, in the order the file holds them, so a record's first fields (its final answer) and first
 * events keep the most and later ones less. Every cut string notes its original length. Floors go down
 * (1,024 characters to none) until the record fits.
 */
export const capRecordSize = <A>(value: A, maxBytes: number = SIZE_CAPS.recordBytes): A => {
  // the copy only when a string is to be cut: a record with none (the common case) is returned as it is
  const capped = hasLongString(value) ? capStrings(value) : value
  if (fits(capped, maxBytes)) return capped
  let smallest = capped
  for (const floor of [1024, 256, 64, 16, 0]) {
    const skeleton = recordBytes(capStrings(value, floor))
    if (skeleton > maxBytes && floor > 0) continue
    let left = Math.max(0, maxBytes - skeleton)
    const out = mapStrings(value, (text) => {
      if (text.length <= floor) return text
      const base = jsonBytes(capText(text, floor))
      let share = Math.min(text.length, SIZE_CAPS.recordStringChars) - floor
      let cut = capText(text, floor + share)
      let cost = jsonBytes(cut) - base
      for (let tries = 0; cost > left / 2 && tries < 4; tries++) {
        share = tries === 3 ? 0 : Math.floor((share * (left / 2)) / cost)
        cut = capText(text, floor + share)
        cost = jsonBytes(cut) - base
      }
      left -= Math.max(0, cost)
      return cut
    })
    if (fits(out, maxBytes)) return out
    smallest = out
  }
  return smallest // strings cut to nothing and still too large: the record's skeleton alone is over the cap
}
