// `ask_user` and tool-call approval on a terminal: the question is asked on stderr and the reply read from stdin.
import { createInterface } from "node:readline/promises"
import type { AskUser } from "../agents/ask-user.ts"
import type { AskApproval } from "../tools/approval.ts"
import { redactText } from "../trace/redact.ts"
import { visibleText } from "../trace/visible-text.ts"

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

/**
 * The AskApproval of `smurfs run` under `--approve ask`: each call that needs approval is shown on
 * stderr and answered y (this call), a (every call of this tool) or n; questions come one at a time.
 * Without a terminal on stdin nobody can answer and the call is refused.
 */
export const terminalApproval = (
  input: NodeJS.ReadStream = process.stdin,
  output: NodeJS.WriteStream = process.stderr
): AskApproval => {
  if (input.isTTY !== true)
    return () => Promise.reject(new Error("stdin is not a terminal (choose with --approve all|none|<tool globs>)"))
  return approvalAsker(async (question) => {
    const rl = createInterface({ input, output, terminal: true })
    try {
      return await rl.question(question)
    } finally {
      rl.close()
    }
  })
}

/** An AskApproval over a way to ask one line: one question at a time, "a" remembered per tool. */
export const approvalAsker = (askLine: (question: string) => Promise<string | undefined>): AskApproval => {
  const always = new Set<string>()
  let queue: Promise<unknown> = Promise.resolve()
  return (request) => {
    const asked = queue.then(async () => {
      if (always.has(request.tool)) return true
      const args = visibleText(redactText(JSON.stringify(request.args)))
      const answer = await askLine(
        `\n? Allow the call ${request.tool}(${args.length > 300 ? `${args.slice(0, 300)}...` : args})? It may change things: ${request.reason}.\n  [y]es / [a]lways for ${request.tool} / [n]o > `
      )
      const a = (answer ?? "").trim().toLowerCase()
      if (a === "a" || a === "always") always.add(request.tool)
      return a === "y" || a === "yes" || a === "a" || a === "always"
    })
    queue = asked.catch(() => undefined)
    return asked
  }
}
