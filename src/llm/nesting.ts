// A bound on how deeply a value read from a model or a tool may nest: parsing a million levels works, but
// every later walk of the value (validation, JSON.stringify, redaction, a record) overflows the stack.

/** Levels of arrays and objects a value may have; real tool arguments and replies use a handful. */
export const MAX_NESTING = 100

/** What a value deeper than the bound is told as (a reason to show the model and to record). */
export const tooDeepMessage = (max: number = MAX_NESTING): string => `the value is nested deeper than ${max} levels`

/** A value nested deeper than the bound; a SyntaxError, so that callers treat it as the unreadable reply it is. */
export class NestingTooDeep extends SyntaxError {
  constructor(max: number = MAX_NESTING) {
    super(tooDeepMessage(max))
    this.name = "NestingTooDeep"
  }
}

/** True when JSON(-like) text opens more than `max` brackets at once (brackets inside strings do not count); one pass, no parse. */
export const textNestsDeeper = (text: string, max: number = MAX_NESTING): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) return true
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth = Math.max(0, depth - 1)
  }
  return false
}

/**
 * True when a value has more than `max` levels of arrays and objects; iterative, stops at the first too
 * deep. Each object is visited once, so a cycle (which serializers write as a placeholder) is no depth.
 */
export const valueNestsDeeper = (value: unknown, max: number = MAX_NESTING): boolean => {
  const stack: Array<[unknown, number]> = [[value, 0]]
  const seen = new WeakSet<object>()
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (typeof v !== "object" || v === null || seen.has(v)) continue
    seen.add(v)
    if (depth + 1 > max) return true
    for (const child of Array.isArray(v) ? v : Object.values(v))
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1])
  }
  return false
}

/** JSON.parse with the nesting bound checked on the text first; a deeper text throws NestingTooDeep. */
export const parseJsonBounded = (text: string, max: number = MAX_NESTING): unknown => {
  if (textNestsDeeper(text, max)) throw new NestingTooDeep(max)
  return JSON.parse(text)
}
