// Retrieval metrics with binary relevance: recall@k and nDCG@k.

/** Share of the relevant items found in the first k of the ranking (0 when nothing is relevant). */
export const recallAt = (ranking: ReadonlyArray<string>, relevant: ReadonlySet<string>, k: number): number => {
  if (relevant.size === 0) return 0
  return ranking.slice(0, k).filter((r) => relevant.has(r)).length / relevant.size
}

/** Normalized discounted cumulative gain at k: gain 1 per relevant item, discounted by log2(rank + 1). */
export const ndcgAt = (ranking: ReadonlyArray<string>, relevant: ReadonlySet<string>, k: number): number => {
  if (relevant.size === 0) return 0
  let dcg = 0
  ranking.slice(0, k).forEach((r, i) => {
    if (relevant.has(r)) dcg += 1 / Math.log2(i + 2)
  })
  let ideal = 0
  for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2)
  return dcg / ideal
}
