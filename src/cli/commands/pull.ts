// `smurfs pull`: fetch a model for the embedded engine into the model cache ahead of time, and say where it is.
import { statSync } from "node:fs"
import * as Effect from "effect/Effect"
import type { Failure } from "../../failure.ts"
import { defaultModelsDir } from "../../llm/model-files/cache-dir.ts"
import { downloadReporter, formatBytes } from "../../llm/model-files/progress.ts"
import { modelSourceStatus, resolveModelSource } from "../../llm/model-files/source.ts"
import { ExitCode } from "../exit-codes.ts"
import { type ParsedCommand, runCommand, UsageError } from "../options.ts"
import { runProgram } from "../run-program.ts"
import { COMMAND } from "./pull-help.ts"

export { COMMAND }

export const run = (argv: string[]): Promise<number> => runCommand(COMMAND, argv, (parsed) => pull(parsed))

const pull = ({ values, positionals }: ParsedCommand<typeof COMMAND.options>): Promise<number> => {
  if (positionals.length !== 1)
    throw new UsageError(
      positionals.length === 0 ? "name the model to fetch (e.g. smurfs pull llama)" : "give one model spec"
    )
  const spec = positionals[0]!
  const cacheDir = values.models ?? defaultModelsDir()
  const options = { cacheDir, ...(values.offline ? { offline: true } : {}) }
  const before = modelSourceStatus(spec, options)
  const program = Effect.gen(function* () {
    const reporter = downloadReporter({})
    const path = yield* Effect.tryPromise({
      try: (signal) =>
        resolveModelSource(spec, { ...options, signal, onProgress: reporter.onProgress, onWait: reporter.onWait }),
      catch: (e) => e as Failure
    }).pipe(Effect.ensuring(Effect.sync(reporter.stop)))
    const bytes = statSync(path).size
    if (values.json)
      console.log(JSON.stringify({ spec, path, bytes, downloaded: !before.present && before.kind !== "path" }, null, 2))
    else console.log(`${before.present ? "already in the cache" : "ready"}: ${path} (${formatBytes(bytes)})`)
    return ExitCode.Ok
  })
  // an error with no kind (a bug) is reported as one by runProgram, whatever the cast says
  return runProgram(program, { command: "pull" })
}
