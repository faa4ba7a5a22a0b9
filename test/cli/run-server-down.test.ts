// `smurfs run` with no model server: the failure is said once, with what to do, and exit 4.
import { type AddressInfo, createServer } from "node:net"
import { describe, expect, it } from "vitest"
import { smurfs } from "./spawn.ts"

/** A loopback port nobody listens on (it was free a moment ago): connecting is refused. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

describe("smurfs run with no server", () => {
  it('prints the server\'s error once (no "Gave up" line repeating it) and exits 4', async () => {
    const host = `http://127.0.0.1:${await closedPort()}`
    const r = await smurfs(["run", "what is 2+2", "--model", "ollama:m"], { env: { OLLAMA_HOST: host } })
    expect(r.code, r.stderr).toBe(4)
    expect(r.stderr.split(`Cannot reach Ollama at ${host}`).length - 1, r.stderr).toBe(1)
    expect(r.stderr).not.toContain("Gave up")
    expect(r.stderr).toContain("smurfs run: the model server failed, so there is no answer.")
  }, 120_000)
})
