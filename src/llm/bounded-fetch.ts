// The fetch the model clients (ollama, openai) are given: undici's request API under fetch's contract, with
// a cap on the reply's bytes, so that a model server cannot make a run hold gigabytes.
import { promisify } from "node:util"
import { brotliDecompress, gunzip, inflate, inflateRaw, type ZlibOptions } from "node:zlib"
import { Agent, type Dispatcher, interceptors, request } from "undici"
import { SIZE_CAPS } from "../trace/size-caps.ts"

/** The reply's body was larger than the cap; the call fails with a message that says so. */
export class ReplyTooLarge extends Error {
  readonly limitBytes: number
  constructor(limitBytes: number) {
    super(`the reply was larger than ${Math.round(limitBytes / (1024 * 1024))} MiB and was dropped`)
    this.name = "ReplyTooLarge"
    this.limitBytes = limitBytes
  }
}

/**
 * Keep-alive connections shared by every call, redirects followed as fetch follows them. fetch runs on
 * the same undici, but its WHATWG streams cost about three times the CPU of `request` per call, which a
 * bench with many tasks in flight pays on its one thread.
 */
const dispatcher: Dispatcher = new Agent().compose(interceptors.redirect({ maxRedirections: 20 }))

/** The decoders of the content codings fetch decodes; each stops at `maxOutputLength` (a zip bomb is no reply). */
const DECODERS: Readonly<Record<string, (bytes: Buffer, options: ZlibOptions) => Promise<Buffer>>> = {
  gzip: promisify(gunzip),
  "x-gzip": promisify(gunzip),
  deflate: async (bytes, options) => promisify(inflate)(bytes, options).catch(() => promisify(inflateRaw)(bytes, options)),
  br: promisify(brotliDecompress)
}

/**
 * A body decoded as its Content-Encoding says (codings applied in order, so undone last first), counting
 * the decoded bytes against the cap. An unknown coding is left as it is, as fetch leaves it.
 */
const decode = async (bytes: Buffer, encoding: string | undefined, limitBytes: number): Promise<Buffer> => {
  const codings = (encoding ?? "").split(",").map((c) => c.trim().toLowerCase()).filter((c) => c !== "" && c !== "identity")
  let out = bytes
  for (const coding of codings.reverse()) {
    const decoder = DECODERS[coding]
    if (!decoder) return bytes
    try {
      out = await decoder(out, { maxOutputLength: limitBytes })
    } catch (e) {
      throw (e as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE" ? new ReplyTooLarge(limitBytes) : e
    }
  }
  return out
}

/** Statuses whose Response has no body. */
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304])

/** A request body `request` takes as it is; anything else (a stream, a form) goes through fetch. */
const plainBody = (body: RequestInit["body"]): body is string | Uint8Array | null | undefined => body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array

/** Read a reply's (decoded) body, failing as soon as it passes `limitBytes`. */
const readCapped = (body: Dispatcher.ResponseData["body"], limitBytes: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let total = 0
    body.on("data", (chunk: Buffer) => {
      total += chunk.length
      if (total > limitBytes) {
        body.destroy()
        reject(new ReplyTooLarge(limitBytes))
      } else chunks.push(chunk)
    })
    body.once("error", reject)
    body.once("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total)))
  })

/**
 * `fetch` for calls to a model server: the reply is read whole through a counter (a declared length above
 * `limitBytes` fails at once, a body fails as soon as it passes the cap, decoded bytes counted) and handed
 * over as a Response. Failures are shaped as fetch's ("fetch failed" / "terminated", the socket error as
 * the cause; the signal's reason when aborted), which the provider errors read.
 */
export const boundedFetch =
  (limitBytes: number = SIZE_CAPS.replyBytes): typeof fetch =>
  async (input, init) => {
    if (input instanceof Request || !plainBody(init?.body)) return streamedBoundedFetch(limitBytes, input, init)
    const signal = init?.signal ?? undefined
    const failed = (cause: unknown, message: string) => (signal?.aborted ? signal.reason : cause instanceof ReplyTooLarge ? cause : new TypeError(message, { cause }))
    let reply: Dispatcher.ResponseData
    try {
      reply = await request(input, {
        method: (init?.method ?? "GET") as Dispatcher.HttpMethod,
        headers: init?.headers instanceof Headers ? Object.fromEntries(init.headers) : (init?.headers as Record<string, string> | Array<[string, string]> | undefined),
        body: init?.body ?? null,
        signal,
        dispatcher
      })
    } catch (e) {
      throw failed(e, "fetch failed")
    }
    const declared = Number(reply.headers["content-length"] ?? Number.NaN)
    if (declared > limitBytes) {
      reply.body.destroy()
      throw new ReplyTooLarge(limitBytes)
    }
    let bytes: Buffer
    const encoding = reply.headers["content-encoding"]
    const coded = typeof encoding === "string" && encoding.trim() !== "" && encoding.trim().toLowerCase() !== "identity"
    try {
      bytes = await readCapped(reply.body, limitBytes)
      if (coded) bytes = await decode(bytes, encoding, limitBytes)
    } catch (e) {
      throw failed(e, "terminated")
    }
    const headers = new Headers()
    for (const [name, value] of Object.entries(reply.headers))
      if (coded && (name === "content-encoding" || name === "content-length")) continue // decoded already
      else if (Array.isArray(value)) for (const v of value) headers.append(name, v)
      else if (value !== undefined) headers.append(name, value)
    const status = reply.statusCode
    return new Response(NULL_BODY_STATUS.has(status) ? null : bytes, { status, statusText: reply.statusText ?? "", headers })
  }

/** The general case, through fetch: the body read through a counter, as above. */
const streamedBoundedFetch = async (limitBytes: number, input: Parameters<typeof fetch>[0], init: RequestInit | undefined): Promise<Response> => {
  const response = await fetch(input, init)
  const length = response.headers.get("content-length")
  const declared = length === null ? Number.NaN : Number(length)
  if (Number.isFinite(declared) && declared > limitBytes) {
    await response.body?.cancel().catch(() => undefined)
    throw new ReplyTooLarge(limitBytes)
  }
  if (!response.body) return response
  const reader = response.body.getReader()
  const chunks: Array<Uint8Array> = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > limitBytes) {
      await reader.cancel().catch(() => undefined)
      throw new ReplyTooLarge(limitBytes)
    }
    chunks.push(value)
  }
  const headers = new Headers(response.headers)
  headers.delete("content-encoding") // fetch has already decoded it
  headers.delete("content-length")
  return new Response(Buffer.concat(chunks), { status: response.status, statusText: response.statusText, headers })
}
