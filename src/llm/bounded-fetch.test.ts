import { createServer, type IncomingMessage, type RequestListener, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { boundedFetch, ReplyTooLarge } from "./bounded-fetch.ts"
import { makeOpenAIModel } from "./openai.ts"
import { openaiSettings } from "./providers/openai.ts"

const MiB = 1024 * 1024
let server: Server
let url = ""

beforeAll(async () => {
  // /declared: a Content-Length above the cap; /streamed: chunks with no length; /gzip: a small compressed
  // body (its Content-Length) that decodes past the cap; /small: an ordinary JSON reply, with its length
  const bomb = gzipSync(" ".repeat(3 * MiB))
  server = createServer((req, res) => {
    const coded = /^\/coded\/(gzip|br|deflate|gzip, br)$/.exec(decodeURIComponent(req.url ?? ""))
    if (coded) {
      const body = Buffer.from(JSON.stringify({ ok: true, coding: coded[1] }))
      const encoded =
        coded[1] === "br"
          ? brotliCompressSync(body)
          : coded[1] === "deflate"
            ? deflateSync(body)
            : coded[1] === "gzip"
              ? gzipSync(body)
              : brotliCompressSync(gzipSync(body))
      res.writeHead(200, {
        "content-type": "application/json",
        "content-encoding": coded[1]!,
        "content-length": String(encoded.length)
      })
      res.end(encoded)
    } else if (req.url === "/gzip") {
      res.writeHead(200, {
        "content-type": "application/json",
        "content-encoding": "gzip",
        "content-length": String(bomb.length)
      })
      res.end(bomb)
    } else if (req.url === "/declared") {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(3 * MiB) })
      res.end("x".repeat(3 * MiB))
    } else if (req.url?.endsWith("/streamed") || req.url?.endsWith("/chat/completions")) {
      res.writeHead(200, { "content-type": "application/json" })
      const chunk = " ".repeat(MiB)
      let sent = 0
      const more = () => {
        while (sent < 40 && res.write(chunk)) sent++
        if (sent >= 40) res.end()
        else res.once("drain", more)
      }
      res.on("close", () => void (sent = 40))
      more()
    } else {
      const body = JSON.stringify({ ok: true })
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) })
      res.end(body)
    }
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

/** A request's whole body as text. */
const bodyOf = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let body = ""
    req.on("data", (c: Buffer) => (body += c))
    req.on("end", () => resolve(body))
  })

/** Run `use` against a server of its own on loopback, then close the server and its connections. */
const serving = async (
  handler: RequestListener,
  use: (url: string, server: Server) => Promise<void>
): Promise<void> => {
  const own = createServer(handler)
  await new Promise<void>((r) => own.listen(0, "127.0.0.1", r))
  try {
    await use(`http://127.0.0.1:${(own.address() as AddressInfo).port}`, own)
  } finally {
    own.closeAllConnections()
    await new Promise<void>((r) => own.close(() => r()))
  }
}

describe("boundedFetch", () => {
  it("refuses a declared length above the cap, cuts a streamed body past it, and passes a small reply through", async () => {
    await expect(boundedFetch(MiB)(`${url}/declared`)).rejects.toBeInstanceOf(ReplyTooLarge)
    await expect(boundedFetch(MiB)(`${url}/streamed`)).rejects.toThrow("larger than 1 MiB")
    expect(await (await boundedFetch(MiB)(`${url}/small`)).json()).toEqual({ ok: true })
  })

  it("counts the decoded bytes of a compressed reply, whose Content-Length is only the compressed size", async () => {
    await expect(boundedFetch(MiB)(`${url}/gzip`)).rejects.toThrow("larger than 1 MiB")
  })

  it("decodes a compressed reply as fetch does: gzip, deflate, br and codings in a row", async () => {
    for (const coding of ["gzip", "br", "deflate", "gzip, br"]) {
      const response = await boundedFetch(MiB)(`${url}/coded/${encodeURIComponent(coding)}`)
      expect(await response.json()).toEqual({ ok: true, coding })
      expect(response.headers.get("content-encoding")).toBeNull()
    }
  })

  it("hands over a reply read whole as a Response that reads as fetch's: once, as text, JSON, bytes, a stream or a clone", async () => {
    await serving(
      (_req, res) => {
        res.writeHead(200, { "content-type": "application/json", "x-kept": "yes" })
        res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"word":"größe"}')]))
      },
      async (at) => {
        const fetch = boundedFetch()
        const first = await fetch(`${at}/a`)
        expect(first).toBeInstanceOf(Response)
        expect([first.ok, first.status, first.headers.get("x-kept"), first.bodyUsed]).toEqual([true, 200, "yes", false])
        const copy = first.clone()
        expect(await first.json()).toEqual({ word: "größe" }) // the byte order mark dropped, as fetch's text does
        expect(first.bodyUsed).toBe(true)
        await expect(first.text()).rejects.toThrow(TypeError)
        expect(() => first.clone()).toThrow(TypeError)
        expect(await copy.text()).toBe('{"word":"größe"}')
        const streamed = await fetch(`${at}/b`)
        expect(await new Response(streamed.body).text()).toBe('{"word":"größe"}')
        await expect(streamed.text()).rejects.toThrow(TypeError)
        const bytes = new Uint8Array(await (await fetch(`${at}/c`)).arrayBuffer())
        expect(bytes.length).toBe(3 + Buffer.byteLength('{"word":"größe"}'))
        expect((await (await fetch(`${at}/d`)).blob()).type).toBe("application/json")
      }
    )
  })

  it("gives fetch's errors: an unreachable server is \"fetch failed\" with the socket's code as the cause", async () => {
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((r) => closed.close(() => r()))
    const error = (await boundedFetch(MiB)(`http://127.0.0.1:${port}/`).catch((e: unknown) => e)) as TypeError & {
      cause?: { code?: string }
    }
    expect(error).toBeInstanceOf(TypeError)
    expect(error.message).toBe("fetch failed")
    expect(error.cause?.code).toBe("ECONNREFUSED")
  })

  it("aborts as fetch does: before the reply, while its body comes, or not at all once the signal is done with", async () => {
    let closed = 0
    await serving(
      (req, res) => {
        req.socket.once("close", () => closed++)
        if (req.url === "/silent") return // never answers
        res.writeHead(200, { "content-type": "application/json" })
        if (req.url === "/half")
          res.write('{"a":') // never ends
        else res.end('{"a":1}')
      },
      async (at) => {
        const fetch = boundedFetch(MiB)
        const reason = new Error("stopped")
        const before = new AbortController()
        const pending = fetch(`${at}/silent`, { signal: before.signal })
        setTimeout(() => before.abort(reason), 20)
        await expect(pending).rejects.toBe(reason)
        const during = new AbortController()
        const half = fetch(`${at}/half`, { signal: during.signal })
        setTimeout(() => during.abort(reason), 20)
        await expect(half).rejects.toBe(reason)
        const already = new AbortController()
        already.abort(reason)
        await expect(fetch(`${at}/whole`, { signal: already.signal })).rejects.toBe(reason)
        // a signal that aborts after its fetch is done touches nothing (the kept-alive connection stays)
        const after = new AbortController()
        expect(await (await fetch(`${at}/whole`, { signal: after.signal })).json()).toEqual({ a: 1 })
        after.abort(reason)
        expect(await (await fetch(`${at}/whole`)).json()).toEqual({ a: 1 })
        await new Promise((resolve) => setTimeout(resolve, 20))
        expect(closed).toBe(2) // the two aborted requests' connections
      }
    )
  })

  it("builds a reply's headers only when they are read, as the Response's own: decoded codings left out", async () => {
    const response = await boundedFetch(MiB)(`${url}/coded/gzip`)
    expect(response).toBeInstanceOf(Response)
    expect([response.ok, response.status, response.type, response.url, response.redirected]).toEqual([
      true,
      200,
      "default",
      "",
      false
    ])
    expect(response.headers).toBe(response.headers)
    expect(response.headers.get("content-type")).toBe("application/json")
    expect(response.headers.get("content-length")).toBeNull()
    expect(Object.prototype.toString.call(response)).toBe("[object Response]")
    const copy = response.clone()
    copy.headers.set("x-copy", "1") // a clone's headers are its own
    expect(response.headers.get("x-copy")).toBeNull()
    expect(await response.json()).toEqual({ ok: true, coding: "gzip" })
    expect(await copy.json()).toEqual({ ok: true, coding: "gzip" })
  })

  it("sends a request once more on a new connection when a kept-alive one was closed under it, before any reply byte", async () => {
    // the server drops every connection's second request unanswered, as a server that closed an idle connection would
    let connections = 0
    const dropping: RequestListener = async (req, res) => {
      const socket = req.socket as typeof req.socket & { served?: number }
      socket.served = (socket.served ?? 0) + 1
      if (socket.served > 1) return void socket.destroy()
      res.end(JSON.stringify({ echo: await bodyOf(req) }))
    }
    await serving(dropping, async (at, own) => {
      own.on("connection", () => connections++)
      const post = (body: string) =>
        boundedFetch(MiB)(`${at}/`, { method: "POST", body, headers: { "content-type": "application/json" } }).then(
          (r) => r.json()
        )
      expect(await post("one")).toEqual({ echo: "one" })
      expect(await post("two")).toEqual({ echo: "two" }) // the kept-alive connection was dropped: sent again, whole
      expect(connections).toBe(2)
    })
  })

  it("follows redirects as fetch does: 307 keeps the method and body, 303 turns into a GET", async () => {
    const seen: Array<string> = []
    const redirecting: RequestListener = async (req, res) => {
      const body = await bodyOf(req)
      seen.push(`${req.method} ${req.url} ${body}`)
      if (req.url === "/307") res.writeHead(307, { location: "/target" }).end()
      else if (req.url === "/303") res.writeHead(303, { location: "/target" }).end()
      else res.end(JSON.stringify({ method: req.method, body }))
    }
    await serving(redirecting, async (at) => {
      expect(await (await boundedFetch(MiB)(`${at}/307`, { method: "POST", body: "x" })).json()).toEqual({
        method: "POST",
        body: "x"
      })
      expect(await (await boundedFetch(MiB)(`${at}/303`, { method: "POST", body: "x" })).json()).toEqual({
        method: "GET",
        body: ""
      })
      expect(seen).toEqual(["POST /307 x", "POST /target x", "POST /303 x", "GET /target "])
    })
  })

  it("goes through HTTP_PROXY when Node is told to use the environment's proxies (NODE_USE_ENV_PROXY=1), as fetch does", async () => {
    const proxied: Array<string> = []
    const proxy: RequestListener = (req, res) => {
      proxied.push(req.url ?? "") // a proxy is sent the absolute URL
      res.end(JSON.stringify({ via: "proxy" }))
    }
    await serving(proxy, async (at) => {
      vi.stubEnv("NODE_USE_ENV_PROXY", "1")
      vi.stubEnv("HTTP_PROXY", at)
      vi.stubEnv("NO_PROXY", "")
      vi.resetModules()
      try {
        const fresh = (await import("./bounded-fetch.ts")).boundedFetch
        expect(await (await fresh(MiB)(`${url}/small`)).json()).toEqual({ via: "proxy" })
        expect(proxied).toEqual([`${url}/small`])
      } finally {
        vi.unstubAllEnvs()
        vi.resetModules()
      }
    })
  })

  it("a 40 MB reply to the OpenAI-compatible provider fails the call with a message that says so, never as unreachable", async () => {
    const model = makeOpenAIModel(openaiSettings("m", { baseURL: `${url}/v1`, timeoutMs: 20_000 }))
    const error = await Effect.runPromise(
      Effect.flip(model.generate({ role: "executor.thought", messages: [{ role: "user", content: "hi" }] }))
    )
    expect(error._tag).toBe("ModelServerError")
    expect(error.message).toContain("larger than 32 MiB")
  })
})
