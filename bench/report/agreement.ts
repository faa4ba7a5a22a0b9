// Agreement between raters of the same answers (judges, or one judge's rounds): Cohen's kappa for two,
// Krippendorff's alpha (nominal) for any number with missing labels.

/** A rater's label of one item; undefined when that rater did not label it. */
export type Rating = string | undefined

export interface Kappa {
  /** Cohen's kappa, undefined when chance agreement is 1 (both raters used one and the same label throughout). */
  readonly kappa: number | undefined
  /** Observed agreement (share of items with equal labels). */
  readonly observed: number
  /** Items both raters labelled. */
  readonly n: number
}

/** Cohen's kappa over the items both raters labelled: (p_o - p_e) / (1 - p_e), p_e from each rater's own label shares. */
export const cohenKappa = (pairs: ReadonlyArray<readonly [Rating, Rating]>): Kappa => {
  const both = pairs.filter((p): p is [string, string] => p[0] !== undefined && p[1] !== undefined)
  const n = both.length
  if (n === 0) return { kappa: undefined, observed: Number.NaN, n: 0 }
  const first = new Map<string, number>()
  const second = new Map<string, number>()
  let agree = 0
  for (const [a, b] of both) {
    if (a === b) agree++
    first.set(a, (first.get(a) ?? 0) + 1)
    second.set(b, (second.get(b) ?? 0) + 1)
  }
  const observed = agree / n
  let chance = 0
  for (const [label, count] of first) chance += (count / n) * ((second.get(label) ?? 0) / n)
  return { kappa: chance === 1 ? undefined : (observed - chance) / (1 - chance), observed, n }
}

export interface Alpha {
  /** Krippendorff's alpha (nominal), undefined when expected disagreement is 0 (one label throughout). */
  readonly alpha: number | undefined
  /** Items with at least two labels (the pairable ones). */
  readonly units: number
  /** Labels in those items (Krippendorff's n). */
  readonly values: number
}

/**
 * Krippendorff's alpha for nominal data: `units[i]` holds the labels raters gave item i (undefined = not labelled);
 * items with fewer than two labels are left out. alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k,
 * with o the coincidence matrix (each unit's ordered pairs weighted 1 / (m_u - 1)) and n_c its margins.
 */
export const krippendorffAlpha = (units: ReadonlyArray<ReadonlyArray<Rating>>): Alpha => {
  const pairable = units.map((u) => u.filter((v): v is string => v !== undefined)).filter((u) => u.length >= 2)
  const margins = new Map<string, number>()
  let disagreeing = 0 // sum over c != k of o_ck
  for (const unit of pairable) {
    const m = unit.length
    const counts = new Map<string, number>()
    for (const v of unit) counts.set(v, (counts.get(v) ?? 0) + 1)
    // ordered pairs (i, j), i != j, with different labels: m^2 - sum of counts^2
    let same = 0
    for (const c of counts.values()) same += c * c
    disagreeing += (m * m - same) / (m - 1)
    for (const [v, c] of counts) margins.set(v, (margins.get(v) ?? 0) + c)
  }
  const n = [...margins.values()].reduce((a, b) => a + b, 0)
  let expected = n * n
  for (const c of margins.values()) expected -= c * c // sum over c != k of n_c n_k
  return {
    alpha: expected === 0 ? undefined : 1 - ((n - 1) * disagreeing) / expected,
    units: pairable.length,
    values: n
  }
}
