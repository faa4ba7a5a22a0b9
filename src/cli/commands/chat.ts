// `smurfs chat`: a multi-turn session in the terminal around the Smurfs pipeline (intent routing,
// session memory, ask_user answered by the person), with an optional transcript file.

import { createInterface } from "node:readline"
import * as Effect from "effect/Effect"
import { type ChatTurn, makeChatSession } from "../../agents/chat/session.ts"
import type { ModelOptions } from "../../llm/spec.ts"
import { watchToolChildren } from "../../tools/child-guard.ts"
import { loadTools } from "../../tools/load.ts"
import { writeJsonAtomic } from "../../trace/atomic-write.ts"
import { redactText, redactValue } from "../../trace/redact.ts"
import { visibleText } from "../../trace/visible-text.ts"
import { approvalAsker } from "../ask-terminal.ts"
import { ExitCode } from "../exit-codes.ts"
import { liveView } from "../live-view.ts"
import { defaultModelSpec, resolveModelLayer } from "../model-option.ts"
import { approvalOption, intOption, type ParsedCommand, runCommand, thinkOption } from "../options.ts"
import { runProgram } from "../run-program.ts"
import { COMMAND } from "./chat-help.ts"

export { COMMAND }

const parse = ({ values }: ParsedCommand<typeof COMMAND.options>) => {
  const model: ModelOptions = {
    timeoutMs: intOption("timeout", values.timeout),
    numCtx: intOption("num-ctx", values["num-ctx"]),
    think: thinkOption(values.think)
  }
  return {
    values,
    model,
    maxSteps: intOption("smurfs-max-steps", values["smurfs-max-steps"]),
    approval: approvalOption(values.approve)
  }
}

/** Lines typed by the person, in order, whether the chat loop or an ask_user question is waiting for them. */
const lineQueue = (rl: ReturnType<typeof createInterface>) => {
  const buffered: Array<string> = []
  const waiting: Array<(line: string | undefined) => void> = []
  let closed = false
  rl.on("line", (line) => (waiting.length > 0 ? waiting.shift()!(line) : buffered.push(line)))
  rl.on("close", () => {
    closed = true
    for (const w of waiting.splice(0)) w(undefined)
  })
  /** The next line, or undefined once input has ended (Ctrl-D, end of a pipe); `cancel` stops waiting, so the line goes to the next reader. */
  const next = (): { readonly line: Promise<string | undefined>; readonly cancel: () => void } => {
    if (buffered.length > 0) return { line: Promise.resolve(buffered.shift()), cancel: () => {} }
    if (closed) return { line: Promise.resolve(undefined), cancel: () => {} }
    let waiter: ((line: string | undefined) => void) | undefined
    const line = new Promise<string | undefined>((resolve) => waiting.push((waiter = resolve)))
    return { line, cancel: () => void (waiting.includes(waiter!) && waiting.splice(waiting.indexOf(waiter!), 1)) }
  }
  return next
}

/** The transcript file: every turn with its route, reply and trajectory; secrets redacted. */
const transcriptOf = (spec: string, tools: ReadonlyArray<string>, startedAt: string, turns: ReadonlyArray<ChatTurn>) =>
  redactValue({ format: "smurfs-chat/1", model: spec, tools, startedAt, turns })

export const run = (argv: string[]): Promise<number> => runCommand(COMMAND, argv, (parsed) => converse(parse(parsed)))

const converse = (args: ReturnType<typeof parse>): Promise<number> => {
  const { values } = args
  const spec = values.model ?? defaultModelSpec()
  const color = process.stderr.isTTY === true && !process.env["NO_COLOR"]
  // replies and questions come from the model: its control characters are shown, never obeyed
  const out = (text: string) => process.stdout.write(`${visibleText(redactText(text))}\n`)
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY === true })
  const next = lineQueue(rl)
  const nextLine = () => next().line
  // set while an ask_user question waits for its answer: Ctrl-C then cancels the question, not the chat
  let cancelQuestion: (() => void) | undefined
  const startedAt = new Date().toISOString()

  const program = Effect.gen(function* () {
    const tools = yield* loadTools(values.tools, {
      mcpEnv: values["mcp-env"],
      approval: {
        policy: args.approval,
        // the person answers on the next line they type, as an ask_user question
        ask: process.stdin.isTTY
          ? approvalAsker(async (question) => {
              out(question.trim())
              rl.setPrompt("allow> ")
              rl.prompt()
              return next().line
            })
          : undefined
      }
    })
    const session = makeChatSession({
      tools,
      sessionId: `chat-${Date.now().toString(36)}`,
      pipeline: {
        maxSteps: args.maxSteps,
        onEvent: liveView((line) => process.stderr.write(`${line}\n`), { color }),
        // the person answers the executor's question on the next line they type
        askUser: async ({ question }) => {
          out(`\nsmurfs asks: ${question}`)
          rl.setPrompt("answer> ")
          rl.prompt()
          const waiting = next()
          const cancelled = new Promise<never>((_, reject) => {
            cancelQuestion = () => {
              waiting.cancel()
              out("(question cancelled)")
              reject(new Error("the person cancelled the question (Ctrl-C): do without the answer"))
            }
          })
          try {
            return await Promise.race([waiting.line, cancelled])
          } finally {
            cancelQuestion = undefined
          }
        }
      }
    })
    // A transcript that cannot be written (a full disk, a bad --save path) never ends the conversation:
    // the whole transcript is rewritten after every turn, so the next write that succeeds loses nothing.
    const save = (turns: ReadonlyArray<ChatTurn>) =>
      values.save === undefined
        ? Effect.void
        : writeJsonAtomic(
            values.save,
            transcriptOf(
              spec,
              tools.tools.map((t) => t.name),
              startedAt,
              turns
            )
          ).pipe(
            Effect.catchTag("RunDirError", (e) =>
              Effect.sync(() =>
                process.stderr.write(
                  `${redactText(`smurfs chat: the transcript was not saved: ${e.path}: ${e.problem}. The conversation goes on and the whole transcript is written again after the next turn; free some space or restart with another --save file.`)}\n`
                )
              )
            )
          )
    out(`smurfs chat: model ${spec}, ${tools.tools.length} tools. Ask "what can you do?", or type /exit to end.`)
    yield* save(session.turns)
    while (true) {
      rl.setPrompt("you> ")
      rl.prompt()
      const line = yield* Effect.promise(() => nextLine())
      if (line === undefined || line.trim() === "/exit") return
      if (line.trim().length === 0) continue
      const turn = yield* session.turn(line.trim())
      out(`smurfs> ${turn.reply}`)
      yield* save(session.turns)
    }
  }).pipe(Effect.scoped, Effect.provide(resolveModelLayer(spec, args.model)))

  // a child process a tool leaves running does not hold the command open after /exit
  const children = watchToolChildren()
  return runProgram(
    program.pipe(
      Effect.ensuring(Effect.sync(() => (children.end((line) => console.error(line)), rl.close()))),
      Effect.map(() => (out("bye"), ExitCode.Ok))
    ),
    {
      command: "chat",
      interrupted: () => out("\nbye (interrupted)"),
      // Ctrl-C on a terminal reaches readline, not the process; at an ask_user question it cancels the question
      listen: (interrupt) => {
        const onSigint = () => (cancelQuestion ? cancelQuestion() : interrupt())
        rl.on("SIGINT", onSigint)
        return () => rl.off("SIGINT", onSigint)
      }
    }
  )
}
