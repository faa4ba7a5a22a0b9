// `smurfs doctor`: checks that the model server is reachable and the model usable, and says what to fix.
import { parseArgs } from "node:util"
import { Effect } from "effect"
import { type CheckStatus, type DoctorReport, runDoctor } from "../../llm/doctor.ts"
import type { ModelOptions } from "../../llm/spec.ts"
import { ExitCode } from "../exit-codes.ts"
import { defaultModelSpec, resolveModelLayer } from "../model-option.ts"

const HELP = `usage: smurfs doctor [--model <spec>] [--timeout <ms>]

Checks the model setup: the server answers, it has the model, the model supports tool calling,
and it can reply with structured JSON. Prints what to do about anything that fails.

options:
  -m, --model <spec>   ollama:<model>, openai:<model>, scripted:<file.json> or sim[:options]
                       (default: $SMURFS_MODEL, else ollama:qwen2.5:7b)
      --timeout <ms>   how long the test reply may take (default 120000; a cold model loads slowly)
  -h, --help           show this help

environment: OLLAMA_HOST (Ollama's address), OPENAI_BASE_URL and OPENAI_API_KEY (OpenAI-compatible servers)

exit codes: 0 all good, 1 the test reply failed, 3 invalid model spec, 4 server unreachable or model missing`

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

export const run = async (argv: string[]): Promise<number> => {
  let values: { model?: string | undefined; timeout?: string | undefined; help?: boolean | undefined }
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        model: { type: "string", short: "m" },
        timeout: { type: "string" },
        help: { type: "boolean", short: "h" }
      },
      strict: true,
      allowPositionals: false
    }))
  } catch (e) {
    console.error(`smurfs doctor: ${(e as Error).message}\n\n${HELP}`)
    return ExitCode.Usage
  }
  if (values.help) {
    console.log(HELP)
    return ExitCode.Ok
  }
  const options: { -readonly [K in keyof ModelOptions]: ModelOptions[K] } = {}
  if (values.timeout !== undefined) {
    const ms = Number(values.timeout)
    if (!Number.isInteger(ms) || ms <= 0) {
      console.error(`smurfs doctor: --timeout must be a positive number of milliseconds (got "${values.timeout}")`)
      return ExitCode.Usage
    }
    options.timeoutMs = ms
  }
  const spec = values.model ?? defaultModelSpec()
  const report = await Effect.runPromise(runDoctor(spec, resolveModelLayer(spec, options), options))
  console.log(formatReport(report))
  return exitCodeOf(report)
}
