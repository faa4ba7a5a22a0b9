// `smurfs pull`: fetch a model for the embedded engine into the model cache ahead of time, and say where it is.
import { statSync } from "node:fs"
import type { ParseArgsOptionsConfig } from "node:util"
import * as Effect from "effect/Effect"
import type { Failure } from "../../failure.ts"
import { defaultModelsDir } from "../../llm/model-files/cache-dir.ts"
import { downloadReporter, formatBytes } from "../../llm/model-files/progress.ts"
import { DEFAULT_MODEL_SOURCE, modelSourceStatus, resolveModelSource } from "../../llm/model-files/source.ts"
import { ExitCode } from "../exit-codes.ts"
import { type ParsedCommand, runCommand, UsageError } from "../options.ts"
import { runProgram } from "../run-program.ts"

const HELP = `usage: smurfs pull <spec> [--models <dir>] [--offline] [--json]

Fetch a model for the embedded engine (--model llama:<spec>) into the model cache ahead of time and print
where it is. A model already in the cache is not fetched again (and no request is made); an interrupted
download resumes where it stopped; two downloads of one file wait for each other. The file is checked
(size, SHA-256 where Hugging Face gives it, the GGUF header) before it is kept.

spec:
  llama                          the default model (${DEFAULT_MODEL_SOURCE}, 1.28 GB)
  hf:<user>/<repo>:<quant>       the file of that quantization in a Hugging Face repository (e.g. Q4_K_M)
  hf:<user>/<repo>/<file.gguf>   one file of a Hugging Face repository
  https://.../<file.gguf>        any URL
  (a "llama:" prefix, as --model takes it, is accepted)

options:
      --models <dir>   the model cache folder (default $SMURFS_MODELS, else ~/.cache/smurfs/models;
                       ~/Library/Caches/smurfs/models on macOS, %LOCALAPPDATA%\\smurfs\\Cache\\models on Windows)
      --offline        make no request: succeed only if the model is in the cache (also SMURFS_OFFLINE=1)
      --json           print { spec, path, bytes, downloaded } as JSON
  -h, --help           show this help

environment: HF_ENDPOINT (a Hugging Face mirror), HF_TOKEN (gated repositories), SMURFS_MODELS,
SMURFS_OFFLINE or HF_HUB_OFFLINE (no network)

exit codes: 0 the model is in the cache, 2 bad usage, 3 a malformed spec, a missing file or quantization,
4 unavailable (offline without it, host unreachable, refused, a corrupt download), 130 interrupted`

const OPTIONS = {
  models: { type: "string" },
  offline: { type: "boolean" },
  json: { type: "boolean" }
} as const satisfies ParseArgsOptionsConfig

export const COMMAND = { name: "pull", help: HELP, options: OPTIONS, positionals: true } as const

export const run = (argv: string[]): Promise<number> => runCommand(COMMAND, argv, (parsed) => pull(parsed))

const pull = ({ values, positionals }: ParsedCommand<typeof OPTIONS>): Promise<number> => {
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
