// A safe arithmetic evaluator (recursive descent, no eval): + - * / % ^, parentheses, constants and functions.

const CONSTANTS: Readonly<Record<string, number>> = { pi: Math.PI, e: Math.E }

const FUNCTIONS: Readonly<Record<string, (...xs: number[]) => number>> = {
  sqrt: Math.sqrt,
  abs: Math.abs,
  round: Math.round,
  floor: Math.floor,
  ceil: Math.ceil,
  ln: Math.log,
  log: Math.log10,
  log10: Math.log10,
  log2: Math.log2,
  exp: Math.exp,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  min: Math.min,
  max: Math.max,
  pow: Math.pow
}

type Token = { kind: "num"; value: number } | { kind: "id"; value: string } | { kind: "op"; value: string }

const tokenize = (text: string): Token[] => {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (/\s/.test(c)) {
      i++
    } else if (/[0-9.]/.test(c)) {
      const m = /^(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?/i.exec(text.slice(i))
      if (!m) throw new Error(`bad number at position ${i + 1}`)
      tokens.push({ kind: "num", value: Number(m[0].replace(/_/g, "")) })
      i += m[0].length
    } else if (/[a-z_]/i.test(c)) {
      const m = /^[a-z_][a-z0-9_]*/i.exec(text.slice(i))!
      tokens.push({ kind: "id", value: m[0].toLowerCase() })
      i += m[0].length
    } else if ("+-*/%^(),".includes(c)) {
      // `**` is a common spelling of the power operator
      if (c === "*" && text[i + 1] === "*") {
        tokens.push({ kind: "op", value: "^" })
        i += 2
      } else {
        tokens.push({ kind: "op", value: c })
        i++
      }
    } else {
      throw new Error(`unexpected character "${c}" at position ${i + 1}`)
    }
  }
  return tokens
}

/** Evaluate an arithmetic expression; throws an Error naming the problem on bad input or a non-finite result. */
export const evaluateArithmetic = (expression: string): number => {
  const tokens = tokenize(expression.replace(/×/g, "*").replace(/÷/g, "/"))
  let pos = 0
  const peek = () => tokens[pos]
  const isOp = (value: string) => peek()?.kind === "op" && peek()!.value === value
  const expect = (value: string) => {
    if (!isOp(value))
      throw new Error(`expected "${value}"${peek() ? ` before "${String(peek()!.value)}"` : " at the end"}`)
    pos++
  }

  const expr = (): number => {
    let left = term()
    while (isOp("+") || isOp("-")) {
      const op = tokens[pos++]!.value
      const right = term()
      left = op === "+" ? left + right : left - right
    }
    return left
  }
  const term = (): number => {
    let left = unary()
    while (isOp("*") || isOp("/") || isOp("%")) {
      const op = tokens[pos++]!.value
      const right = unary()
      if ((op === "/" || op === "%") && right === 0) throw new Error("division by zero")
      left = op === "*" ? left * right : op === "/" ? left / right : left % right
    }
    return left
  }
  const unary = (): number => {
    if (isOp("-")) {
      pos++
      return -unary()
    }
    if (isOp("+")) {
      pos++
      return unary()
    }
    return power()
  }
  // right-associative, binds tighter than unary minus on its left: -2^2 = -4
  const power = (): number => {
    const base = primary()
    if (isOp("^")) {
      pos++
      return base ** unary()
    }
    return base
  }
  const primary = (): number => {
    const token = tokens[pos++]
    if (!token) throw new Error("the expression ends too early")
    if (token.kind === "num") return token.value
    if (token.kind === "op" && token.value === "(") {
      const value = expr()
      expect(")")
      return value
    }
    if (token.kind === "id") {
      if (isOp("(")) {
        const fn = FUNCTIONS[token.value]
        if (!fn) throw new Error(`unknown function "${token.value}" (known: ${Object.keys(FUNCTIONS).join(", ")})`)
        pos++
        const args: number[] = []
        if (!isOp(")")) {
          args.push(expr())
          while (isOp(",")) {
            pos++
            args.push(expr())
          }
        }
        expect(")")
        return fn(...args)
      }
      const constant = CONSTANTS[token.value]
      if (constant === undefined) throw new Error(`unknown name "${token.value}" (constants: pi, e)`)
      return constant
    }
    throw new Error(`unexpected "${token.value}"`)
  }

  if (tokens.length === 0) throw new Error("the expression is empty")
  const value = expr()
  if (pos < tokens.length) throw new Error(`unexpected "${String(tokens[pos]!.value)}" after a complete expression`)
  if (!Number.isFinite(value)) throw new Error("the result is not a finite number")
  return value
}
