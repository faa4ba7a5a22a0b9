// Hugging Face as huggingface_hub reaches it: $HF_ENDPOINT for the host, the repo API for file sizes and LFS SHA-256s, `resolve/<revision>/<file>` for the bytes.
import { ModelSourceInvalid } from "./errors.ts"

/** The Hugging Face host: `$HF_ENDPOINT` (a mirror, or a loopback server in tests), else https://huggingface.co. */
export const hfEndpoint = (env: NodeJS.ProcessEnv = process.env): string =>
  (env["HF_ENDPOINT"] || "https://huggingface.co").replace(/\/+$/, "")

/** The Authorization header for gated or private repositories, from `$HF_TOKEN`. */
export const hfHeaders = (env: NodeJS.ProcessEnv = process.env): Record<string, string> =>
  env["HF_TOKEN"] ? { Authorization: `Bearer ${env["HF_TOKEN"]}` } : {}

export type HfRepoType = "model" | "dataset"

/** One file of a repository, as the API lists it with `?blobs=true`. */
export interface HfFile {
  readonly path: string
  readonly size?: number | undefined
  /** The LFS object's SHA-256 (large files: models, archives); absent for a file kept in git itself. */
  readonly sha256?: string | undefined
}

/** The URL of a file's bytes at a revision. */
export const hfFileUrl = (
  repo: string,
  file: string,
  options: { type?: HfRepoType; revision?: string; env?: NodeJS.ProcessEnv } = {}
): string =>
  `${hfEndpoint(options.env)}/${options.type === "dataset" ? "datasets/" : ""}${repo}/resolve/${encodeURIComponent(options.revision ?? "main")}/${file.split("/").map(encodeURIComponent).join("/")}`

/** The URL of a repository's description with each file's size and LFS hash. */
export const hfRepoApiUrl = (
  repo: string,
  options: { type?: HfRepoType; revision?: string; env?: NodeJS.ProcessEnv } = {}
): string =>
  `${hfEndpoint(options.env)}/api/${options.type === "dataset" ? "datasets" : "models"}/${repo}${options.revision && options.revision !== "main" ? `/revision/${encodeURIComponent(options.revision)}` : ""}?blobs=true`

interface Sibling {
  readonly rfilename?: unknown
  readonly size?: unknown
  readonly lfs?: { readonly sha256?: unknown; readonly size?: unknown } | null
}

/** The files of a repository API reply (`siblings`), or undefined when the reply is not one. */
export const parseRepoFiles = (body: unknown): Array<HfFile> | undefined => {
  const siblings = (body as { siblings?: unknown } | null)?.siblings
  if (!Array.isArray(siblings)) return undefined
  return (siblings as Array<Sibling>).flatMap((s) => {
    if (typeof s.rfilename !== "string") return []
    const size = typeof s.lfs?.size === "number" ? s.lfs.size : typeof s.size === "number" ? s.size : undefined
    const sha256 = typeof s.lfs?.sha256 === "string" ? s.lfs.sha256 : undefined
    return [{ path: s.rfilename, ...(size !== undefined ? { size } : {}), ...(sha256 ? { sha256 } : {}) }]
  })
}

/** A parsed `hf:` source: a file of a repository, or the file of a quantization. */
export interface HfSpec {
  readonly repo: string
  readonly file?: string | undefined
  readonly quant?: string | undefined
}

/** The quantization `hf:<user>/<repo>` alone means, as node-llama-cpp reads it. */
export const DEFAULT_QUANT = "Q4_K_M"

/** `hf:<user>/<repo>/<file.gguf>`, `hf:<user>/<repo>:<quant>` or `hf:<user>/<repo>` (its Q4_K_M file). */
export const parseHfSpec = (source: string): HfSpec => {
  const rest = source.replace(/^hf:/, "")
  const [path, quant, ...more] = rest.split(":")
  const parts = (path ?? "").split("/")
  const bad = (problem: string) =>
    new ModelSourceInvalid({
      source,
      problem,
      hint: "Write hf:<user>/<repo>/<file.gguf> or hf:<user>/<repo>:<quant> (e.g. hf:ggml-org/Qwen3-1.7B-GGUF:Q4_K_M)."
    })
  if (more.length > 0 || parts.length < 2 || parts.some((p) => p === "" || p === "." || p === ".."))
    throw bad("not a Hugging Face model reference")
  const repo = `${parts[0]}/${parts[1]}`
  const file = parts.length > 2 ? parts.slice(2).join("/") : undefined
  if (file !== undefined && quant !== undefined) throw bad("give a file or a quantization, not both")
  if (file !== undefined && !file.toLowerCase().endsWith(".gguf")) throw bad(`"${file}" is not a .gguf file`)
  if (quant !== undefined && !/^[A-Za-z0-9_]+$/.test(quant)) throw bad(`"${quant}" is not a quantization name`)
  return file !== undefined ? { repo, file } : { repo, quant: quant ?? DEFAULT_QUANT }
}

const SPLIT = /-\d{5}-of-\d{5}\.gguf$/i

/** Whether a file name is of a quantization: the name, between separators, before `.gguf` (`x-Q4_K_M.gguf`, `x.q4_k_m.gguf`). */
export const isQuantFile = (file: string, quant: string): boolean => {
  const name = file.split("/").pop()!.toLowerCase()
  const q = quant.toLowerCase()
  return name.endsWith(".gguf") && new RegExp(`(^|[-._])${q}([-._]|$)`).test(name.replace(SPLIT, ".gguf").slice(0, -5))
}

/**
 * The file of a quantization among a repository's files: the one whose name says it (the shortest path when
 * several do). A model split in parts is refused with a message (give one file), as is a quantization the
 * repository does not have (the message lists those it has).
 */
export const pickQuantFile = (source: string, files: ReadonlyArray<HfFile>, quant: string): HfFile => {
  const ggufs = files.filter((f) => f.path.toLowerCase().endsWith(".gguf"))
  const matching = ggufs.filter((f) => isQuantFile(f.path, quant)).sort((a, b) => a.path.length - b.path.length)
  const whole = matching.filter((f) => !SPLIT.test(f.path))
  if (whole[0]) return whole[0]
  if (matching.length > 0)
    throw new ModelSourceInvalid({
      source,
      problem: `the ${quant} model is split into ${matching.length} parts, which smurfs does not join`,
      hint: "Choose another quantization, or join the parts with llama.cpp's llama-gguf-split --merge and pass the file's path."
    })
  const names = ggufs.map((f) => f.path)
  throw new ModelSourceInvalid({
    source,
    problem: `the repository has no ${quant} GGUF file`,
    hint:
      names.length === 0
        ? "It has no .gguf files at all: choose a GGUF repository (their names usually end in -GGUF)."
        : `It has: ${names.slice(0, 12).join(", ")}${names.length > 12 ? ", ..." : ""}.`
  })
}
