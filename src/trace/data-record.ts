// JSON objects keyed by names from data (task ids, groups): read into null-prototype objects, so `__proto__`,
// `constructor` or `toString` are keys like any other, never the prototype's.
import { z } from "zod"

/** A null-prototype object: assigning `out["__proto__"]` stores a key, and `out["constructor"]` is undefined until set. */
export const keyedObject = <V>(): Record<string, V> => Object.create(null) as Record<string, V>

/** An issue's message; for a record's bad key, the key schema's own words (zod says only "Invalid key in record"). */
const issueMessage = (issue: z.core.$ZodIssue): string =>
  issue.code === "invalid_key" && issue.issues[0] !== undefined ? issue.issues[0].message : issue.message

/** The first problems of a failed parse, each with where it is (`runs["1e9"]`), on one line. */
export const parseProblem = (error: z.ZodError, max = 3): string =>
  error.issues
    .slice(0, max)
    .map(
      (issue) =>
        `${issueMessage(issue)}${issue.path.length > 0 ? ` (at ${issue.path.map((p) => JSON.stringify(String(p))).join(" > ")})` : ""}`
    )
    .join("; ")

/**
 * `z.record(key, value)` for objects keyed by data. zod's record drops a `__proto__` key (it assigns it on
 * a plain object, which sets the prototype); this keeps every own key of the parsed JSON, in a
 * null-prototype object, and names the key of each problem in its path.
 */
export const dataRecord = <K extends z.ZodType<string>, V extends z.ZodType>(key: K, value: V) =>
  z.unknown().transform((input, ctx): Record<z.output<K>, z.output<V>> => {
    const out = keyedObject<z.output<V>>()
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      ctx.addIssue({
        code: "custom",
        message: `expected an object, got ${Array.isArray(input) ? "an array" : input === null ? "null" : typeof input}`
      })
      return out
    }
    for (const [k, v] of Object.entries(input)) {
      const parsedKey = key.safeParse(k)
      if (!parsedKey.success) {
        for (const issue of parsedKey.error.issues)
          ctx.addIssue({ code: "custom", message: issueMessage(issue), path: [k] })
        continue
      }
      const parsed = value.safeParse(v)
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          ctx.addIssue({ code: "custom", message: issueMessage(issue), path: [k, ...issue.path] })
        continue
      }
      out[parsedKey.data] = parsed.data
    }
    return out
  })
