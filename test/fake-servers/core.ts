// Shared machinery of the fake model servers: a loopback HTTP server that records requests and injects faults.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** One request the server received, with its parsed JSON body (undefined for GET or a non-JSON body). */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  readonly body: any
}

/**
 * A fault to inject instead of (or before) a normal reply.
 * - `status`: answer with this HTTP status and an error body in the server's own format.
 * - `cut`: start a 200 reply, send part of the body, then destroy the socket.
 * - `reset`: destroy the socket before any reply.
 * - `invalid-json`: a 200 reply whose body is not JSON.
 * - `reset-mid-body`: start a 200 reply, send part of the body, then reset the connection (TCP RST, ECONNRESET).
 * - `hang`: accept the request and never answer (a stuck server); the socket stays open until the client gives up.
 */
export type Fault =
  | {
      readonly fault: "status"
      readonly status: number
      readonly message?: string
      readonly retryAfter?: string
      /** Send the message as a plain-text page (as a proxy would) instead of the server's JSON error. */
      readonly plainText?: boolean
    }
  | { readonly fault: "cut" }
  | { readonly fault: "reset" }
  | { readonly fault: "invalid-json" }
  | { readonly fault: "hang" }
  | { readonly fault: "reset-mid-body" }

/** JSON text sent as it is inside a reply: a value JSON.stringify cannot write (arguments nested a million deep). */
export class RawJson {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

/** JSON text of a reply, with each RawJson written as its own text. */
export const replyText = (value: unknown): string => {
  const raws: Array<string> = []
  const text = JSON.stringify(value, (_key, v: unknown) =>
    v instanceof RawJson ? `\u0000raw${raws.push(v.text) - 1}\u0000` : v
  )
  return raws.length === 0 ? text : text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i: string) => raws[Number(i)]!)
}

/** A normal reply from a scripted model: text content and/or native tool calls. */
export interface Reply {
  readonly content?: string
  /** A reasoning model's thinking, sent in the server's own field (Ollama `thinking`, OpenAI-compatible `reasoning_content`). */
  readonly thinking?: string
  readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly arguments: Record<string, unknown> | RawJson }>
  /** Token counts to report; defaults derive from the text lengths. */
  readonly promptTokens?: number
  readonly completionTokens?: number
  /**
   * The model writes without end (a random model, a small one in a repetition loop): with an output limit on the
   * request (max_tokens / num_predict) the reply is that many tokens of `content` repeated, cut (finish_reason /
   * done_reason "length"); without one the server never answers, as a server still generating.
   */
  readonly ramble?: boolean
}

/** The text of a rambling reply cut at `limit` tokens (4 characters a token, as `estimateTokens` counts). */
export const rambleText = (seed: string, limit: number): string => {
  const unit = seed.length > 0 ? seed : "and so on "
  return unit.repeat(Math.ceil((limit * 4) / unit.length)).slice(0, limit * 4)
}

/** What the server does for one chat request. `delayMs` holds the reply back (a slow model, or longer than a timeout). */
export type Step = string | ((Reply | Fault) & { readonly delayMs?: number })

export const isFault = (step: Reply | Fault): step is Fault => "fault" in step

export interface FakeServer {
  /** Base URL, e.g. http://127.0.0.1:40123 */
  readonly url: string
  /** Every request received, in order, including faulted ones. */
  readonly requests: RecordedRequest[]
  /** The largest number of chat requests in flight at once. */
  readonly maxInFlight: () => number
  readonly close: () => Promise<void>
}

export interface RouteContext {
  readonly request: RecordedRequest
  readonly res: ServerResponse
  readonly sendJson: (status: number, body: unknown, headers?: Record<string, string>) => void
  /** Answer a status fault: a plain-text page when asked, else `jsonBody` in the server's error format. */
  readonly sendStatusFault: (fault: Extract<Fault, { fault: "status" }>, jsonBody: unknown) => void
  /** Wait, but give up when the server closes or the client hangs up; resolves false then. */
  readonly wait: (ms: number) => Promise<boolean>
  /** Mark this request as a chat call for the in-flight count. */
  readonly countInFlight: () => void
}

/** Start a server on 127.0.0.1 with a free port; `route` answers each request. */
export const startServer = async (route: (ctx: RouteContext) => Promise<void> | void): Promise<FakeServer> => {
  const requests: RecordedRequest[] = []
  const timers = new Set<NodeJS.Timeout>()
  let inFlight = 0
  let maxInFlight = 0

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      let body: unknown
      try {
        body = raw.length > 0 ? JSON.parse(raw) : undefined
      } catch {
        body = undefined
      }
      const request: RecordedRequest = {
        method: req.method ?? "GET",
        path: (req.url ?? "/").split("?")[0]!,
        headers: req.headers,
        body
      }
      requests.push(request)
      let counted = false
      const done = () => {
        if (counted) {
          counted = false
          inFlight--
        }
      }
      res.on("close", done)
      const ctx: RouteContext = {
        request,
        res,
        sendJson: (status, value, headers = {}) => {
          if (res.destroyed) return
          const text = replyText(value)
          res.writeHead(status, {
            "content-type": "application/json; charset=utf-8",
            "content-length": Buffer.byteLength(text),
            ...headers
          })
          res.end(text)
        },
        sendStatusFault: (fault, jsonBody) => {
          if (res.destroyed) return
          const headers: Record<string, string> = fault.retryAfter ? { "retry-after": fault.retryAfter } : {}
          if (!fault.plainText) return ctx.sendJson(fault.status, jsonBody, headers)
          const text = fault.message ?? `fake fault ${fault.status}`
          res.writeHead(fault.status, {
            "content-type": "text/html",
            "content-length": Buffer.byteLength(text),
            ...headers
          })
          res.end(text)
        },
        wait: (ms) =>
          new Promise<boolean>((resolve) => {
            if (ms <= 0) return resolve(!res.destroyed)
            const timer = setTimeout(() => {
              timers.delete(timer)
              resolve(!res.destroyed)
            }, ms)
            timers.add(timer)
            res.on("close", () => {
              clearTimeout(timer)
              timers.delete(timer)
              resolve(false)
            })
          }),
        countInFlight: () => {
          if (counted) return
          counted = true
          inFlight++
          maxInFlight = Math.max(maxInFlight, inFlight)
        }
      }
      Promise.resolve(route(ctx)).catch((e: unknown) =>
        ctx.sendJson(500, { error: `fake server bug: ${(e as Error).message}` })
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t)
        timers.clear()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Apply a transport-level fault (cut, reset, invalid JSON); returns false for faults the caller formats itself (status). */
export const applyTransportFault = (ctx: RouteContext, fault: Fault, partialBody: string): boolean => {
  switch (fault.fault) {
    case "reset":
      ctx.res.socket?.destroy()
      return true
    case "cut": {
      ctx.res.writeHead(200, {
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(partialBody) * 2
      })
      ctx.res.write(partialBody.slice(0, Math.max(1, Math.floor(partialBody.length / 2))))
      // Destroy after the partial chunk is flushed, so the client sees headers then a broken body.
      setTimeout(() => ctx.res.socket?.destroy(), 10)
      return true
    }
    case "invalid-json": {
      const text = '{"model": "broken", "message": {'
      ctx.res.writeHead(200, {
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(text)
      })
      ctx.res.end(text)
      return true
    }
    case "reset-mid-body": {
      ctx.res.writeHead(200, {
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(partialBody) * 2
      })
      ctx.res.write(partialBody.slice(0, Math.max(1, Math.floor(partialBody.length / 2))))
      setTimeout(() => ctx.res.socket?.resetAndDestroy(), 10)
      return true
    }
    case "hang":
      return true
    case "status":
      return false
  }
}

/** A script of steps consumed in order; when it runs out the last step repeats. */
export const stepFrom = (
  script: ReadonlyArray<Step> | ((body: any, index: number) => Step | Promise<Step>),
  body: unknown,
  index: number
): Step | Promise<Step> => {
  if (typeof script === "function") return script(body, index)
  if (script.length === 0) return { fault: "status", status: 500, message: "the fake server has an empty script" }
  return script[Math.min(index, script.length - 1)]!
}

/** A minimal value that satisfies a JSON Schema: enough for a fake model to "honour" `format` and tool parameters. */
export const sampleOf = (schema: any, root: any = schema, depth = 0): unknown => {
  if (!schema || typeof schema !== "object" || depth > 8) return null
  if (schema.$ref && typeof schema.$ref === "string") {
    const path = schema.$ref.replace(/^#\//, "").split("/")
    let target: any = root
    for (const part of path) target = target?.[part]
    return sampleOf(target, root, depth + 1)
  }
  if ("const" in schema) return schema.const
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  if (Array.isArray(schema.anyOf) && schema.anyOf.length > 0) return sampleOf(schema.anyOf[0], root, depth + 1)
  if (Array.isArray(schema.oneOf) && schema.oneOf.length > 0) return sampleOf(schema.oneOf[0], root, depth + 1)
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {}
      const required: string[] = Array.isArray(schema.required) ? schema.required : []
      for (const key of required) out[key] = sampleOf(schema.properties?.[key] ?? {}, root, depth + 1)
      return out
    }
    case "array": {
      const min = typeof schema.minItems === "number" ? schema.minItems : 0
      return Array.from({ length: min }, () => sampleOf(schema.items ?? {}, root, depth + 1))
    }
    case "string":
      return "x".repeat(typeof schema.minLength === "number" ? Math.max(1, schema.minLength) : 1)
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 0
    case "boolean":
      return true
    case "null":
      return null
    default:
      return schema.properties ? sampleOf({ ...schema, type: "object" }, root, depth + 1) : null
  }
}

/** The default reply of a fake model: a sample of the requested format, or a call of the first tool, or plain text. */
export const defaultReply = (
  format: unknown,
  tools: ReadonlyArray<{ function?: { name?: string; parameters?: unknown } }> | undefined
): Reply => {
  if (tools && tools.length > 0 && tools[0]?.function?.name)
    return {
      content: "",
      toolCalls: [
        {
          name: tools[0].function.name,
          arguments: (sampleOf(tools[0].function.parameters ?? {}) ?? {}) as Record<string, unknown>
        }
      ]
    }
  if (format === "json") return { content: "{}" }
  if (format && typeof format === "object") return { content: JSON.stringify(sampleOf(format)) }
  return { content: "ok" }
}

export const normalizeStep = (step: Step): (Reply | Fault) & { readonly delayMs?: number } =>
  typeof step === "string" ? { content: step } : step

export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/**
 * A deterministic stand-in for an embedding model: words hashed into `dims` buckets (FNV-1a), counted
 * and L2-normalized. Texts that share words are close, as with a real model, so hybrid retrieval can
 * be tested end to end through the real clients.
 */
export const fakeEmbedding = (text: string, dims = 64): Array<number> => {
  const vector = new Array<number>(dims).fill(0)
  for (const word of text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 2)) {
    let hash = 0x811c9dc5
    for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), 0x01000193) >>> 0
    vector[hash % dims]! += 1
  }
  const norm = Math.sqrt(vector.reduce((s, x) => s + x * x, 0)) || 1
  return vector.map((x) => x / norm)
}
