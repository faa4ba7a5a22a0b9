// The help text and options table of `smurfs pull`, light enough to answer --help before the command loads.
import type { ParseArgsOptionsConfig } from "node:util"
import { DEFAULT_MODEL_SOURCE } from "../../llm/model-files/source.ts"

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
