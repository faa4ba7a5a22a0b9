// `smurfs run "<query>"`: solve one query with the Smurfs agents, showing each step as it happens.

import * as Effect from "effect/Effect"
import { DEFAULT_PROFILE, PROFILES, profileNotes } from "../../agents/profile.ts"
import { EXECUTORS } from "../../agents/smurfs-options.ts"
import { smurfsSrcDirOf } from "../../agents/smurfs-source.ts"
import { Timeout } from "../../llm/errors.ts"
import type { ServerFailure } from "../../llm/server-watch.ts"
import { checkModelPresent, type ModelOptions } from "../../llm/spec.ts"
import { plural } from "../../plural.ts"
import {
  checkRunSettings,
  InvalidRunSettings,
  type RunOutcome,
  type RunSettings,
  runQuery,
  runSettings
} from "../../run-query.ts"
import { stbDirOf } from "../../text/stabletoolbench-files.ts"
import { approvalText } from "../../tools/approval.ts"
import { watchToolChildren } from "../../tools/child-guard.ts"
import { containToolExits } from "../../tools/exit-guard.ts"
import { isKind } from "../../trace/events.ts"
import { otlpLayer } from "../../trace/otlp.ts"
import type { RunEvent } from "../../trace/record.ts"
import { redactText, redactValue } from "../../trace/redact.ts"
import type { Trajectory } from "../../trace/trajectory.ts"
import { visibleText } from "../../trace/visible-text.ts"
import { terminalApproval, terminalAskUser } from "../ask-terminal.ts"
import { ExitCode } from "../exit-codes.ts"
import { liveView } from "../live-view.ts"
import { defaultModelSpec } from "../model-option.ts"
import {
  approvalOption,
  BadInput,
  choiceOption,
  intOption,
  numberOption,
  type ParsedCommand,
  runCommand,
  thinkOption,
  UsageError
} from "../options.ts"
import { runProgram } from "../run-program.ts"
import { simulatorSpecOf } from "../simulator-option.ts"
import { makeSpinner } from "../spinner.ts"
import { routeStdoutToStderr } from "../stdout-guard.ts"
import { COMMAND } from "./run-help.ts"

export { COMMAND }

/** The command's options (flags, SMURFS_* and smurfs.config.json, as parseCommand read them) as the run's settings. */
const settingsOf = ({ values, positionals, given }: ParsedCommand<typeof COMMAND.options>): RunSettings => {
  const query = positionals.join(" ").trim()
  let settings: RunSettings
  try {
    settings = runSettings({
      query,
      model: values.model ?? defaultModelSpec(),
      modelOptions: {
        timeoutMs: intOption("timeout", values.timeout),
        numCtx: intOption("num-ctx", values["num-ctx"]),
        think: thinkOption(values.think),
        temperature: numberOption("temperature", values.temperature, 0, 2),
        seed: intOption("seed", values.seed, 0)
      },
      tools: values.tools,
      mcpEnv: values["mcp-env"] ?? [],
      approve: approvalText(approvalOption(values.approve)),
      maxSteps: smurfsMaxSteps(values),
      planner: !values["no-planner"],
      answerer: !values["no-answerer"],
      verifier: !values["no-verifier"],
      profile: choiceOption("profile", values.profile, PROFILES, DEFAULT_PROFILE),
      executor:
        values.executor === undefined ? undefined : choiceOption("executor", values.executor, EXECUTORS, "fused"),
      smurfsSrc: smurfsSrcDirOf(values["smurfs-src"], {}),
      queryId: values["query-id"],
      // SMURFS_DATA or smurfs.config.json's data is a default for --query-id, not a request for a task's tools
      data: given.has("data") || values["query-id"] !== undefined ? values.data : undefined,
      envs: values.env,
      storeDir: values["store-dir"],
      simulator: simulatorSpecOf(values.simulator),
      stb: stbDirOf(undefined),
      toolset: values.toolset ?? "all",
      embed: values.embed,
      embedCache: values["embed-cache"],
      rerank: values.rerank === true
    })
  } catch (e) {
    throw e instanceof InvalidRunSettings ? new UsageError(e.message) : e
  }
  try {
    checkRunSettings(settings)
  } catch (e) {
    throw new BadInput((e as Error).message)
  }
  return settings
}

/** --smurfs-max-steps, or its deprecated alias --max-steps with a one-line notice. */
const smurfsMaxSteps = (values: {
  readonly "smurfs-max-steps"?: string | undefined
  readonly "max-steps"?: string | undefined
}): number | undefined => {
  if (values["max-steps"] === undefined) return intOption("smurfs-max-steps", values["smurfs-max-steps"])
  if (values["smurfs-max-steps"] !== undefined)
    throw new UsageError("give only --smurfs-max-steps (--max-steps is its deprecated alias)")
  console.error("smurfs run: --max-steps is deprecated; use --smurfs-max-steps (same meaning)")
  return intOption("max-steps", values["max-steps"])
}

/** What to check when the model server failed the run. */
export const serverAdvice = (failure: ServerFailure, spec: string): string =>
  failure instanceof Timeout
    ? `The model server accepted the request but sent no reply within ${failure.ms} ms, twice. Check that it is not stuck ` +
      `(its log; \`ollama ps\` for Ollama) and that the model fits in memory, or raise --timeout for a slow model. ` +
      `\`smurfs doctor --model ${spec}\` checks the server.`
    : `${failure.message} \`smurfs doctor --model ${spec}\` checks the server.`

const summary = (t: Trajectory): string =>
  `${plural(t.totals.modelCalls, "model call")}, ${plural(t.totals.promptTokens + t.totals.completionTokens, "token")}, ${plural(t.totals.toolCalls, "tool call")}, ${plural(t.totals.backtracks, "backtrack")}, ${(t.totals.wallMs / 1000).toFixed(1)} s`

export const run = (argv: string[]): Promise<number> =>
  runCommand(COMMAND, argv, (parsed) => solve(settingsOf(parsed), parsed.values))

const solve = (
  settings: RunSettings,
  values: { readonly json: boolean; readonly strict: boolean }
): Promise<number> => {
  const color = process.stderr.isTTY === true && !process.env["NO_COLOR"]
  // only a person at a terminal sees a spinner: never with --json, never in a pipe or a log file
  const spinner = !values.json && process.stderr.isTTY === true ? makeSpinner({ stream: process.stderr }) : undefined
  const writeLine = spinner?.writeLine ?? ((line: string) => void process.stderr.write(`${line}\n`))
  // The run stops at the server's first failure (a timeout gets one retry): no answer made without the model is shown.
  const view = values.json ? undefined : liveView(writeLine, { color })
  // a give-up because the server failed is said once, at the end, with what to do about it
  const onEvent =
    view &&
    ((event: RunEvent, serverFailed: boolean) => (isKind(event, "give_up") && serverFailed ? undefined : view(event)))
  // as bench does: a model the server would refuse is refused before the run (with the names it has), and what the
  // server says of the model (llama.cpp serves any name, a window smaller than --num-ctx) is shown first
  for (const note of profileNotes(settings.profile, ["smurfs"], settings.smurfsSrc)) writeLine(`smurfs run: ${note}`)
  const checked = Effect.tap(checkModelPresent(settings.model, settings.modelOptions as ModelOptions), (warnings) =>
    Effect.sync(() => {
      for (const warning of warnings) writeLine(`smurfs run: ${settings.model}: ${warning}`)
    })
  )
  const program = Effect.andThen(
    checked,
    runQuery(settings, { askUser: terminalAskUser(), approveCall: terminalApproval(), onEvent, modelCalls: spinner })
  ).pipe(Effect.provide(otlpLayer()))

  // Tool modules run in this process: their stdout writes go to stderr and a process.exit fails their call.
  const restoreStdout = routeStdoutToStderr()
  const restoreExit = containToolExits()
  const show = ({ trajectory, failure }: RunOutcome): number => {
    if (failure) {
      if (values.json) console.log(JSON.stringify(redactValue(trajectory), null, 2))
      else console.error(`\n${summary(trajectory)}`)
      console.error(
        redactText(
          `smurfs run: the model server failed, so there is no answer. ${serverAdvice(failure, settings.model)}`
        )
      )
      return ExitCode.ModelUnavailable
    }
    if (values.json) {
      // What a model or tool echoed (an API key, an Authorization header) must not reach the output.
      console.log(JSON.stringify(redactValue(trajectory), null, 2))
      return trajectory.finishType === "give_answer" || !values.strict ? ExitCode.Ok : ExitCode.Failure
    }
    console.error(`\n${summary(trajectory)}`)
    if (trajectory.finishType === "give_answer") {
      console.log(visibleText(redactText(trajectory.finalAnswer)))
      return ExitCode.Ok
    }
    return values.strict ? ExitCode.Failure : ExitCode.Ok
  }
  // ...and a child process a tool leaves running does not hold the command open after the answer
  const children = watchToolChildren()
  const shown = program.pipe(
    Effect.ensuring(
      Effect.sync(() => (restoreExit(), restoreStdout(), children.end((line) => console.error(line)), spinner?.stop()))
    ),
    Effect.map(show)
  )
  return runProgram(shown, { command: "run" })
}
