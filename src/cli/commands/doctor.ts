// `smurfs doctor`: checks that the model server is reachable and the model usable, and says what to fix.
import * as Effect from "effect/Effect"
import { type CheckStatus, type DoctorReport, runDoctor } from "../../llm/doctor.ts"
import type { ModelOptions } from "../../llm/spec.ts"
import { checkToolSource, type SourceCheck } from "../../tools/sources/check.ts"
import { ExitCode } from "../exit-codes.ts"
import { defaultModelSpec, resolveModelLayer } from "../model-option.ts"
import { intOption, type ParsedCommand, runCommand } from "../options.ts"
import { runProgram } from "../run-program.ts"
import { routeStdoutToStderr } from "../stdout-guard.ts"
import { COMMAND } from "./doctor-help.ts"

export { COMMAND }

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

export const run = (argv: string[]): Promise<number> => runCommand(COMMAND, argv, ({ values }) => check(values))

const check = (values: ParsedCommand<typeof COMMAND.options>["values"]): Promise<number> => {
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
