// `smurfs data pull`: benchmark data fetched once into a folder in the layout --data, --stb and --tau2 read; a second pull makes no request.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { mkdir, rename, rm, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import * as Data from "effect/Data"
import type { FailureKind } from "../../src/failure.ts"
import { offlineByEnv } from "../../src/llm/model-files/cache-dir.ts"
import { type DownloadProgress, downloadFile } from "../../src/llm/model-files/download.ts"
import { DownloadUnavailable } from "../../src/llm/model-files/errors.ts"
import { hfFileUrl, hfHeaders, hfRepoApiUrl, parseRepoFiles } from "../../src/llm/model-files/hf.ts"
import { type DownloadReporter, formatBytes } from "../../src/llm/model-files/progress.ts"
import { type DataPiece, type GithubFiles, githubUrl, type HfArchive } from "./sources.ts"
import { archiveFormat, findFolder, unpack } from "./unpack.ts"

/** The record of what a folder holds from earlier pulls: a piece listed here is not fetched again. */
export const STATE_FILE = ".smurfs-data.json"

interface State {
  readonly pieces: Record<string, { readonly what: string; readonly from: string; readonly at: string }>
}

/** A file to fetch by hand: from where, to where. */
export interface Missing {
  readonly url: string
  readonly path: string
}

/** Data that could not be fetched (offline, or its host unreachable): the message lists every URL to fetch by hand. Exit 4. */
export class DataUnavailable extends Data.TaggedError("DataUnavailable")<{
  readonly dest: string
  readonly missing: ReadonlyArray<Missing>
  readonly reason: string
  readonly command: string
}> {
  get kind(): FailureKind {
    return "unavailable"
  }
  override get message() {
    const shown = this.missing.slice(0, 40).map((m) => `  ${m.url}\n    -> ${m.path}`)
    return [
      `${this.reason}; ${this.missing.length} file${this.missing.length === 1 ? " is" : "s are"} not in ${this.dest} yet.`,
      `Run \`${this.command}\` where the network is reachable, or fetch ${this.missing.length === 1 ? "it" : "them"} by hand to the paths shown (an archive put there is unpacked by the next pull, which can be --offline):`,
      ...shown,
      ...(this.missing.length > shown.length ? [`  ... and ${this.missing.length - shown.length} more`] : [])
    ].join("\n")
  }
}

export interface PullOptions {
  /** The folder the data goes into (created). */
  readonly dest: string
  readonly pieces: ReadonlyArray<DataPiece>
  /** The command that repeats this pull, for messages. */
  readonly command: string
  /** No request at all: succeed only when every piece is there (default: SMURFS_OFFLINE / HF_HUB_OFFLINE). */
  readonly offline?: boolean | undefined
  /** Read for HF_ENDPOINT, HF_TOKEN, SMURFS_GITHUB_RAW and the offline switches. */
  readonly env?: NodeJS.ProcessEnv | undefined
  readonly signal?: AbortSignal | undefined
  /** A progress reporter for a download (a bar on a terminal, lines otherwise). */
  readonly reporter?: ((label: string) => DownloadReporter) | undefined
  /** A line of news: a piece already there, an archive unpacked. */
  readonly say?: ((line: string) => void) | undefined
  readonly attempts?: number | undefined
  readonly retryDelayMs?: ((attempt: number) => number) | undefined
  readonly fetch?: typeof fetch | undefined
}

export interface PieceOutcome {
  readonly name: string
  readonly what: string
  readonly licence: string
  /** `fetched` now, or `present` from an earlier pull (no request made). */
  readonly status: "fetched" | "present"
}

const readState = (dest: string): State => {
  try {
    const state = JSON.parse(readFileSync(join(dest, STATE_FILE), "utf8")) as State
    return typeof state.pieces === "object" && state.pieces !== null ? state : { pieces: {} }
  } catch {
    return { pieces: {} }
  }
}

const archiveUrl = (a: HfArchive, env?: NodeJS.ProcessEnv) =>
  hfFileUrl(a.repo, a.file, { type: "dataset", revision: a.revision, env })

/** The files of a piece not in `dest` yet (an archive counts as missing until it is unpacked and recorded). */
const missingOf = (piece: DataPiece, dest: string, state: State, env?: NodeJS.ProcessEnv): Array<Missing> => {
  const source = piece.source
  if (source.kind === "github")
    return source.files
      .map((f) => ({ url: githubUrl(source, f.path, env), path: join(dest, source.at?.(f.path) ?? f.path) }))
      .filter((m) => !existsSync(m.path))
  const done =
    state.pieces[piece.name] !== undefined && source.place.every((p) => p.optional || existsSync(join(dest, p.to)))
  return done ? [] : [{ url: archiveUrl(source, env), path: join(dest, ".downloads", source.file) }]
}

/** Downloads of several small files shown as one: bytes of all of them. */
const aggregate = (reporter: DownloadReporter | undefined, total: number | undefined) => {
  const received = new Map<string, number>()
  let resumedFrom = 0
  return (p: DownloadProgress) => {
    if (p.done) {
      received.set(p.path, p.received)
      return
    }
    if (!received.has(p.path)) resumedFrom += p.resumedFrom
    received.set(p.path, p.received)
    const sum = [...received.values()].reduce((a, b) => a + b, 0)
    reporter?.onProgress({ url: p.url, path: p.path, received: sum, total, resumedFrom, done: false })
  }
}

const pullGithub = async (piece: DataPiece, source: GithubFiles, options: PullOptions) => {
  const env = options.env
  const todo = source.files.filter((f) => !existsSync(join(options.dest, source.at?.(f.path) ?? f.path)))
  const sizes = todo.map((f) => f.size)
  const total = sizes.every((s) => s !== undefined) ? sizes.reduce((a, b) => a! + b!, 0) : undefined
  const reporter = options.reporter?.(`${piece.name} (${todo.length} file${todo.length === 1 ? "" : "s"})`)
  const onProgress = aggregate(reporter, total)
  let bytes = 0
  try {
    for (const f of todo) {
      const d = await downloadFile({
        url: githubUrl(source, f.path, env),
        path: join(options.dest, source.at?.(f.path) ?? f.path),
        expected: { size: f.size, gitBlobSha1: f.gitBlobSha1 },
        signal: options.signal,
        onProgress,
        onWait: reporter?.onWait,
        fetchCommand: options.command,
        attempts: options.attempts,
        retryDelayMs: options.retryDelayMs,
        fetch: options.fetch
      })
      bytes += d.bytes
    }
    reporter?.onProgress({ url: "", path: "", received: bytes, total: bytes, resumedFrom: 0, done: true })
  } finally {
    reporter?.stop()
  }
}

const pullArchive = async (piece: DataPiece, source: HfArchive, options: PullOptions) => {
  const env = options.env
  const url = archiveUrl(source, env)
  const downloads = join(options.dest, ".downloads")
  const archive = join(downloads, source.file)
  // the size and SHA-256 Hugging Face lists for the archive (absent from a mirror without the API: the size the server announces is checked)
  let expected: { size?: number; sha256?: string } = {}
  if (!existsSync(archive)) {
    const api = hfRepoApiUrl(source.repo, { type: "dataset", revision: source.revision, env })
    let response: Response
    try {
      response = await (options.fetch ?? fetch)(api, {
        headers: { Accept: "application/json", ...hfHeaders(env) },
        ...(options.signal ? { signal: options.signal } : {})
      })
    } catch (e) {
      options.signal?.throwIfAborted()
      throw new DownloadUnavailable({
        problem: "unreachable",
        url: api,
        path: archive,
        detail: (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message,
        fetchCommand: options.command
      })
    }
    if (response.ok) {
      const listed = parseRepoFiles(await response.json().catch(() => undefined))?.find((f) => f.path === source.file)
      expected = {
        ...(listed?.size !== undefined ? { size: listed.size } : {}),
        ...(listed?.sha256 ? { sha256: listed.sha256 } : {})
      }
    } else await response.body?.cancel()
  }
  const reporter = options.reporter?.(source.file)
  try {
    await downloadFile({
      url,
      path: archive,
      expected,
      headers: hfHeaders(env),
      signal: options.signal,
      onProgress: reporter?.onProgress,
      onWait: reporter?.onWait,
      fetchCommand: options.command,
      attempts: options.attempts,
      retryDelayMs: options.retryDelayMs,
      fetch: options.fetch
    })
  } finally {
    reporter?.stop()
  }
  const format = archiveFormat(source.file)
  const staging = join(downloads, `${piece.name}.unpacked`)
  await rm(staging, { recursive: true, force: true })
  if (format === undefined) throw new Error(`${source.file} is not an archive smurfs can unpack`)
  options.say?.(`unpacking ${source.file} ...`)
  let unpacked: { files: number; bytes: number }
  try {
    unpacked = await unpack(archive, staging, format)
  } catch (e) {
    // a damaged archive is downloaded again next time
    await rm(archive, { force: true })
    await rm(staging, { recursive: true, force: true })
    throw new DownloadUnavailable({
      problem: "corrupt",
      url,
      path: archive,
      detail: `it cannot be unpacked: ${(e as Error).message}`,
      fetchCommand: options.command
    })
  }
  for (const place of source.place) {
    let from: string | undefined
    if (place.folder === ".") {
      // an archive of one folder: that folder is the content
      const top = readdirSync(staging).filter((n) => n !== "__MACOSX")
      from = top.length === 1 && statSync(join(staging, top[0]!)).isDirectory() ? join(staging, top[0]!) : staging
    } else from = await findFolder(staging, place.folder)
    if (from === undefined) {
      if (place.optional) continue
      throw new DownloadUnavailable({
        problem: "corrupt",
        url,
        path: archive,
        detail: `it has no ${place.folder}/ folder`,
        fetchCommand: options.command
      })
    }
    const to = join(options.dest, place.to)
    await rm(to, { recursive: true, force: true })
    await mkdir(dirname(to), { recursive: true })
    await rename(from, to)
  }
  options.say?.(`${source.file}: ${unpacked.files} files (${formatBytes(unpacked.bytes)}) unpacked`)
  await rm(staging, { recursive: true, force: true })
  await rm(archive, { force: true })
}

/**
 * Fetch each piece not yet in `dest`: GitHub files at their pinned commit (checked by size and git blob id),
 * Hugging Face archives (checked by the size and SHA-256 its API lists) unpacked into their place. Each download
 * resumes an interrupted one and waits for another process fetching the same file. A piece already there
 * (recorded in `.smurfs-data.json`, its files present) is not fetched again: a second pull makes no request.
 * Offline, or with a host unreachable, it fails with DataUnavailable listing every URL still to fetch.
 */
export const pullData = async (options: PullOptions): Promise<Array<PieceOutcome>> => {
  const { dest, env } = options
  const offline = options.offline ?? offlineByEnv(env)
  await mkdir(dest, { recursive: true })
  const state = readState(dest)
  const missingAll = () => options.pieces.flatMap((p) => missingOf(p, dest, readState(dest), env))
  if (offline) {
    // an archive already downloaded (by hand, to the path the message gave) is unpacked with no request
    const missing = missingAll().filter((m) => !existsSync(m.path))
    if (missing.length > 0)
      throw new DataUnavailable({ dest, missing, reason: "offline (no request made)", command: options.command })
  }
  const outcomes: Array<PieceOutcome> = []
  for (const piece of options.pieces) {
    const status = missingOf(piece, dest, state, env).length === 0 ? "present" : "fetched"
    if (status === "fetched") {
      try {
        if (piece.source.kind === "github") await pullGithub(piece, piece.source, options)
        else await pullArchive(piece, piece.source, options)
      } catch (e) {
        if (e instanceof DownloadUnavailable && (e.problem === "unreachable" || e.problem === "offline"))
          throw new DataUnavailable({
            dest,
            missing: missingAll(),
            reason: `cannot download ${e.url}${e.detail ? ` (${e.detail})` : ""}`,
            command: options.command
          })
        throw e
      }
      state.pieces[piece.name] = {
        what: piece.what,
        from:
          piece.source.kind === "github"
            ? `https://github.com/${piece.source.owner}/${piece.source.repo}/tree/${piece.source.commit}`
            : `https://huggingface.co/datasets/${piece.source.repo}/blob/${piece.source.revision}/${piece.source.file}`,
        at: new Date().toISOString()
      }
      // written aside and renamed: a kill leaves the old record or the new one
      await writeFile(join(dest, `${STATE_FILE}.tmp`), `${JSON.stringify(state, null, 2)}\n`)
      await rename(join(dest, `${STATE_FILE}.tmp`), join(dest, STATE_FILE))
    } else options.say?.(`${piece.name}: already there`)
    outcomes.push({ name: piece.name, what: piece.what, licence: piece.licence, status })
  }
  await rm(join(dest, ".downloads"), { recursive: true, force: true }).catch(() => {})
  return outcomes
}
