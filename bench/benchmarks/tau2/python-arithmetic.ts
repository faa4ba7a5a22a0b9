// τ²'s `calculate` tool: `str(round(float(eval(expression)), 2))` over the characters it allows (digits, + - * / ( ) .
// and spaces), evaluated with Python's arithmetic: ints exact and unbounded, `/` true division, `//` floor, `**` power.
import { pythonFloat } from "../../../src/tools/environments/python-number.ts"
import { pyRound } from "./python-json.ts"

type Num = { readonly int: bigint } | { readonly float: number }

/** An expression Python would refuse or fail on; the message is Python's exception text. */
export class PyArithmeticError extends Error {}

const syntax = (what = "invalid syntax") => new PyArithmeticError(`${what} (<string>, line 1)`)

const toFloat = (n: Num): number => {
  if ("float" in n) return n.float
  const f = Number(n.int)
  if (!Number.isFinite(f)) throw new PyArithmeticError("int too large to convert to float")
  return f
}

const floorDiv = (a: bigint, b: bigint): bigint => {
  const q = a / b
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q
}

/** Larger than any figure an order needs; Python would grind on, here the call fails. */
const MAX_INT_BITS = 100_000n

const power = (a: Num, b: Num): Num => {
  if ("int" in a && "int" in b) {
    if (b.int >= 0n) {
      const bits = BigInt(a.int === 0n ? 0 : a.int.toString(2).replace("-", "").length) * b.int
      if (bits > MAX_INT_BITS) throw new PyArithmeticError("integer result too large")
      return { int: a.int ** b.int }
    }
    if (a.int === 0n) throw new PyArithmeticError("0.0 cannot be raised to a negative power")
  }
  const x = toFloat(a)
  const y = toFloat(b)
  if (x === 0 && y < 0) throw new PyArithmeticError("0.0 cannot be raised to a negative power")
  if (x < 0 && !Number.isInteger(y))
    throw new PyArithmeticError("float() argument must be a string or a real number, not 'complex'")
  const r = x ** y
  if (!Number.isFinite(r)) throw new PyArithmeticError("(34, 'Numerical result out of range')")
  return { float: r }
}

const binary = (op: string, a: Num, b: Num): Num => {
  if (op === "**") return power(a, b)
  if ("int" in a && "int" in b) {
    switch (op) {
      case "+":
        return { int: a.int + b.int }
      case "-":
        return { int: a.int - b.int }
      case "*":
        return { int: a.int * b.int }
      case "//":
        if (b.int === 0n) throw new PyArithmeticError("integer division or modulo by zero")
        return { int: floorDiv(a.int, b.int) }
      default:
        if (b.int === 0n) throw new PyArithmeticError("division by zero")
        return { float: toFloat(a) / toFloat(b) }
    }
  }
  const x = toFloat(a)
  const y = toFloat(b)
  switch (op) {
    case "+":
      return { float: x + y }
    case "-":
      return { float: x - y }
    case "*":
      return { float: x * y }
    case "//":
      if (y === 0) throw new PyArithmeticError("float floor division by zero")
      return { float: Math.floor(x / y) }
    default:
      if (y === 0) throw new PyArithmeticError("float division by zero")
      return { float: x / y }
  }
}

const TOKEN = /\s*(?:(\d+\.\d*|\.\d+|\d+)|(\*\*|\/\/|[-+*/()]))/y

const tokenize = (text: string): Array<string> => {
  const tokens: Array<string> = []
  TOKEN.lastIndex = 0
  let at = 0
  while (at < text.length) {
    if (text.slice(at).trim() === "") break
    TOKEN.lastIndex = at
    const m = TOKEN.exec(text)
    if (m === null) throw syntax()
    const number = m[1]
    if (number !== undefined) {
      // Python refuses 0123 (but takes 00 and 0.5)
      if (/^0\d/.test(number) && !number.includes(".") && !/^0+$/.test(number))
        throw syntax("leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers")
      const previous = tokens[tokens.length - 1]
      if (previous !== undefined && /^[\d.]/.test(previous)) throw syntax()
    }
    tokens.push((m[1] ?? m[2]) as string)
    at = TOKEN.lastIndex
  }
  return tokens
}

/** Evaluate an arithmetic expression as Python's `eval` would (the characters `calculate` allows only). */
export const pyEvalArithmetic = (text: string): Num => {
  const tokens = tokenize(text)
  let k = 0
  const peek = () => tokens[k]
  const expr = (): Num => {
    let left = term()
    while (peek() === "+" || peek() === "-") {
      const op = tokens[k++] as string
      left = binary(op, left, term())
    }
    return left
  }
  const term = (): Num => {
    let left = factor()
    while (peek() === "*" || peek() === "/" || peek() === "//") {
      const op = tokens[k++] as string
      left = binary(op, left, factor())
    }
    return left
  }
  const factor = (): Num => {
    const t = peek()
    if (t === "+" || t === "-") {
      k++
      const v = factor()
      if (t === "+") return v
      return "int" in v ? { int: -v.int } : { float: -v.float }
    }
    return pow()
  }
  const pow = (): Num => {
    const base = atom()
    if (peek() === "**") {
      k++
      return power(base, factor())
    }
    return base
  }
  const atom = (): Num => {
    const t = tokens[k++]
    if (t === undefined) throw syntax()
    if (t === "(") {
      if (peek() === undefined) throw syntax("'(' was never closed")
      const v = expr()
      if (peek() === undefined) throw syntax("'(' was never closed")
      if (tokens[k++] !== ")") throw syntax()
      return v
    }
    if (t === ")") throw syntax("unmatched ')'")
    if (/^[\d.]/.test(t)) return t.includes(".") ? { float: Number(t) } : { int: BigInt(t) }
    throw syntax()
  }
  const value = expr()
  if (k < tokens.length) throw syntax(tokens[k] === ")" ? "unmatched ')'" : "invalid syntax")
  return value
}

/** τ²'s `calculate`: the characters check, then `str(round(float(eval(expression)), 2))`. */
export const calculate = (expression: string): string => {
  if (![...expression].every((c) => "0123456789+-*/(). ".includes(c)))
    throw new PyArithmeticError("Invalid characters in expression")
  return pythonFloat(pyRound(toFloat(pyEvalArithmetic(expression)), 2))
}
