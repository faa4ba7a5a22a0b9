// Demo tool: evaluate an arithmetic expression exactly and safely.
import { z } from "zod"
import { defineTool } from "../define-tool.ts"
import { evaluateArithmetic } from "./arithmetic.ts"

/** Round away binary noise such as 0.1 + 0.2 = 0.30000000000000004. */
const tidy = (x: number): number => Number.parseFloat(x.toPrecision(12))

export const calculator = defineTool({
  name: "calculator",
  description:
    "Evaluate an arithmetic expression and return its value.\n" +
    "Supports + - * / % ^ (power), parentheses, the constants pi and e, and the functions sqrt, abs, round, floor, ceil, ln, log (base 10), log2, exp, sin, cos, tan, min, max, pow.",
  parameters: z.object({
    expression: z.string().describe('The expression, e.g. "(3 + 4) * 2 ^ 3" or "sqrt(16) / 4"')
  }),
  execute: ({ expression }) => ({ expression, result: tidy(evaluateArithmetic(expression)) })
})
