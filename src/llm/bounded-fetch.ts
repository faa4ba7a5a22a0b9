// A fetch that reads at most a number of bytes of a reply's body: a model server cannot make a run hold gigabytes.
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
 * `fetch` with the body read through a counter: a Content-Length above `limitBytes` fails at once, a
 * streamed body fails as soon as it passes the cap (the connection is cancelled). The reply handed to
 * the client is the same bytes, already read.
 */
export const boundedFetch =
  (limitBytes: number = SIZE_CAPS.replyBytes, base: typeof fetch = fetch): typeof fetch =>
  async (input, init) => {
    const response = await base(input, init)
    const length = response.headers.get("content-length")
    const declared = length === null ? Number.NaN : Number(length)
    if (Number.isFinite(declared) && declared > limitBytes) {
      await response.body?.cancel().catch(() => undefined)
      throw new ReplyTooLarge(limitBytes)
    }
    // A declared length within the cap already bounds the body (the connection delivers no byte more), so
    // the reply passes as it is, unread, unless it is compressed: then the length counts the compressed
    // bytes and the decoded body may be far larger.
    const encoding = response.headers.get("content-encoding")
    if (Number.isFinite(declared) && (encoding === null || encoding.trim().toLowerCase() === "identity")) return response
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
