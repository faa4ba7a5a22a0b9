// Reciprocal rank fusion of several rankings, and the dense ranking by cosine similarity.
import type { Ranked } from "./lexical.ts"

/** RRF's constant: ranks deep in a list still count, but the top of each list dominates (Cormack et al. use 60). */
export const RRF_K = 60

/** Fuse rankings: each item scores the sum of 1 / (k + rank) over the lists it appears in, rank from 1. */
export const reciprocalRankFusion = (
  rankings: ReadonlyArray<ReadonlyArray<Ranked>>,
  k: number = RRF_K
): Array<Ranked> => {
  const scores = new Map<string, number>()
  for (const ranking of rankings)
    for (const [i, item] of ranking.entries()) scores.set(item.name, (scores.get(item.name) ?? 0) + 1 / (k + i + 1))
  return [...scores]
    .map(([name, score]) => ({ name, score }))
    .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name))
}

const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1

/** The documents most similar to the query vector (cosine), best first. */
export const denseRanking = (
  query: Float32Array,
  names: ReadonlyArray<string>,
  vectors: ReadonlyArray<Float32Array>,
  n: number
): Array<Ranked> => {
  const q = norm(query)
  const scored = vectors.map((v, i) => {
    let dot = 0
    const dims = Math.min(v.length, query.length)
    for (let j = 0; j < dims; j++) dot += v[j]! * query[j]!
    return { name: names[i]!, score: dot / (q * norm(v)) }
  })
  return scored.sort((a, b) => b.score - a.score).slice(0, n)
}
