// The fetch the model clients (ollama, openai) are given: Node's HTTP client under fetch's contract, with
// a cap on the reply's bytes, so that a model server cannot make a run hold gigabytes.
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from "node:http"
import { urlToHttpOptions } from "node:url"
import { promisify } from "node:util"
import type { ZlibOptions } from "node:zlib"
import { addSecret } from "../trace/redact.ts"
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

/** The server kept redirecting (a loop, or a chain longer than fetch follows); `url` is the last place it pointed at. */
export class TooManyRedirects extends Error {
  readonly url: string
  readonly redirects: number
  constructor(url: string, redirects: number) {
    super(`more than ${redirects} redirects (the last to ${url})`)
    this.name = "TooManyRedirects"
    this.url = url
    this.redirects = redirects
  }
}

/**
 * Keep-alive connections shared by every call. Node's own HTTP client, not fetch: fetch's WHATWG streams
 * cost about three times the CPU per call, and undici's request API writes every request on a reused
 * connection one event-loop turn late, which a bench with many tasks in flight pays as latency on
 * each call. A server's `Keep-Alive: timeout` hint retires idle connections before it closes them.
 */
/**
 * Node's HTTP client and its agents, loaded with the first request: `node:http` as an ES import makes Node load
 * its fetch implementation as well, about a sixth of `import "smurfs"` (docs/performance.md).
 */
let transport:
  | {
      readonly request: {
        readonly "http:": typeof import("node:http").request
        readonly "https:": typeof import("node:https").request
      }
      readonly agents: { readonly "http:": import("node:http").Agent; readonly "https:": import("node:https").Agent }
    }
  | undefined
const transportOf = () => {
  if (transport === undefined) {
    const http = process.getBuiltinModule("node:http")
    const https = process.getBuiltinModule("node:https")
    // HTTP_PROXY / HTTPS_PROXY / NO_PROXY when Node is told to use them (NODE_USE_ENV_PROXY=1 or --use-env-proxy,
    // Node 22.21 and later), as Node's fetch and its own agents then do
    const useEnvProxy = process.env["NODE_USE_ENV_PROXY"] === "1" || process.execArgv.includes("--use-env-proxy")
    const options = { keepAlive: true, ...(useEnvProxy ? { proxyEnv: process.env } : {}) }
    transport = {
      request: { "http:": http.request, "https:": https.request },
      agents: { "http:": new http.Agent(options), "https:": new https.Agent(options) }
    }
  }
  return transport
}

/** The protocols this fetch speaks itself; anything else goes to Node's fetch. */
const PROTOCOLS = new Set(["http:", "https:"])

/** Redirects followed, as fetch follows them. */
const MAX_REDIRECTS = 20

/** The decoders of the content codings fetch decodes; each stops at `maxOutputLength` (a zip bomb is no reply). */
const zlib = () => process.getBuiltinModule("node:zlib")
const DECODERS: Readonly<Record<string, (bytes: Buffer, options: ZlibOptions) => Promise<Buffer>>> = {
  gzip: (bytes, options) => promisify(zlib().gunzip)(bytes, options),
  "x-gzip": (bytes, options) => promisify(zlib().gunzip)(bytes, options),
  deflate: async (bytes, options) =>
    promisify(zlib().inflate)(bytes, options).catch(() => promisify(zlib().inflateRaw)(bytes, options)),
  br: (bytes, options) => promisify(zlib().brotliDecompress)(bytes, options)
}

/** The content codings of a reply to undo, last applied first; undefined when one is unknown (fetch leaves such a body as it is). */
const codingsOf = (encoding: string | undefined): ReadonlyArray<string> | undefined => {
  const codings = (encoding ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity")
  return codings.every((c) => Object.hasOwn(DECODERS, c)) ? codings.reverse() : undefined
}

/** A body decoded as its codings say, counting the decoded bytes against the cap. */
const decode = async (bytes: Buffer, codings: ReadonlyArray<string>, limitBytes: number): Promise<Buffer> => {
  let out = bytes
  for (const coding of codings) {
    try {
      out = await DECODERS[coding]!(out, { maxOutputLength: limitBytes })
    } catch (e) {
      throw (e as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE" ? new ReplyTooLarge(limitBytes) : e
    }
  }
  return out
}

/** Statuses whose Response has no body. */
const NULL_BODY_STATUS = new Set([204, 205, 304])

/** A request body sent as it is; anything else (a stream, a form) goes through fetch. */
const plainBody = (body: RequestInit["body"]): body is string | Uint8Array | null | undefined =>
  body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array

/**
 * A reply's body taken whole from its stream's buffer, when it has come whole already: a model's reply
 * usually comes in the same read as its head, before anyone listens. Undefined when it has not (or
 * would pass `limitBytes`): it is read as it comes then. Reading the buffer to its end lets the stream
 * end, which frees the connection, as reading it through `data` events does.
 */
const readWhole = (body: IncomingMessage, limitBytes: number): Buffer | undefined => {
  if (!body.complete || body.destroyed || body.readableFlowing !== null || body.readableLength > limitBytes)
    return undefined
  const bytes = body.read() as Buffer | null
  if (bytes === null) body.resume() // nothing buffered (an empty body): let the stream end
  return bytes ?? Buffer.alloc(0)
}

/** Read a reply's body, failing as soon as it passes `limitBytes`. */
const readCapped = (body: IncomingMessage, limitBytes: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let total = 0
    body.on("data", (chunk: Buffer) => {
      total += chunk.length
      if (total > limitBytes) {
        reject(new ReplyTooLarge(limitBytes)) // first: destroying the body fails it too
        body.destroy()
      } else chunks.push(chunk)
    })
    body.once("error", reject)
    body.once("aborted", () => reject(Object.assign(new Error("aborted"), { code: "ECONNRESET" })))
    body.once("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total)))
  })

/**
 * The last addresses called, parsed once, with their parts as Node's HTTP client takes them (host, port,
 * path, credentials): every model call of a run goes to the same few, and reading a URL's parts costs a
 * call into the runtime each. Only URLs parsed here are kept (a caller's own URL object may change).
 */
const parsedUrls = new Map<string, { readonly url: URL; readonly target: ReturnType<typeof urlToHttpOptions> }>()
const MAX_PARSED_URLS = 64
const parseUrl = (text: string) => {
  let parsed = parsedUrls.get(text)
  if (parsed === undefined) {
    const url = new URL(text)
    parsed = { url, target: urlToHttpOptions(url) }
    if (parsedUrls.size >= MAX_PARSED_URLS) parsedUrls.clear()
    parsedUrls.set(text, parsed)
  }
  return parsed
}

interface Outgoing {
  readonly url: URL
  /** `url` as Node's HTTP client takes it, when worked out already. */
  readonly target?: ReturnType<typeof urlToHttpOptions> | undefined
  readonly method: string
  readonly headers: Record<string, string>
  readonly body: string | Uint8Array | undefined
  readonly signal: AbortSignal | undefined
  /** Told when the request is sent once more after a reset of a kept-alive connection (with the error's code). */
  readonly onResend?: ((code: string) => void) | undefined
}

/**
 * A fetch's `init` may carry `onResend` (not part of fetch's own options): told when the request is sent once more
 * on a new connection after a reset, so that the caller can record the fault (a server that resets every request
 * looks the same as a connection it had closed).
 */
export interface ResendNotice {
  readonly onResend?: ((code: string) => void) | undefined
}

/**
 * One request; its reply's head. A request written on a kept-alive connection that the server had
 * closed meanwhile (a reset before any reply byte) was never read: it is sent once more on a new one.
 * `sent` is told of each request made, for the caller's abort to destroy it.
 */
const send = (out: Outgoing, sent: (req: ClientRequest) => void, retried = false): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    const { request, agents } = transportOf()
    const protocol = out.url.protocol as keyof typeof agents
    const agent = agents[protocol]
    const req = request[protocol](
      { ...(out.target ?? urlToHttpOptions(out.url)), method: out.method, headers: out.headers, agent },
      resolve
    )
    sent(req)
    req.once("error", (e: NodeJS.ErrnoException) => {
      if (!retried && req.reusedSocket && (e.code === "ECONNRESET" || e.code === "EPIPE") && !out.signal?.aborted) {
        out.onResend?.(e.code)
        send(out, sent, true).then(resolve, reject)
      } else reject(e)
    })
    req.end(out.body)
  })

/** The request a redirect leads to, as fetch makes it: 303 (and 301/302 after a POST) turn into a GET without a body. */
const redirected = (out: Outgoing, status: number, location: string): Outgoing => {
  const url = new URL(location, out.url)
  const toGet = status === 303 ? out.method !== "HEAD" : (status === 301 || status === 302) && out.method === "POST"
  const headers = { ...out.headers }
  if (toGet) for (const name of Object.keys(headers)) if (/^content-/i.test(name)) delete headers[name]
  // credentials stay with their origin
  if (url.origin !== out.url.origin)
    for (const name of Object.keys(headers))
      if (/^(authorization|cookie|proxy-authorization)$/i.test(name)) delete headers[name]
  return {
    ...out,
    url,
    target: undefined,
    headers,
    method: toGet ? "GET" : out.method,
    body: toGet ? undefined : out.body
  }
}

/** Headers whose values are credentials: each value sent joins the redaction set, so that a server echoing it is never shown. */
const CREDENTIAL_HEADERS = /^(authorization|proxy-authorization|x-api-key|api-key|cookie)$/i

/**
 * Request headers as a plain object, whatever form fetch was given them in. A Headers object (the openai
 * client's, on every call) is read as it is: a copy into another Headers would list the very same entries.
 */
const plainHeaders = (headers: RequestInit["headers"]): Record<string, string> =>
  headers === undefined
    ? {}
    : headers instanceof Headers
      ? Object.fromEntries(headers)
      : Array.isArray(headers)
        ? Object.fromEntries(new Headers(headers))
        : { ...(headers as Record<string, string>) }

/**
 * `fetch` for calls to a model server: the reply is read whole through a counter (a declared length above
 * `limitBytes` fails at once, a body fails as soon as it passes the cap, decoded bytes counted) and handed
 * over as a Response. Failures are shaped as fetch's ("fetch failed" / "terminated", the socket error as
 * the cause; the signal's reason when aborted), which the provider errors read.
 */
export const boundedFetch =
  (limitBytes: number = SIZE_CAPS.replyBytes): typeof fetch =>
  async (input, init) => {
    const parsed = typeof input === "string" ? parseUrl(input) : undefined
    const url = input instanceof URL ? input : parsed?.url
    const headers = plainHeaders(init?.headers)
    for (const [name, value] of Object.entries(headers)) if (CREDENTIAL_HEADERS.test(name)) addSecret(value)
    if (url === undefined || !PROTOCOLS.has(url.protocol) || !plainBody(init?.body))
      return streamedBoundedFetch(limitBytes, input, init)
    const signal = init?.signal ?? undefined
    const failed = (cause: unknown, message: string) =>
      signal?.aborted
        ? signal.reason
        : cause instanceof ReplyTooLarge || cause instanceof TooManyRedirects
          ? cause
          : new TypeError(message, { cause })
    if (signal?.aborted) throw signal.reason
    const out: Outgoing = {
      url,
      target: parsed?.target,
      method: (init?.method ?? "GET").toUpperCase(),
      headers,
      body: init?.body ?? undefined,
      signal,
      onResend: (init as ResendNotice | undefined)?.onResend
    }
    // the signal destroys the request in flight (its reply with it), as Node's own `signal` option does; one
    // listener for the whole fetch, where that option adds a listener and stream watchers to every request
    let current: ClientRequest | undefined
    const sent = (req: ClientRequest) => {
      current = req
    }
    const abort = () => current?.destroy(Object.assign(new Error("The operation was aborted"), { name: "AbortError" }))
    signal?.addEventListener("abort", abort, { once: true })
    try {
      return await fetchReply(out, sent, limitBytes, failed)
    } finally {
      signal?.removeEventListener("abort", abort)
    }
  }

/** The reply to `out`, its redirects followed, read whole; `failed` shapes an error as fetch's. */
const fetchReply = async (
  first: Outgoing,
  sent: (req: ClientRequest) => void,
  limitBytes: number,
  failed: (cause: unknown, message: string) => unknown
): Promise<Response> => {
  let out = first
  const signal = out.signal
  for (let redirects = 0; ; redirects++) {
    let reply: IncomingMessage
    try {
      reply = await send(out, sent)
    } catch (e) {
      throw failed(e, "fetch failed")
    }
    if (signal?.aborted) {
      reply.destroy()
      throw signal.reason
    }
    const status = reply.statusCode ?? 0
    if (status < 200 || status > 599) {
      reply.destroy()
      throw failed(new Error(`the server answered with the status ${status}, which HTTP does not have`), "fetch failed")
    }
    const location = reply.headers.location
    if ([301, 302, 303, 307, 308].includes(status) && location !== undefined) {
      reply.resume() // the redirect's own body is not wanted; reading it frees the connection
      if (redirects >= MAX_REDIRECTS)
        throw failed(new TooManyRedirects(new URL(location, out.url).href, MAX_REDIRECTS), "fetch failed")
      out = redirected(out, status, location)
      continue
    }
    const declared = Number(reply.headers["content-length"] ?? Number.NaN)
    if (declared > limitBytes) {
      reply.destroy()
      throw new ReplyTooLarge(limitBytes)
    }
    const codings = codingsOf(reply.headers["content-encoding"])
    let bytes: Buffer
    try {
      bytes = readWhole(reply, limitBytes) ?? (await readCapped(reply, limitBytes))
      if (codings !== undefined && codings.length > 0) bytes = await decode(bytes, codings, limitBytes)
    } catch (e) {
      throw failed(e, "terminated")
    }
    const decoded = codings !== undefined && codings.length > 0
    const statusText = reply.statusMessage ?? ""
    return NULL_BODY_STATUS.has(status)
      ? new Response(null, { status, statusText, headers: headerPairs(reply.headers, decoded) })
      : readResponse(bytes, status, statusText, reply.headers, decoded)
  }
}

/** A reply's headers as pairs (a Headers object would only be copied again), without the codings undone already. */
const headerPairs = (headers: IncomingHttpHeaders, decoded: boolean): Array<[string, string]> => {
  const pairs: Array<[string, string]> = []
  for (const [name, value] of Object.entries(headers))
    if (decoded && (name === "content-encoding" || name === "content-length")) continue
    else if (Array.isArray(value)) for (const v of value) pairs.push([name, v])
    else if (value !== undefined) pairs.push([name, value])
  return pairs
}

/**
 * A Response over a body already read whole. Its text, JSON and bytes come straight from the bytes: a
 * Response built on them sets up a byte stream that the clients then read back, which cost more CPU per
 * model call than the rest of the reply's handling. Anything else (the body as a stream, a form, a
 * clone of a read body) goes through such a Response, built when first asked for. It is a Response
 * (`instanceof`, every property and method) without running Response's constructor, whose conversions
 * of the init and copy of the headers cost as much again per call: its headers are built from Node's
 * when first read, which the Ollama client never does for a reply that succeeded.
 */
const makeReadResponse = () => {
  class ReadResponse {
    readonly #bytes: Buffer
    readonly #status: number
    readonly #statusText: string
    readonly #source: IncomingHttpHeaders | Headers
    readonly #decoded: boolean
    #headers: Headers | undefined
    #used = false
    #full: Response | undefined

    constructor(
      bytes: Buffer,
      status: number,
      statusText: string,
      headers: IncomingHttpHeaders | Headers,
      decoded: boolean
    ) {
      this.#bytes = bytes
      this.#status = status
      this.#statusText = statusText
      this.#source = headers
      this.#decoded = decoded
    }

    get status(): number {
      return this.#status
    }

    get statusText(): string {
      return this.#statusText
    }

    get ok(): boolean {
      return this.#status >= 200 && this.#status <= 299
    }

    get headers(): Headers {
      this.#headers ??=
        this.#source instanceof Headers ? this.#source : new Headers(headerPairs(this.#source, this.#decoded))
      return this.#headers
    }

    /** As a Response built by its constructor reads (fetch's own would say "basic" and its URL). */
    get type(): Response["type"] {
      return "default"
    }

    get url(): string {
      return ""
    }

    get redirected(): boolean {
      return false
    }

    /** The same reply as a Response of the platform's own. */
    #real(): Response {
      this.#full ??= new Response(this.#bytes, {
        status: this.#status,
        statusText: this.#statusText,
        headers: this.headers
      })
      return this.#full
    }

    /** The bytes, once: a body is read at most once, as fetch's are. */
    #take(): Buffer {
      if (this.#used || this.#full?.bodyUsed === true || this.#full?.body?.locked === true)
        throw new TypeError("Body is unusable: Body has already been read")
      this.#used = true
      return this.#bytes
    }

    get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
      return this.#real().body
    }

    get bodyUsed(): boolean {
      return this.#used || (this.#full?.bodyUsed ?? false)
    }

    async text(): Promise<string> {
      return UTF8.decode(this.#take())
    }

    async json(): Promise<unknown> {
      return JSON.parse(UTF8.decode(this.#take()))
    }

    async arrayBuffer(): Promise<ArrayBuffer> {
      const bytes = this.#take()
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
    }

    async bytes(): Promise<Uint8Array<ArrayBuffer>> {
      return new Uint8Array(await this.arrayBuffer())
    }

    async blob(): Promise<Blob> {
      return new Blob([await this.arrayBuffer()], { type: this.headers.get("content-type") ?? "" })
    }

    async formData(): Promise<FormData> {
      this.#take()
      return new Response(this.#bytes, { status: this.#status, headers: this.headers }).formData()
    }

    clone(): Response {
      if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.")
      // headers of its own, as a clone has
      return new ReadResponse(
        this.#bytes,
        this.#status,
        this.#statusText,
        new Headers(this.headers),
        false
      ) as unknown as Response
    }
  }
  // a Response to `instanceof` and to what reads Response.prototype; every property it has is ReadResponse's own
  Object.setPrototypeOf(ReadResponse.prototype, Response.prototype)
  return ReadResponse
}

/**
 * Made on first use: naming the global Response at import would load Node's whole fetch implementation
 * with `import "smurfs"`.
 */
let ReadResponseClass: ReturnType<typeof makeReadResponse> | undefined
const readResponse = (
  bytes: Buffer,
  status: number,
  statusText: string,
  headers: IncomingHttpHeaders,
  decoded: boolean
): Response =>
  new (ReadResponseClass ??= makeReadResponse())(bytes, status, statusText, headers, decoded) as unknown as Response

/** UTF-8 as fetch decodes a body (a leading byte order mark dropped, bad bytes replaced). */
const UTF8 = new TextDecoder()

/** The general case, through fetch: the body read through a counter, as above. */
const streamedBoundedFetch = async (
  limitBytes: number,
  input: Parameters<typeof fetch>[0],
  init: RequestInit | undefined
): Promise<Response> => {
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
