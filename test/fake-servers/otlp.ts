// A loopback OTLP/HTTP collector: records every export request (method and path, content type, body text) and
// answers 200 with an empty JSON object, as a real collector accepts spans.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface OtlpExport {
  /** `POST /v1/traces`. */
  readonly path: string
  readonly contentType: string
  /** The request body as sent (JSON text for the JSON encoding). */
  readonly body: string
}

export interface FakeOtlp {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to: `http://127.0.0.1:<port>`. */
  readonly endpoint: string
  /** Every export received, oldest first; a test may empty it (`length = 0`) between runs. */
  readonly requests: Array<OtlpExport>
  readonly close: () => Promise<void>
}

export const startFakeOtlp = async (): Promise<FakeOtlp> => {
  const requests: Array<OtlpExport> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      requests.push({
        path: `${req.method} ${req.url}`,
        contentType: String(req.headers["content-type"]),
        body: Buffer.concat(chunks).toString("utf8")
      })
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
