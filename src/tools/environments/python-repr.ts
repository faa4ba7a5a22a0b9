// Python `repr` of decoded JSON arguments and a small reader of such reprs: StableToolBench's cache keys.
import { PythonNumber } from "./canonical.ts"
import { pythonFloat, pythonNumber } from "./python-number.ts"

const PRINTABLE_ESCAPES: Readonly<Record<string, string>> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" }

/**
 * Characters Python's `str.isprintable` calls not printable, which `repr` escapes: the categories Other (Cc, Cf, Cs,
 * Co, Cn) and Separator (Zl, Zp, Zs) but the space. Read from this Node's Unicode tables (Python reads its own
 * version's: a code point assigned in one version only may differ).
 */
const NOT_PRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u

/** A non-printable code point as `repr` escapes it: `\xNN`, `\uNNNN` or `\UNNNNNNNN`. */
const escapeCodePoint = (code: number): string =>
  code < 0x100
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : code < 0x10000
      ? `\\u${code.toString(16).padStart(4, "0")}`
      : `\\U${code.toString(16).padStart(8, "0")}`

/** Python's `repr` of a str: single quotes unless the text has `'` and no `"`; every non-printable code point escaped. */
export const pythonStrRepr = (s: string): string => {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
  let out = quote
  for (const ch of s) {
    if (ch in PRINTABLE_ESCAPES) out += PRINTABLE_ESCAPES[ch]
    else if (ch === quote) out += `\\${quote}`
    else if (ch !== " " && NOT_PRINTABLE.test(ch)) out += escapeCodePoint(ch.codePointAt(0)!)
    else out += ch
  }
  return out + quote
}

/** Python's `str()` of a dict decoded from JSON (`{'q': 'birthday', 'limit': 5}`), keys in their given order. */
export const pythonRepr = (value: unknown, asFloat = false): string => {
  if (value === null || value === undefined) return "None"
  if (typeof value === "boolean") return value ? "True" : "False"
  // a number read from JSON text keeps the text Python prints (10.0 stays 10.0)
  if (value instanceof PythonNumber)
    return value.text === "NaN"
      ? "nan"
      : value.text === "Infinity"
        ? "inf"
        : value.text === "-Infinity"
          ? "-inf"
          : value.text
  // 5.0 and 5 are one number in JavaScript; Python prints 5.0 only if the model wrote 5.0: `asFloat` says so
  if (typeof value === "number") return Number.isFinite(value) ? pythonNumber(value, asFloat) : pythonFloat(value)
  if (typeof value === "string") return pythonStrRepr(value)
  if (Array.isArray(value)) return `[${value.map((v) => pythonRepr(v, asFloat)).join(", ")}]`
  if (typeof value === "object")
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${pythonStrRepr(k)}: ${pythonRepr(v, asFloat)}`)
      .join(", ")}}`
  return pythonStrRepr(String(value))
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  r: "\r",
  t: "\t",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "0": "\0",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v"
}

/**
 * Read a Python literal (dict, list, tuple, str, int, float, True/False/None); undefined when it is not one. With
 * `keepNumbers` each number is a `PythonNumber` with the text Python's str() gives it (`10.0` stays `10.0`, `1e5`
 * is `100000.0`), for a key computed as `str()` of what `eval` read.
 */
export const parsePythonLiteral = (text: string, keepNumbers = false): unknown => {
  let i = 0
  const fail = (): never => {
    throw new SyntaxError(`not a Python literal at ${i}`)
  }
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++
  }
  const value = (): unknown => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      const out: Record<string, unknown> = {}
      ws()
      if (text[i] === "}") return (i++, out)
      for (;;) {
        const key = value()
        ws()
        if (text[i++] !== ":") fail()
        out[String(key)] = value()
        ws()
        const sep = text[i++]
        if (sep === "}") return out
        if (sep !== ",") fail()
        ws()
        if (text[i] === "}") return (i++, out)
      }
    }
    if (c === "[" || c === "(") {
      const close = c === "[" ? "]" : ")"
      i++
      const out: unknown[] = []
      ws()
      if (text[i] === close) return (i++, out)
      for (;;) {
        out.push(value())
        ws()
        const sep = text[i++]
        if (sep === close) return out
        if (sep !== ",") fail()
        ws()
        if (text[i] === close) return (i++, out)
      }
    }
    if (c === "'" || c === '"') {
      i++
      let s = ""
      while (i < text.length && text[i] !== c) {
        if (text[i] === "\\") {
          const e = text[i + 1]!
          if (e === "x") (s += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 4), 16))), (i += 4)
          else if (e === "u") (s += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16))), (i += 6)
          else if (e === "U") (s += String.fromCodePoint(Number.parseInt(text.slice(i + 2, i + 10), 16))), (i += 10)
          else (s += SIMPLE_ESCAPES[e] ?? `\\${e}`), (i += 2)
        } else s += text[i++]
      }
      if (text[i++] !== c) fail()
      return s
    }
    const word = /^(?:True|False|None|-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|-?inf|nan)/.exec(text.slice(i))
    if (!word) return fail()
    i += word[0].length
    const w = word[0]
    return w === "True"
      ? true
      : w === "False"
        ? false
        : w === "None"
          ? null
          : keepNumbers
            ? new PythonNumber(
                /^-?\d+$/.test(w)
                  ? w.replace(/^(-?)0+(?=\d)/, "$1")
                  : pythonFloat(Number(w.replace("inf", "Infinity").replace("nan", "NaN")))
              )
            : Number(w.replace("inf", "Infinity").replace("nan", "NaN"))
  }
  try {
    const v = value()
    ws()
    return i === text.length ? v : undefined
  } catch {
    return undefined
  }
}
