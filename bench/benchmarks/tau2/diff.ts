// Where two databases differ (a conversation's final state against the gold state), for transcripts and reports.
import { isPyDict, type PyValue, pyDictEntries, pyEqual, pyToPlain } from "./python-json.ts"

/** One difference: the path from the database root (collection, id, field, index...) and both values, as plain JSON. */
export interface Tau2DbChange {
  readonly path: ReadonlyArray<string>
  /** The gold database's value; undefined where the gold database has nothing at this path. */
  readonly gold: unknown
  /** The other database's value; undefined where it has nothing at this path. */
  readonly actual: unknown
}

const plain = (v: PyValue | undefined): unknown => (v === undefined ? undefined : pyToPlain(v))

/**
 * The differences between `gold` and `actual`, smallest first: a dict is compared key by key (gold's order, then the
 * keys only `actual` has), a list of the same length item by item; anything else is one change. Shared parts (a fresh
 * database's untouched orders) are skipped at once.
 */
export const diffTau2Db = (gold: unknown, actual: unknown): Array<Tau2DbChange> => {
  const changes: Array<Tau2DbChange> = []
  const walk = (g: PyValue | undefined, a: PyValue | undefined, path: Array<string>): void => {
    if (g === a || (g !== undefined && a !== undefined && pyEqual(g, a))) return
    if (isPyDict(g) && isPyDict(a)) {
      const x = pyDictEntries(g)
      const y = pyDictEntries(a)
      for (const [k, v] of x) walk(v as PyValue, y.get(k) as PyValue | undefined, [...path, k])
      for (const [k, v] of y) if (!x.has(k)) walk(undefined, v as PyValue, [...path, k])
      return
    }
    if (Array.isArray(g) && Array.isArray(a) && g.length === a.length) {
      for (const [k, v] of g.entries()) walk(v as PyValue, a[k] as PyValue, [...path, String(k)])
      return
    }
    changes.push({ path, gold: plain(g), actual: plain(a) })
  }
  walk(gold as PyValue, actual as PyValue, [])
  return changes
}
