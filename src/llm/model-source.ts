// Where an embedded model's file comes from: `llama:<file.gguf>` (the user's path), `hf:<user>/<repo>[/<file>|:<quant>]`,
// `https://...` and bare `llama` (the project's default model). One function turns a source into a local file.
import { existsSync, statSync } from "node:fs"
import { resolve } from "node:path"

/** A source as written after `llama:`, read. */
export type ModelSource =
  | { readonly kind: "file"; readonly path: string }
  | { readonly kind: "hf"; readonly reference: string }
  | { readonly kind: "url"; readonly url: string }
  | { readonly kind: "default" }

/** Read the source after `llama:` (empty: the default model). */
export const parseModelSource = (source: string): ModelSource => {
  const text = source.trim()
  if (text === "") return { kind: "default" }
  if (/^hf:/i.test(text)) return { kind: "hf", reference: text.slice(3) }
  if (/^https?:\/\//i.test(text)) return { kind: "url", url: text }
  return { kind: "file", path: text }
}

/** Whether the source names something of the machine that reads it (a file), rather than a model anyone can fetch. */
export const isLocalSource = (source: string): boolean => parseModelSource(source).kind === "file"

/** The source cannot give a model file: what is wrong and what to do. */
export class ModelSourceError extends Error {
  override readonly name = "ModelSourceError"
}

/**
 * The local file of a source. A relative path is the user's, resolved against the working directory. A missing
 * file, or a folder, is a ModelSourceError naming the path. Remote sources (hf:, https:, the default model) are
 * fetched into the model cache by the downloader; without it they are a ModelSourceError saying so.
 */
export const resolveModelSource = async (
  source: string,
  _options: { readonly signal?: AbortSignal | undefined } = {}
): Promise<string> => {
  const parsed = parseModelSource(source)
  if (parsed.kind !== "file")
    throw new ModelSourceError(
      `${parsed.kind === "default" ? "The default model" : `The model "${source}"`} would be downloaded, and this build of smurfs cannot download models yet. Download a GGUF file yourself and run with --model llama:<path/to/file.gguf>.`
    )
  const path = resolve(parsed.path)
  if (!existsSync(path))
    throw new ModelSourceError(`The model file ${path} does not exist. Check the path after "llama:".`)
  if (!statSync(path).isFile())
    throw new ModelSourceError(`${path} is not a file: "llama:" takes the path of a .gguf model file.`)
  return path
}
