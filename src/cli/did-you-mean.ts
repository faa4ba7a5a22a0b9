// "Did you mean ...?" for a mistyped flag, setting or choice: the closest known name by edit distance.

/** Edit distance counting a swap of neighbours as one edit (optimal string alignment); names are short, so the plain table is enough. */
const distance = (a: string, b: string): number => {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0))
  )
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1)
      d[i]![j] = best
    }
  return d[a.length]![b.length]!
}

/** The candidate closest to `input` when it is close enough to be a typo (or `input` is a prefix of exactly one); else undefined. */
export const closest = (input: string, candidates: ReadonlyArray<string>): string | undefined => {
  const wanted = input.toLowerCase()
  const prefixed = candidates.filter((c) => c.toLowerCase().startsWith(wanted) && wanted.replace(/^-+/, "").length >= 2)
  if (prefixed.length === 1) return prefixed[0]
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of candidates) {
    const d = distance(wanted, candidate.toLowerCase())
    if (d < bestDistance) (best = candidate), (bestDistance = d)
  }
  const allowed = Math.max(1, Math.min(3, Math.floor(wanted.replace(/^-+/, "").length / 3)))
  return bestDistance <= allowed ? best : undefined
}
