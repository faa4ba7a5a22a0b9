// Where an embedded model's file comes from: `llama:<file.gguf>` (the user's path), `hf:<user>/<repo>[/<file>|:<quant>]`,
// `https://...` and bare `llama` (the project's default model). One function turns a source into a local file; the
// downloads, the cache and their errors live in model-files/.
import { statSync } from "node:fs"
import { offlineByEnv } from "./model-files/cache-dir.ts"
import { DownloadUnavailable, ModelSourceInvalid } from "./model-files/errors.ts"
import {
  DEFAULT_MODEL_BYTES,
  DEFAULT_MODEL_SOURCE,
  modelSourceStatus,
  normalizeModelSource,
  parseModelSource,
  resolveModelSource as resolveFile
} from "./model-files/source.ts"

/** Whether the source names something of the machine that reads it (a file), rather than a model anyone can fetch. */
export const isLocalSource = (source: string): boolean => {
  try {
    return parseModelSource(source).kind === "path"
  } catch {
    return false
  }
}

/** The source cannot give a model file (a folder given as the file): what is wrong and what to do. */
export class ModelSourceError extends Error {
  override readonly name = "ModelSourceError"
}

/** Whether an error of `resolveModelSource` is the user's to fix or the network's, with a whole message. */
export const isSourceFailure = (e: unknown): e is DownloadUnavailable | ModelSourceInvalid | ModelSourceError =>
  e instanceof DownloadUnavailable || e instanceof ModelSourceInvalid || e instanceof ModelSourceError

/**
 * The local file of a source. A relative path is the user's, resolved against the working directory; a missing file is
 * ModelSourceInvalid (bad input). A remote source (hf:, https:, the default model) is fetched once into the model
 * cache (`SMURFS_MODELS`): the download is announced with its size and shows its progress on stderr; offline (or with
 * the host unreachable) without the file it is DownloadUnavailable (exit 4), naming the URL and `smurfs pull`.
 */
export const resolveModelSource = async (
  source: string,
  options: { readonly signal?: AbortSignal | undefined; readonly stream?: NodeJS.WriteStream | undefined } = {}
): Promise<string> => {
  const status = modelSourceStatus(source)
  // a file at hand, or offline (the resolver says what to fetch): nothing to announce
  if (status.present || status.kind === "path" || offlineByEnv())
    return checkedFile(await resolveFile(source, { signal: options.signal }))
  // a download: its progress bar (cli-progress) loads only now, never with `import "smurfs"`
  const { downloadReporter, formatBytes } = await import("./model-files/progress.ts")
  const size = normalizeModelSource(source) === DEFAULT_MODEL_SOURCE ? ` (${formatBytes(DEFAULT_MODEL_BYTES)})` : ""
  ;(options.stream ?? process.stderr).write(
    `smurfs: fetching the model ${status.source}${size} once into the model cache${status.path ? ` (${status.path})` : ""}; \`smurfs pull\` fetches it ahead.\n`
  )
  const reporter = downloadReporter({ stream: options.stream })
  try {
    return checkedFile(
      await resolveFile(source, { signal: options.signal, onProgress: reporter.onProgress, onWait: reporter.onWait })
    )
  } finally {
    reporter.stop()
  }
}

const checkedFile = (path: string): string => {
  if (!statSync(path).isFile())
    throw new ModelSourceError(`${path} is not a file: "llama:" takes the path of a .gguf model file.`)
  return path
}
