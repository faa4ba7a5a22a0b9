// One file over HTTP into place: a lock against a second download, resume from a `.part` file with Range, size and checksums verified, an atomic rename.
import { createHash } from "node:crypto"
import { createReadStream, existsSync } from "node:fs"
import { mkdir, open, rename, stat, unlink } from "node:fs/promises"
import { dirname } from "node:path"
import { DownloadUnavailable } from "./errors.ts"
import { withLock } from "./lock.ts"

/** What the file must be, where known; a file that differs is refused and not kept. */
export interface Expected {
  /** Its size in bytes (Hugging Face's reported size, a manifest's). */
  readonly size?: number | undefined
  /** Its SHA-256, lowercase hex (a Hugging Face LFS file's `lfs.sha256`). */
  readonly sha256?: string | undefined
  /** Its git blob SHA-1 (`git ls-tree`'s object id: a GitHub file at a pinned commit). */
  readonly gitBlobSha1?: string | undefined
  /** The bytes it starts with (`GGUF` for a model). */
  readonly magic?: string | undefined
  /** What the magic means, for the message ("a GGUF model"). */
  readonly magicName?: string | undefined
}

/** How far a download is: bytes on disk (resumed ones included) of the total, when the server or manifest says it. */
export interface DownloadProgress {
  readonly url: string
  readonly path: string
  readonly received: number
  readonly total?: number | undefined
  /** Bytes already on disk from an earlier, interrupted download. */
  readonly resumedFrom: number
  /** The file is in place. */
  readonly done: boolean
}

export interface DownloadOptions {
  readonly url: string
  /** Where the file goes; `<path>.part` holds it while it arrives, `<path>.lock` guards it. */
  readonly path: string
  readonly expected?: Expected | undefined
  /** Extra request headers (Authorization for Hugging Face; never sent to another host after a redirect). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly signal?: AbortSignal | undefined
  readonly onProgress?: ((progress: DownloadProgress) => void) | undefined
  /** Told when another process is downloading the same file and this one waits for it. */
  readonly onWait?: ((holder: { pid: number; host: string }) => void) | undefined
  /** Requests tried before giving up, each resuming where the last stopped: 6. */
  readonly attempts?: number | undefined
  /** A body that sends nothing for this long is dropped and resumed: 60 s. */
  readonly idleTimeoutMs?: number | undefined
  /** The pause before attempt n (1-based) after a failure: 0.5 s, doubling, at most 8 s. */
  readonly retryDelayMs?: ((attempt: number) => number) | undefined
  /** How a lock unrefreshed for this long is judged stale (its holder died): 30 s. */
  readonly lockStaleMs?: number | undefined
  /** The command that fetches the file ahead, for the error message. */
  readonly fetchCommand?: string | undefined
  readonly fetch?: typeof fetch | undefined
}

export interface Downloaded {
  readonly path: string
  /** False when the file was there already (or another process fetched it while this one waited). */
  readonly downloaded: boolean
  readonly bytes: number
}

const sizeOf = async (path: string): Promise<number> => {
  try {
    return (await stat(path)).size
  } catch {
    return 0
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort)
      resolve()
    }, ms)
    const abort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener("abort", abort, { once: true })
  })

/** The problem with a file against what it must be, or undefined when it is right. */
export const verifyFile = async (path: string, expected: Expected): Promise<string | undefined> => {
  const size = await sizeOf(path)
  if (expected.size !== undefined && size !== expected.size) return `${size} bytes where ${expected.size} were expected`
  if (expected.magic !== undefined) {
    const handle = await open(path, "r")
    try {
      const head = Buffer.alloc(expected.magic.length)
      await handle.read(head, 0, head.length, 0)
      if (head.toString("latin1") !== expected.magic)
        return `it does not start with "${expected.magic}", so it is not ${expected.magicName ?? "the expected file"}`
    } finally {
      await handle.close()
    }
  }
  if (expected.sha256 === undefined && expected.gitBlobSha1 === undefined) return undefined
  const sha256 = expected.sha256 ? createHash("sha256") : undefined
  const sha1 = expected.gitBlobSha1 ? createHash("sha1").update(`blob ${size}\0`) : undefined
  for await (const chunk of createReadStream(path)) {
    sha256?.update(chunk as Buffer)
    sha1?.update(chunk as Buffer)
  }
  const got256 = sha256?.digest("hex")
  if (got256 !== undefined && got256 !== expected.sha256!.toLowerCase())
    return `SHA-256 ${got256} where ${expected.sha256} was expected`
  const got1 = sha1?.digest("hex")
  if (got1 !== undefined && got1 !== expected.gitBlobSha1!.toLowerCase())
    return `git blob SHA-1 ${got1} where ${expected.gitBlobSha1} was expected`
  return undefined
}

/** The total size a response announces: Content-Range's total for a 206, Content-Length for a 200. */
const announcedTotal = (response: Response, offset: number): number | undefined => {
  if (response.status === 206) {
    const total = /\/(\d+)\s*$/.exec(response.headers.get("content-range") ?? "")?.[1]
    return total === undefined ? undefined : Number(total)
  }
  const length = response.headers.get("content-length")
  return length === null ? undefined : Number(length) + offset
}

const describe = (e: unknown): string => {
  const error = e as { message?: string; cause?: { code?: string; message?: string } }
  return error.cause?.code ?? error.cause?.message ?? error.message ?? String(e)
}

/**
 * Download `url` to `path` unless it is there. Another process downloading the same file is waited for (its lock);
 * an interrupted download resumes from `<path>.part` with an HTTP Range request, in this call (up to `attempts`)
 * and in the next one; the file is checked against `expected` and against the size the server announced before it
 * is renamed into place, and a corrupt one is deleted.
 */
export const downloadFile = async (options: DownloadOptions): Promise<Downloaded> => {
  const { url, path, signal } = options
  if (existsSync(path)) return { path, downloaded: false, bytes: await sizeOf(path) }
  await mkdir(dirname(path), { recursive: true })
  return withLock(
    `${path}.lock`,
    { staleMs: options.lockStaleMs, onWait: options.onWait, signal },
    async (): Promise<Downloaded> => {
      // the process we waited for may have fetched it
      if (existsSync(path)) return { path, downloaded: false, bytes: await sizeOf(path) }
      const part = `${path}.part`
      const attempts = options.attempts ?? 6
      const delay = options.retryDelayMs ?? ((n: number) => Math.min(8000, 500 * 2 ** (n - 1)))
      const doFetch = options.fetch ?? fetch
      const expected = options.expected ?? {}
      const error = (problem: "unreachable" | "http" | "corrupt", detail: string) =>
        new DownloadUnavailable({ problem, url, path, detail, fetchCommand: options.fetchCommand })
      let lastProblem = "no attempt made"
      let restartedAfterCorrupt = false
      for (let attempt = 1; attempt <= attempts; attempt++) {
        if (attempt > 1) await sleep(delay(attempt - 1), signal)
        signal?.throwIfAborted()
        let offset = await sizeOf(part)
        if (expected.size !== undefined && offset > expected.size) {
          await unlink(part)
          offset = 0
        }
        let total = expected.size
        if (!(expected.size !== undefined && offset === expected.size)) {
          const idle = new AbortController()
          const abortIdle = () => idle.abort(signal?.reason)
          signal?.addEventListener("abort", abortIdle, { once: true })
          let timer = setTimeout(() => idle.abort(new Error("no data")), options.idleTimeoutMs ?? 60_000)
          const touch = () => {
            clearTimeout(timer)
            timer = setTimeout(() => idle.abort(new Error("no data")), options.idleTimeoutMs ?? 60_000)
          }
          try {
            let response: Response
            try {
              response = await doFetch(url, {
                // identity: a compressed body's length is not the file's, and a Range counts the file's bytes
                headers: {
                  "Accept-Encoding": "identity",
                  ...options.headers,
                  ...(offset > 0 ? { Range: `bytes=${offset}-` } : {})
                },
                signal: idle.signal,
                redirect: "follow"
              })
            } catch (e) {
              signal?.throwIfAborted()
              lastProblem = describe(e)
              continue
            }
            if (response.status === 416 && offset > 0) {
              // the part may be whole already: the checks below decide, with the total the server names
              const whole = /^bytes \*\/(\d+)$/.exec(response.headers.get("content-range") ?? "")?.[1]
              total ??= whole === undefined ? undefined : Number(whole)
              await response.body?.cancel()
            } else if (response.status !== 200 && response.status !== 206) {
              await response.body?.cancel()
              lastProblem = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`
              if (response.status === 429 || response.status >= 500) continue
              throw error("http", lastProblem)
            } else {
              const resumed =
                response.status === 206 &&
                new RegExp(`^bytes ${offset}-`).test(response.headers.get("content-range") ?? "")
              if (!resumed) offset = 0
              total ??= announcedTotal(response, offset)
              const handle = await open(part, resumed ? "a" : "w")
              let received = offset
              const resumedFrom = offset
              try {
                if (response.body) {
                  for await (const chunk of response.body) {
                    touch()
                    await handle.write(chunk)
                    received += chunk.byteLength
                    options.onProgress?.({ url, path, received, total, resumedFrom, done: false })
                  }
                }
                await handle.sync()
              } catch (e) {
                signal?.throwIfAborted()
                lastProblem = `the transfer broke after ${received} bytes (${describe(e)})`
                continue
              } finally {
                await handle.close()
              }
              if (total !== undefined && received < total) {
                lastProblem = `the server closed the transfer after ${received} of ${total} bytes`
                continue
              }
            }
          } finally {
            clearTimeout(timer)
            signal?.removeEventListener("abort", abortIdle)
          }
        }
        const problem = await verifyFile(part, { ...expected, ...(total !== undefined ? { size: total } : {}) })
        if (problem !== undefined) {
          await unlink(part).catch(() => {})
          // bytes kept from an earlier download of another version: one fresh try before calling it corrupt
          if (offset > 0 && !restartedAfterCorrupt) {
            restartedAfterCorrupt = true
            lastProblem = problem
            continue
          }
          throw error("corrupt", problem)
        }
        await rename(part, path)
        const bytes = await sizeOf(path)
        options.onProgress?.({ url, path, received: bytes, total: bytes, resumedFrom: 0, done: true })
        return { path, downloaded: true, bytes }
      }
      throw error("unreachable", lastProblem)
    }
  )
}
