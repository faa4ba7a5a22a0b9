// A loopback file host for download tests: Hugging Face's repo API and resolve URLs, GitHub raw paths, Range requests, and faults (a body cut mid-way, wrong bytes, a status).
import { createHash } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** What a request asked for: its path and Range header. */
export interface FileRequest {
  readonly method: string
  readonly path: string
  readonly range?: string | undefined
}

/** A fault served instead of a file, `times` times (then the file is served normally). */
export type FileFault =
  /** Send the headers of the whole file and only `after` bytes of it, then destroy the socket. */
  | { readonly fault: "cut"; readonly after: number; times?: number }
  /** Send other bytes of the same length, the first 16 kept (a corrupt mirror: right magic, wrong content). */
  | { readonly fault: "corrupt"; times?: number }
  /** Answer with this status. */
  | { readonly fault: "status"; readonly status: number; times?: number }
  /** Send the headers of the whole file and `after` bytes, then nothing more, holding the connection open (a stalled transfer). */
  | { readonly fault: "stall"; readonly after: number; times?: number }
  /** Ignore Range and send the whole file with 200. */
  | { readonly fault: "no-range"; times?: number }

export interface FileHost {
  readonly url: string
  readonly requests: Array<FileRequest>
  /** Serve `bytes` at `path` (a URL path). */
  readonly file: (path: string, bytes: Buffer) => void
  /** Serve JSON at `path`. */
  readonly json: (path: string, value: unknown) => void
  readonly fault: (path: string, fault: FileFault) => void
  /** Forget the requests and every fault not yet served (between tests). */
  readonly reset: () => void
  /**
   * A Hugging Face repository: its API listing (`/api/{models,datasets}/<repo>` with size and, for `lfs` files, the
   * SHA-256) and each file at `/<datasets/>?<repo>/resolve/main/<file>`.
   */
  readonly hfRepo: (
    repo: string,
    files: ReadonlyArray<{
      path: string
      bytes: Buffer
      lfs?: boolean
      reportedSize?: number
      reportedSha256?: string
    }>,
    type?: "model" | "dataset"
  ) => void
  readonly close: () => Promise<void>
}

export const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex")
export const gitBlobSha1 = (bytes: Buffer): string =>
  createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex")

/** Bytes that look like a GGUF model to the downloader: the magic, then seeded filler. */
export const fakeGguf = (size: number, seed = 1): Buffer => {
  const bytes = Buffer.alloc(size)
  let x = seed
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    bytes[i] = x >> 16
  }
  bytes.write("GGUF", 0, "latin1")
  return bytes
}

export const startFileHost = async (): Promise<FileHost> => {
  const files = new Map<string, Buffer>()
  const jsons = new Map<string, unknown>()
  const faults = new Map<string, FileFault>()
  const requests: Array<FileRequest> = []
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)
    requests.push({ method: req.method ?? "GET", path, range: req.headers.range })
    if (jsons.has(path)) {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(jsons.get(path)))
      return
    }
    const bytes = files.get(path)
    if (bytes === undefined) {
      res.writeHead(404, { "content-type": "text/plain" })
      res.end("Entry not found")
      return
    }
    const fault = faults.get(path)
    if (fault) {
      fault.times = (fault.times ?? 1) - 1
      if (fault.times <= 0) faults.delete(path)
    }
    if (fault?.fault === "status") {
      res.writeHead(fault.status, { "content-type": "text/plain" })
      res.end(`status ${fault.status}`)
      return
    }
    if (fault?.fault === "cut") {
      res.writeHead(200, { "content-length": String(bytes.length), "content-type": "application/octet-stream" })
      res.write(bytes.subarray(0, fault.after), () => setTimeout(() => res.socket?.destroy(), 20))
      return
    }
    if (fault?.fault === "stall") {
      res.writeHead(200, { "content-length": String(bytes.length), "content-type": "application/octet-stream" })
      res.write(bytes.subarray(0, fault.after))
      return
    }
    const body = fault?.fault === "corrupt" ? Buffer.from(bytes.map((b, i) => (i < 16 ? b : b ^ 0xff))) : bytes
    const range = fault?.fault === "no-range" ? undefined : /^bytes=(\d+)-$/.exec(req.headers.range ?? "")
    if (range) {
      const start = Number(range[1])
      if (start >= body.length) {
        res.writeHead(416, { "content-range": `bytes */${body.length}` })
        res.end()
        return
      }
      res.writeHead(206, {
        "content-length": String(body.length - start),
        "content-range": `bytes ${start}-${body.length - 1}/${body.length}`,
        "accept-ranges": "bytes"
      })
      res.end(body.subarray(start))
      return
    }
    res.writeHead(200, { "content-length": String(body.length), "accept-ranges": "bytes" })
    res.end(body)
  }
  const server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    requests,
    file: (path, bytes) => files.set(path, bytes),
    json: (path, value) => jsons.set(path, value),
    fault: (path, fault) => faults.set(path, fault),
    reset: () => {
      faults.clear()
      requests.length = 0
    },
    hfRepo: (repo, list, type = "model") => {
      const prefix = type === "dataset" ? "/datasets" : ""
      jsons.set(`/api/${type === "dataset" ? "datasets" : "models"}/${repo}`, {
        id: repo,
        siblings: list.map((f) => ({
          rfilename: f.path,
          size: f.reportedSize ?? f.bytes.length,
          ...(f.lfs
            ? {
                lfs: {
                  sha256: f.reportedSha256 ?? sha256(f.bytes),
                  size: f.reportedSize ?? f.bytes.length,
                  pointerSize: 134
                }
              }
            : {})
        }))
      })
      for (const f of list) files.set(`${prefix}/${repo}/resolve/main/${f.path}`, f.bytes)
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
