// Secret redaction for everything a run writes (traces, run directories, the live view, logs).
//
// A model or a tool can echo what it was given: an API key, an Authorization header. Redaction
// happens where text leaves the process, so the in-memory trajectory stays exact while nothing
// written to disk or a terminal carries a secret.

/** What a redacted secret reads as. */
export const REDACTED = "[REDACTED]"

/** Environment variables whose values are secrets wherever they appear: the key names, then any *_KEY / *_TOKEN / *_SECRET / *_PASSWORD / *_AUTHORIZATION. */
const SECRET_ENV =
  /^(OPENAI_API_KEY|OLLAMA_API_KEY|.*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTHORI[SZ]ATION))$/i

/** Values shorter than this are not treated as secrets: redacting "1" or "true" everywhere would destroy the text. */
const MIN_SECRET_CHARS = 8

/**
 * Secret shapes that are recognisable without knowing the value: authorization headers (header lines,
 * bearer tokens), OpenAI-style keys, and `api_key=...` style assignments.
 */
const PATTERNS: ReadonlyArray<[RegExp, (match: string, ...groups: string[]) => string]> = [
  [
    /\b(authorization|proxy-authorization|x-api-key|api-key)(["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token)\s+)?[^\s"',;}]+/gi,
    (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`
  ],
  // a bearer token anywhere; it must hold a digit, so that prose such as "bearer instruments" stays
  [/\b(bearer)\s+(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,}/gi, (_m, scheme: string) => `${scheme} ${REDACTED}`],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, () => REDACTED],
  [
    /\b(api[_-]?key|access[_-]?token|secret)(["']?\s*[:=]\s*["']?)[^\s"',;}&]{8,}/gi,
    (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`
  ]
]

/**
 * Every PATTERNS entry needs one of these words; a text without any skips the four replacements
 * (most texts a run writes hold none, and a record holds many texts).
 */
const PATTERN_WORDS = /authorization|api[_-]?key|bearer|sk-|access[_-]?token|secret/i

/**
 * Credentials the process was given by other means than a secret-named variable: an MCP server's
 * Authorization header (from any variable `#auth=VAR` names), a model server's API key or header. The
 * code that sends one registers it (`addSecret`) before sending, and every redaction from then on
 * removes it. Process-wide on purpose: a credential leaks through whatever prints next, which knows
 * nothing of where it came from.
 */
const givenSecrets = new Set<string>()

/**
 * Add a credential to the redaction set: the value, and for an `<scheme> <token>` header value the
 * token alone too (a server may echo either). Values shorter than MIN_SECRET_CHARS are left out.
 */
export const addSecret = (value: string | undefined): void => {
  if (value === undefined) return
  const trimmed = value.trim()
  for (const secret of [trimmed, /^[A-Za-z][\w-]*\s+(\S+)$/.exec(trimmed)?.[1]])
    if (secret !== undefined && secret.length >= MIN_SECRET_CHARS && !givenSecrets.has(secret)) {
      givenSecrets.add(secret)
      sortedGiven = undefined
    }
}

/** The registered credentials, longest first (a value containing another is replaced whole). */
let sortedGiven: ReadonlyArray<string> | undefined
const given = (): ReadonlyArray<string> => (sortedGiven ??= [...givenSecrets].sort((a, b) => b.length - a.length))

/** Whether a variable's name marks its value secret, remembered per name (the values are read afresh on every call). */
const secretNames = new Map<string, boolean>()
const isSecretName = (name: string): boolean => {
  let secret = secretNames.get(name)
  if (secret === undefined) secretNames.set(name, (secret = SECRET_ENV.test(name)))
  return secret
}

/** The secret values of an environment (longest first, so that a key containing another is replaced whole). */
export const secretValues = (env: Readonly<Record<string, string | undefined>> = process.env): Array<string> => {
  // Names first, then only the secret ones' values: each read of process.env is a call into the runtime,
  // and this runs for every tool result and task record.
  const values = new Set<string>()
  // process.env's own names are all enumerable (Node refuses any other kind), and listing them without
  // asking each one whether it is enumerable costs half as much
  for (const name of env === process.env ? Object.getOwnPropertyNames(env) : Object.keys(env)) {
    if (!isSecretName(name)) continue
    const value = env[name]
    if (value !== undefined && value.length >= MIN_SECRET_CHARS) values.add(value)
  }
  return [...values].sort((a, b) => b.length - a.length)
}

/**
 * Text with every secret replaced by [REDACTED]: the environment's secret values (or `secrets`), the
 * credentials registered with addSecret, and the known secret shapes.
 */
export const redactText = (text: string, secrets: ReadonlyArray<string> = secretValues()): string => {
  let out = text
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED)
  for (const secret of given()) if (out.includes(secret)) out = out.split(secret).join(REDACTED)
  if (!PATTERN_WORDS.test(out)) return out
  for (const [pattern, replace] of PATTERNS)
    out = out.replace(pattern, replace as (substring: string, ...args: unknown[]) => string)
  return out
}

/**
 * A deep copy of a JSON-like value with every string (keys included) redacted. Used on trajectories and
 * task records before they are written; objects that are not plain data are left as they are.
 */
export const redactValue = <A>(value: A, secrets: ReadonlyArray<string> = secretValues()): A => {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redactText(v, secrets)
    if (Array.isArray(v)) return v.map(walk)
    if (
      v !== null &&
      typeof v === "object" &&
      (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)
    ) {
      // a loop over the keys, not entries and fromEntries (a pair array per key): a task record's every key goes here
      const out: Record<string, unknown> = {}
      for (const k of Object.keys(v)) {
        const key = redactText(k, secrets)
        const x = walk((v as Record<string, unknown>)[k])
        // a key named __proto__ is data here, as fromEntries would keep it
        if (key === "__proto__")
          Object.defineProperty(out, key, { value: x, enumerable: true, writable: true, configurable: true })
        else out[key] = x
      }
      return out
    }
    return v
  }
  return walk(value) as A
}

/** A line writer that redacts each line before writing it (the live view, logs). */
export const redactingWriter =
  (write: (line: string) => void, secrets: ReadonlyArray<string> = secretValues()) =>
  (line: string): void =>
    write(redactText(line, secrets))
