// `smurfs doctor`: checks that the model server is reachable and the model usable, and says what to fix.
import type { ParseArgsOptionsConfig } from "node:util"
import * as Effect from "effect/Effect"
import { type CheckStatus, type DoctorReport, runDoctor } from "../../llm/doctor.ts"
import type { ModelOptions } from "../../llm/spec.ts"
import { checkToolSource, type SourceCheck } from "../../tools/sources/check.ts"
import { ExitCode } from "../exit-codes.ts"
import { defaultModelSpec, resolveModelLayer } from "../model-option.ts"
import { intOption, type ParsedCommand, runCommand } from "../options.ts"
import { runProgram } from "../run-program.ts"
import { routeStdoutToStderr } from "../stdout-guard.ts"

const HELP = `usage: smurfs doctor [--model <spec>] [--tools <source>]... [--timeout <ms>] [--json]

Checks the model setup: the server answers, it has the model, the model supports tool calling,
and it can reply with structured JSON. With --tools, checks each tool source: it loads, lists its
tools and (an MCP server) answers a ping; the model is then checked only when --model is given.
Prints what to do about anything that fails.

options:
  -m, --model <spec>   ollama:<model>, openai:<model>, llama:<file.gguf>, scripted:<file.json> or sim[:options]
                       (default: $SMURFS_MODEL, else ollama:qwen2.5:7b)
  -t, --tools <source> a tool source to check (demo, a module, an api_list .json, "mcp:<command>",
                       mcp+http(s)://<url>); repeat for several
      --mcp-env <NAME[=value]>
                       a variable stdio MCP servers get beside the SDK's safe set (NODE_EXTRA_CA_CERTS,
                       HTTPS_PROXY, a token: NAME passes yours, NAME=value sets one); repeat for more
      --json           print the checks as JSON: { model: { spec, checks, problem? }, tools? }
      --timeout <ms>   how long the test reply may take (default 120000; a cold model loads slowly)
  -h, --help           show this help

environment: OLLAMA_HOST (Ollama's address), OPENAI_BASE_URL and OPENAI_API_KEY (OpenAI-compatible servers),
SMURFS_LLAMA_THREADS and SMURFS_LLAMA_GPU (the embedded llama: engine)

exit codes: 0 all good, 1 the test reply failed, 2 bad usage, 3 invalid model spec or a tool source failed,
4 server unreachable or model missing`

const MARK: Record<CheckStatus, string> = { pass: "✓", warn: "!", fail: "✗", skip: "-" }

/** The report as the terminal shows it. */
export const formatReport = (report: DoctorReport): string => {
  const width = Math.max(...report.checks.map((c) => c.name.length))
  const lines = [`smurfs doctor: ${report.spec}`]
  for (const check of report.checks) {
    lines.push(`  ${MARK[check.status]} ${check.name.padEnd(width)}  ${check.detail}`)
    if (check.advice) lines.push(`    ${" ".repeat(width)}  ${check.advice}`)
  }
  const warned = report.checks.some((c) => c.status === "warn")
  lines.push(
    report.problem
      ? "Something needs fixing: see the ✗ lines above."
      : warned
        ? "Ready for smurfs, with the warnings (!) above."
        : "All good: the model is ready for smurfs."
  )
  return lines.join("\n")
}

/** The tool source checks as the terminal shows them. */
export const formatSourceChecks = (checks: ReadonlyArray<SourceCheck>): string => {
  const lines = ["smurfs doctor: tool sources"]
  for (const check of checks) lines.push(`  ${check.ok ? MARK.pass : MARK.fail} ${check.source}`, `    ${check.detail}`)
  lines.push(
    checks.every((c) => c.ok) ? "All tool sources answer." : "Some tool source needs fixing: see the ✗ lines above."
  )
  return lines.join("\n")
}

export const exitCodeOf = (report: DoctorReport): number => {
  switch (report.problem) {
    case undefined:
      return ExitCode.Ok
    case "bad-spec":
      return ExitCode.BadInput
    case "unavailable":
      return ExitCode.ModelUnavailable
    case "failed":
      return ExitCode.Failure
  }
}

/** The options of `smurfs doctor`, in node:util parseArgs' shape. */
const OPTIONS = {
  model: { type: "string", short: "m" },
  tools: { type: "string", short: "t", multiple: true },
  "mcp-env": { type: "string", multiple: true },
  timeout: { type: "string" },
  json: { type: "boolean" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "doctor", help: HELP, options: OPTIONS } as const

export const run = (argv: string[]): Promise<number> => runCommand(COMMAND, argv, ({ values }) => check(values))

const check = (values: ParsedCommand<typeof OPTIONS>["values"]): Promise<number> => {
  const options: { -readonly [K in keyof ModelOptions]: ModelOptions[K] } = {}
  const timeoutMs = intOption("timeout", values.timeout)
  if (timeoutMs !== undefined) options.timeoutMs = timeoutMs
  const program = Effect.gen(function* () {
    let toolsCode: number = ExitCode.Ok
    let sources: ReadonlyArray<SourceCheck> | undefined
    if (values.tools !== undefined) {
      // a tool module that prints while it loads must not mix into the report (or break --json): it goes to stderr
      const restoreStdout = routeStdoutToStderr()
      sources = yield* Effect.forEach(values.tools, (source) =>
        checkToolSource(source, { mcpEnv: values["mcp-env"] })
      ).pipe(Effect.ensuring(Effect.sync(restoreStdout)))
      if (!values.json) console.log(formatSourceChecks(sources))
      if (sources.some((c) => !c.ok)) toolsCode = ExitCode.BadInput
      if (values.model === undefined) {
        if (values.json) console.log(JSON.stringify({ tools: sources }, null, 2))
        return toolsCode
      }
    }
    const spec = values.model ?? defaultModelSpec()
    const report = yield* runDoctor(spec, resolveModelLayer(spec, options), options)
    if (values.json) console.log(JSON.stringify({ model: report, ...(sources ? { tools: sources } : {}) }, null, 2))
    else console.log(formatReport(report))
    const modelCode = exitCodeOf(report)
    return modelCode !== ExitCode.Ok ? modelCode : toolsCode
  })
  return runProgram(program, { command: "doctor" })
}
