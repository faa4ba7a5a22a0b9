import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { smurfs } from "../cli/spawn.ts"
import { type FakeOtlp, startFakeOtlp } from "../fake-servers/otlp.ts"
import { type EchoServer, startEchoServer } from "./echo-server.ts"

/** No sk- or key shape: only knowing the value (OPENAI_API_KEY) can redact it. */
const KEY = "plainkeyQWERTYuiopASDFghjk"
const LEAKS = [KEY, "QWERTYuiop", "ASDFghjk"]

let model: EchoServer
let otlp: FakeOtlp

beforeAll(async () => {
  model = await startEchoServer({ malformed: true })
  otlp = await startFakeOtlp()
})
afterAll(async () => {
  await model.close()
  await otlp.close()
})

const leaksIn = (text: string) => LEAKS.filter((leak) => text.includes(leak))

describe("a model server that echoes the key in replies the agents reject", () => {
  it("no span attribute, status or exception event, and no later model request, holds the key", async () => {
    const r = await smurfs(["run", "What is 2 + 3?", "--model", "openai:test-model"], {
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: KEY, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint }
    })
    expect(model.authorizations).toContain(`Bearer ${KEY}`) // the key was really in play
    expect(model.bodies.length).toBeGreaterThan(1) // the rejected replies were reflected back
    expect(model.bodies.some((b) => b.includes("You sent Authorization"))).toBe(true) // ...quoting the echo
    for (const [i, body] of model.bodies.entries()) expect(leaksIn(body), `model request ${i}`).toEqual([])
    expect(leaksIn(r.stderr)).toEqual([])
    expect(otlp.requests.length).toBeGreaterThan(0)
    const exported = otlp.requests.map((q) => q.body).join("\n")
    expect(exported).toContain("exception") // errors were exported, with their messages
    expect(leaksIn(exported)).toEqual([])
  }, 120_000)
})
