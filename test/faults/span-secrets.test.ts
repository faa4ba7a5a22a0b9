// OTLP export redacts every string of every span (issue 36, point 5): attributes, the status message and exception
// events of a failure whose message carries an Authorization header, whatever put it there.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { otlpLayer } from "../../src/trace/otlp.ts"

const KEY = "sk-proj-QWERTYuiop1234ASDFghjk"

let collector: Server
const bodies: Array<string> = []
let endpoint = ""
beforeAll(async () => {
  collector = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      bodies.push(Buffer.concat(chunks).toString("utf8"))
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
  endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => collector.close(() => resolve())))

class Echoed extends Data.TaggedError("Echoed")<{ readonly reply: string }> {
  override get message() {
    return `the reply was not valid JSON (${this.reply})`
  }
}

describe("spans exported over OTLP", () => {
  it("carry no key in attributes, status or exception events", async () => {
    const failing = Effect.fail(new Echoed({ reply: `echo: Authorization: Bearer ${KEY}` })).pipe(
      Effect.withSpan("LanguageModel.generate", { attributes: { "request.header": `Bearer ${KEY}` } }),
      Effect.ignore
    )
    await Effect.runPromise(
      failing.pipe(Effect.provide(otlpLayer({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, () => undefined)))
    )
    const exported = bodies.join("\n")
    expect(exported).toContain("LanguageModel.generate")
    expect(exported).toContain("exception")
    expect(exported).toContain("[REDACTED]")
    expect(exported).not.toContain("QWERTYuiop")
  })
})
