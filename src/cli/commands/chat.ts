// `smurfs chat`: a multi-turn session in the terminal around the Smurfs pipeline (intent routing,
// session memory, ask_user answered by the person), with an optional transcript file.

import { createInterface } from "node:readline"
import type { ParseArgsOptionsConfig } from "node:util"
import * as Effect from "effect/Effect"
import { type ChatTurn, makeChatSession } from "../../agents/chat/session.ts"
import { DEFAULT_MODEL_SPEC, MODEL_DEFAULTS, type ModelOptions, THINK_HELP } from "../../llm/spec.ts"
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
import { MCP_OPTIONS_HELP } from "./run-help.ts"

const HELP = `usage: smurfs chat [options]

A conversation with the Smurfs agents: small talk and "what can you do?" get a direct reply, requests
the tools cannot serve are refused with a reason, tasks run through the pipeline (each step shown as
in smurfs run). Earlier turns are remembered. The agents may ask you for a missing value.
Type /exit (or press Ctrl-D or Ctrl-C) to end; Ctrl-C while the agents ask you a question cancels
that question only.

options:
  -m, --model <spec>    ollama:<model>, openai:<model>, llama:<file.gguf>, scripted:<file.json> or sim (default SMURFS_MODEL, else ${DEFAULT_MODEL_SPEC})
  -t, --tools <source>  demo, a JS/TS module exporting tools, a StableToolBench api_list JSON,
                        "mcp:<command and args>" or mcp+http(s)://<url>; repeat to combine sources (default demo)
${MCP_OPTIONS_HELP}
      --save <file>     keep the transcript (every turn with its trajectory) as JSON in <file>, rewritten after each turn
      --smurfs-max-steps <n>
                        accepted steps on a subtask's path before it is answered from memory (default 3)
      --timeout <ms>    per-request model timeout (default ${MODEL_DEFAULTS.timeoutMs})
      --num-ctx <n>     context window in tokens (Ollama num_ctx, also the prompt budget)
      --think <on|off|low|medium|high>
                        ${THINK_HELP}
  -h, --help            show this help

exit codes: 0 ended with /exit or Ctrl-D, 2 bad usage, 3 bad input (model spec, tools), 130 ended with Ctrl-C`

/** The options of `smurfs chat`, in node:util parseArgs' shape. */
const OPTIONS = {
  model: { type: "string", short: "m" },
  tools: { type: "string", short: "t", multiple: true, default: ["demo"] },
  save: { type: "string" },
  "mcp-env": { type: "string", multiple: true },
  approve: { type: "string" },
  "smurfs-max-steps": { type: "string" },
  timeout: { type: "string" },
  "num-ctx": { type: "string" },
  think: { type: "string" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "chat", help: HELP, options: OPTIONS } as const

const parse = ({ values }: ParsedCommand<typeof OPTIONS>) => {
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
