// A `llama:` model source to the path of a GGUF file: the user's own file, or one fetched once into the model cache (Hugging Face, any https URL, the default model).
import { createHash } from "node:crypto"
import { existsSync, readdirSync, statSync } from "node:fs"
import { basename, join, resolve } from "node:path"
import { defaultModelsDir, offlineByEnv } from "./cache-dir.ts"
import { type DownloadProgress, downloadFile } from "./download.ts"
import { DownloadUnavailable, ModelSourceInvalid } from "./errors.ts"
import {
  type HfFile,
  type HfSpec,
  hfEndpoint,
  hfFileUrl,
  hfHeaders,
  hfRepoApiUrl,
  isQuantFile,
  parseHfSpec,
  parseRepoFiles,
  pickQuantFile
} from "./hf.ts"

/**
 * The project's default embedded model (`--model llama`): Qwen3-1.7B, Apache-2.0, trained for tool calling, in
 * llama.cpp's own GGUF conversion at Q4_K_M (1.28 GB). Why this one: docs/models.md, "The default embedded model".
 */
export const DEFAULT_MODEL_SOURCE = "hf:ggml-org/Qwen3-1.7B-GGUF:Q4_K_M"

/** The default model's download size as its repository reports it, to announce before the first download. */
export const DEFAULT_MODEL_BYTES = 1_280_000_000

/** The magic bytes every GGUF file starts with. */
export const GGUF_MAGIC = "GGUF"

export interface ResolveOptions {
  /** The model cache folder (default: `$SMURFS_MODELS`, else the user's cache folder: `defaultModelsDir()`). */
  readonly cacheDir?: string | undefined
  /** Use no network at all: a file not in the cache is an error that says how to fetch it (default: `SMURFS_OFFLINE`/`HF_HUB_OFFLINE`). */
  readonly offline?: boolean | undefined
  readonly signal?: AbortSignal | undefined
  readonly onProgress?: ((progress: DownloadProgress) => void) | undefined
  /** Told when another process is downloading the same file and this one waits for it. */
  readonly onWait?: ((holder: { pid: number; host: string }) => void) | undefined
  /** Where a relative path is resolved (the working directory). */
  readonly cwd?: string | undefined
  /** Read for HF_ENDPOINT, HF_TOKEN and the offline switches (default: process.env). */
  readonly env?: NodeJS.ProcessEnv | undefined
  /** Requests tried per download before giving up (default 6); tests lower it. */
  readonly attempts?: number | undefined
  /** The pause before retry n (default 0.5 s doubling); tests shorten it. */
  readonly retryDelayMs?: ((attempt: number) => number) | undefined
  readonly fetch?: typeof fetch | undefined
}

/** What a source names, before anything is fetched. */
export type ModelSource =
  | { readonly kind: "path"; readonly path: string }
  | { readonly kind: "hf"; readonly spec: HfSpec }
  | { readonly kind: "url"; readonly url: string }

/** The source as the user wrote it, with `llama` (alone) read as the default model and a `llama:` prefix dropped. */
export const normalizeModelSource = (source: string): string => {
  const s = source.trim().replace(/^llama:/, "")
  return s === "" || s === "llama" || s === "default" ? DEFAULT_MODEL_SOURCE : s
}

/** Parse a source: `hf:...`, an http(s) URL, or a file path. Throws ModelSourceInvalid for a malformed hf: spec. */
export const parseModelSource = (source: string, cwd: string = process.cwd()): ModelSource => {
  const s = normalizeModelSource(source)
  if (s.startsWith("hf:")) return { kind: "hf", spec: parseHfSpec(s) }
  if (/^https?:\/\//i.test(s)) return { kind: "url", url: s }
  return { kind: "path", path: resolve(cwd, s) }
}

const isPartial = (name: string) => /\.(part|lock)$|\.lock\.stale-/.test(name)

const filesUnder = (dir: string, prefix = ""): Array<string> => {
  let entries: Array<string>
  try {
    entries = readdirSync(dir)
  } catch {
    return []
  }
  return entries.flatMap((name) => {
    const path = join(dir, name)
    const rel = prefix ? `${prefix}/${name}` : name
    try {
      return statSync(path).isDirectory() ? filesUnder(path, rel) : [rel]
    } catch {
      return []
    }
  })
}

/** Where a source's file is (or would be) in the cache, the URL it comes from, and whether it is there now. No network. */
export interface ModelSourceStatus {
  readonly source: string
  readonly kind: ModelSource["kind"]
  /** The file's path: the user's own, the cached file, or where the download will put it (unknown for a quant not yet listed). */
  readonly path?: string | undefined
  readonly present: boolean
  /** Where the bytes come from (the repository page for a quant not yet listed). */
  readonly url?: string | undefined
}

const hfDir = (cacheDir: string, repo: string) => join(cacheDir, "hf", ...repo.split("/"))

const urlPath = (cacheDir: string, url: string) => {
  const name = basename(new URL(url).pathname) || "model.gguf"
  return join(cacheDir, "url", createHash("sha256").update(url).digest("hex").slice(0, 16), name)
}

/** The cached file of an hf spec, if one is there: the named file, or a file of the quantization. */
const cachedHf = (cacheDir: string, spec: HfSpec): string | undefined => {
  const dir = hfDir(cacheDir, spec.repo)
  if (spec.file !== undefined) return existsSync(join(dir, spec.file)) ? join(dir, spec.file) : undefined
  const found = filesUnder(dir)
    .filter((f) => !isPartial(f) && isQuantFile(f, spec.quant!))
    .sort((a, b) => a.length - b.length)[0]
  return found === undefined ? undefined : join(dir, found)
}

/** Where a source stands, without touching the network (for `smurfs doctor` and the announcement of a download). */
export const modelSourceStatus = (source: string, options: ResolveOptions = {}): ModelSourceStatus => {
  const cacheDir = options.cacheDir ?? defaultModelsDir(options.env)
  const parsed = parseModelSource(source, options.cwd)
  const s = normalizeModelSource(source)
  switch (parsed.kind) {
    case "path":
      return { source: s, kind: "path", path: parsed.path, present: existsSync(parsed.path) }
    case "url": {
      const path = urlPath(cacheDir, parsed.url)
      return { source: s, kind: "url", path, present: existsSync(path), url: parsed.url }
    }
    case "hf": {
      const { spec } = parsed
      const cached = cachedHf(cacheDir, spec)
      const env = options.env
      if (cached) return { source: s, kind: "hf", path: cached, present: true }
      return spec.file !== undefined
        ? {
            source: s,
            kind: "hf",
            path: join(hfDir(cacheDir, spec.repo), spec.file),
            present: false,
            url: hfFileUrl(spec.repo, spec.file, { env })
          }
        : { source: s, kind: "hf", present: false, url: `${hfEndpoint(env)}/${spec.repo}` }
    }
  }
}

/** The command that fetches a source ahead of time. */
export const pullCommand = (source: string): string => `smurfs pull ${source.trim() === "" ? "llama" : source.trim()}`

/** A repository's files from the Hugging Face API, or undefined when the host gives no usable listing (a plain mirror). */
const listRepo = async (
  source: string,
  spec: HfSpec,
  options: ResolveOptions,
  cacheDir: string
): Promise<ReadonlyArray<HfFile> | undefined> => {
  const repo = spec.repo
  const url = hfRepoApiUrl(repo, { env: options.env })
  const dir = hfDir(cacheDir, repo)
  // by hand, the model file itself is what to fetch, not the listing
  const byHand =
    spec.file !== undefined
      ? `download ${hfFileUrl(repo, spec.file, { env: options.env })} by hand to ${join(dir, spec.file)}`
      : `download its ${spec.quant} .gguf file from ${hfEndpoint(options.env)}/${repo}/tree/main by hand into ${dir}`
  let response: Response
  try {
    response = await (options.fetch ?? fetch)(url, {
      headers: { Accept: "application/json", ...hfHeaders(options.env) },
      ...(options.signal ? { signal: options.signal } : {})
    })
  } catch (e) {
    options.signal?.throwIfAborted()
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message
    throw new DownloadUnavailable({
      problem: "unreachable",
      url,
      path: dir,
      detail: cause,
      fetchCommand: pullCommand(source),
      byHand
    })
  }
  if (response.status === 404 || response.status === 401)
    throw new ModelSourceInvalid({
      source,
      problem: `Hugging Face has no repository ${repo} (HTTP ${response.status} from ${url})`,
      hint: "Check the spelling (user/repo, as in the repository's address); a private or gated one needs HF_TOKEN set."
    })
  if (!response.ok) {
    await response.body?.cancel()
    throw new DownloadUnavailable({
      problem: "http",
      url,
      path: dir,
      byHand,
      detail: `HTTP ${response.status}${response.status === 403 ? ": a gated repository needs HF_TOKEN and its terms accepted" : ""}`,
      fetchCommand: pullCommand(source)
    })
  }
  try {
    return parseRepoFiles(await response.json())
  } catch {
    return undefined
  }
}

/**
 * The local path of the GGUF file a source names, fetching it into the cache the first time:
 * - a file path (relative to `cwd`): returned as is when it exists (a missing one is bad input, exit 3);
 * - `hf:<user>/<repo>/<file.gguf>` or `hf:<user>/<repo>[:<quant>]`: the repository is listed through the API
 *   (`$HF_ENDPOINT`) for the file of the quantization, its size and SHA-256, then downloaded and checked;
 * - `https://.../x.gguf`: downloaded, checked against the size the server announces and the GGUF magic;
 * - `llama` (or empty): the default model, `DEFAULT_MODEL_SOURCE`.
 * A file already in the cache is returned with no request at all. Offline without it, or with its host unreachable,
 * it fails with DownloadUnavailable (exit 4), whose message has the URL and the `smurfs pull` command.
 */
export const resolveModelSource = async (source: string, options: ResolveOptions = {}): Promise<string> => {
  const cacheDir = options.cacheDir ?? defaultModelsDir(options.env)
  const offline = options.offline ?? offlineByEnv(options.env)
  const parsed = parseModelSource(source, options.cwd)
  const display = source.trim() === "" ? "llama" : source.trim().replace(/^llama:/, "")
  const fetchCommand = pullCommand(display)
  const download = (url: string, path: string, expected: { size?: number | undefined; sha256?: string | undefined }) =>
    downloadFile({
      url,
      path,
      expected: { ...expected, magic: GGUF_MAGIC, magicName: "a GGUF model" },
      headers: url.startsWith(hfEndpoint(options.env)) ? hfHeaders(options.env) : {},
      signal: options.signal,
      onProgress: options.onProgress,
      onWait: options.onWait,
      fetchCommand,
      attempts: options.attempts,
      retryDelayMs: options.retryDelayMs,
      fetch: options.fetch
    }).then((d) => d.path)
  switch (parsed.kind) {
    case "path":
      if (existsSync(parsed.path)) return parsed.path
      throw new ModelSourceInvalid({
        source: display,
        problem: `no such file (${parsed.path})`,
        hint: "Give the path of a .gguf file, hf:<user>/<repo>:<quant>, an https URL, or `llama` for the default model."
      })
    case "url": {
      const path = urlPath(cacheDir, parsed.url)
      if (existsSync(path)) return path
      if (offline) throw new DownloadUnavailable({ problem: "offline", url: parsed.url, path, fetchCommand })
      return download(parsed.url, path, {})
    }
    case "hf": {
      const { spec } = parsed
      const cached = cachedHf(cacheDir, spec)
      if (cached) return cached
      const dir = hfDir(cacheDir, spec.repo)
      if (offline) {
        const status = modelSourceStatus(source, options)
        throw new DownloadUnavailable({
          problem: "offline",
          url: status.url!,
          path: status.path ?? dir,
          fetchCommand,
          ...(spec.quant !== undefined
            ? { byHand: `download its ${spec.quant} .gguf file from ${status.url}/tree/main by hand into ${dir}` }
            : {})
        })
      }
      const files = await listRepo(display, spec, options, cacheDir)
      let file: HfFile
      if (spec.file !== undefined) {
        const listed = files?.find((f) => f.path === spec.file)
        if (files !== undefined && listed === undefined) {
          const ggufs = files.filter((f) => f.path.toLowerCase().endsWith(".gguf")).map((f) => f.path)
          throw new ModelSourceInvalid({
            source: display,
            problem: `${spec.repo} has no file ${spec.file}`,
            hint: ggufs.length > 0 ? `It has: ${ggufs.slice(0, 12).join(", ")}.` : "It has no .gguf files."
          })
        }
        file = listed ?? { path: spec.file }
      } else {
        if (files === undefined)
          throw new DownloadUnavailable({
            problem: "http",
            url: hfRepoApiUrl(spec.repo, { env: options.env }),
            path: dir,
            detail: "the host gave no file listing, so the quantization cannot be chosen; name the file instead",
            fetchCommand: `smurfs pull hf:${spec.repo}/<file.gguf>`
          })
        file = pickQuantFile(display, files, spec.quant!)
      }
      return download(hfFileUrl(spec.repo, file.path, { env: options.env }), join(dir, file.path), {
        size: file.size,
        sha256: file.sha256
      })
    }
  }
}
