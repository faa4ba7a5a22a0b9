// Seeded randomness for the evaluators: the same seed and key always give the same shuffle.

/** FNV-1a hash of a string, as a 32-bit seed. */
export const hashSeed = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** A mulberry32 generator: numbers in [0, 1), fully determined by the seed. */
export const makeRng = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A generator keyed by a seed and the parts that identify one decision (task, round). */
export const rngFor = (seed: number, ...key: ReadonlyArray<string | number>): (() => number) =>
  makeRng(hashSeed(`${seed}\u0000${key.join("\u0000")}`))

/** A Fisher-Yates shuffled copy. */
export const shuffle = <A>(items: ReadonlyArray<A>, rng: () => number): Array<A> => {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** One element picked uniformly. */
export const pick = <A>(items: ReadonlyArray<A>, rng: () => number): A => items[Math.floor(rng() * items.length)]!
