// `ask_user` on a terminal: the executor's question is asked on stderr and the reply read from stdin.
import { createInterface } from "node:readline/promises"
import type { AskUser } from "../agents/ask-user.ts"

/**
 * The AskUser of `smurfs run`: asks on the terminal when stdin is one; otherwise (a pipe, a script,
 * CI) there is nobody to ask and the call fails as a tool, so the executor tries another way.
 */
export const terminalAskUser = (
  input: NodeJS.ReadStream = process.stdin,
  output: NodeJS.WriteStream = process.stderr
): AskUser => {
  if (input.isTTY !== true)
    return () =>
      Promise.reject(
        new Error("nobody to ask: stdin is not a terminal (run smurfs in a terminal, or give the value in the query)")
      )
  return async ({ question }) => {
    const rl = createInterface({ input, output, terminal: true })
    try {
      return await rl.question(`\n? ${question}\n> `)
    } finally {
      rl.close()
    }
  }
}
