// The generic tools each τ² domain's toolkit defines alike (retail's and airline's `calculate` and
// `transfer_to_human_agents`): one definition, placed in each domain's list where τ² defines it.
import { z } from "zod"
import type { Tau2ToolSpec } from "./domain.ts"
import { calculate } from "./python-arithmetic.ts"

export const calculateTool = <Db>(): Tau2ToolSpec<Db> => ({
  name: "calculate",
  type: "generic",
  description: "Calculate the result of a mathematical expression.",
  params: [
    {
      name: "expression",
      schema: z.string(),
      description:
        "The mathematical expression to calculate, such as '2 + 2'. The expression can contain numbers, operators (+, -, *, /), parentheses, and spaces."
    }
  ],
  run: (_db, args) => calculate(args["expression"] as string)
})

export const transferToHumanAgentsTool = <Db>(): Tau2ToolSpec<Db> => ({
  name: "transfer_to_human_agents",
  type: "generic",
  description:
    "Transfer the user to a human agent, with a summary of the user's issue.\n\nOnly transfer if\n -  the user explicitly asks for a human agent\n -  given the policy and the available tools, you cannot solve the user's issue.",
  params: [{ name: "summary", schema: z.string(), description: "A summary of the user's issue." }],
  run: () => "Transfer successful"
})
