// The database writes of a conversation: a τ² database is tables (top-level fields) of entries (keyed objects, or Maps
// as the port holds Python dicts); a write is an entry whose JSON changed. Snapshots hold each entry's JSON text, so a
// write is found by comparing texts.
import { type PyValue, pyToPlain } from "./python-json.ts"
import type { DbWrite } from "./transcript.ts"

/** Each entry's JSON text by `table\u0000key`; a table that is not an object of entries is one entry under key "". */
export type DbSnapshot = ReadonlyMap<string, string>

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** The keyed entries of an object or a Map, in their order; undefined for anything else. */
const entriesOf = (v: unknown): Array<[string, unknown]> | undefined =>
  v instanceof Map ? [...(v as Map<string, unknown>)] : isRecord(v) ? Object.entries(v) : undefined

const textOf = (v: unknown): string => JSON.stringify(pyToPlain(v as PyValue)) ?? "null"

/** The snapshot of a database value (its tables and their entries). */
export const snapshotDb = (db: unknown): DbSnapshot => {
  const out = new Map<string, string>()
  const tables = entriesOf(db)
  if (tables === undefined) {
    out.set("\u0000", textOf(db))
    return out
  }
  for (const [table, value] of tables) {
    const entries = entriesOf(value)
    if (entries === undefined) out.set(`${table}\u0000`, textOf(value))
    else for (const [key, entry] of entries) out.set(`${table}\u0000${key}`, textOf(entry))
  }
  return out
}

const parse = (text: string | undefined): unknown => (text === undefined ? null : (JSON.parse(text) as unknown))

/** The entries that differ between two snapshots, in table and key order: each with its value in `from` (before) and `to` (after). */
export const diffSnapshots = (from: DbSnapshot, to: DbSnapshot): Array<DbWrite> => {
  const keys = new Set([...from.keys(), ...to.keys()])
  const changed = [...keys].filter((k) => from.get(k) !== to.get(k)).sort()
  return changed.map((k) => {
    const [table = "", key = ""] = k.split("\u0000")
    return { table, key, before: parse(from.get(k)), after: parse(to.get(k)) }
  })
}

/**
 * The fields of an entry that differ, as dotted paths with both values (for the report's diff): objects are walked,
 * anything else (arrays, texts, numbers) is compared whole.
 */
export const fieldDiff = (
  before: unknown,
  after: unknown,
  path = ""
): Array<{ readonly path: string; readonly before: unknown; readonly after: unknown }> => {
  if (isRecord(before) && isRecord(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
    return keys.flatMap((k) => fieldDiff(before[k], after[k], path === "" ? k : `${path}.${k}`))
  }
  return JSON.stringify(before) === JSON.stringify(after)
    ? []
    : [{ path, before: before ?? null, after: after ?? null }]
}
