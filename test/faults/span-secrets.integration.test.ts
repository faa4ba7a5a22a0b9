// A model server that echoes the request's Authorization header in replies the agents cannot use (issue 36, point 5):
// the errors that carry the reply reach OTLP spans (status, exception events) redacted, and the key is never sent
// back to the model inside its own echoed reply (the guardrail's reflection quotes the reply).
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { smurfs } from "../cli/spawn.ts"
import { type EchoServer, startEchoServer } from "./echo-server.ts"

/** No sk- or key shape: only knowing the value (OPENAI_API_KEY) can redact it. */
const KEY = "plainkeyQWERTYuiopASDFghjk"
const LEAKS = [KEY, "QWERTYuiop", "ASDFghjk"]

let model: EchoServer
let otlp: Server
const spans: Array<string> = []
let otlpEndpoint = ""

beforeAll(async () => {
  model = await startEchoServer({ malformed: true })
  otlp = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      spans.push(Buffer.concat(chunks).toString("utf8"))
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => otlp.listen(0, "127.0.0.1", resolve))
  otlpEndpoint = `http://127.0.0.1:${(otlp.address() as AddressInfo).port}`
})
afterAll(async () => {
  await model.close()
  await new Promise<void>((resolve) => otlp.close(() => resolve()))
})

const leaksIn = (text: string) => LEAKS.filter((leak) => text.includes(leak))

describe("a model server that echoes the key in replies the agents reject", () => {
  it("no span attribute, status or exception event, and no later model request, holds the key", async () => {
    const r = await smurfs(["run", "What is 2 + 3?", "--model", "openai:test-model"], {
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: KEY, OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint }
    })
    expect(model.authorizations).toContain(`Bearer ${KEY}`) // the key was really in play
    expect(model.bodies.length).toBeGreaterThan(1) // the rejected replies were reflected back
    expect(model.bodies.some((b) => b.includes("You sent Authorization"))).toBe(true) // ...quoting the echo
    for (const [i, body] of model.bodies.entries()) expect(leaksIn(body), `model request ${i}`).toEqual([])
    expect(leaksIn(r.stderr)).toEqual([])
    expect(spans.length).toBeGreaterThan(0)
    const exported = spans.join("\n")
    expect(exported).toContain("exception") // errors were exported, with their messages
    expect(leaksIn(exported)).toEqual([])
  }, 120_000)
})
