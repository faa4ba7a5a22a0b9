// A model server that redirects to itself: the message says what happened (too many redirects, where to), not "start the server".
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { smurfs } from "../cli/spawn.ts"

let server: Server
let base = ""
beforeAll(async () => {
  // every request, whatever its path, is sent back to the same URL with 307 (which keeps the method and body)
  server = createServer((req, res) => {
    req.resume()
    res.writeHead(307, { location: req.url ?? "/" }).end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe("a redirect loop from the model server", () => {
  it.each([
    ["ollama", { OLLAMA_HOST: () => base }, "/api/chat"],
    ["openai", { OPENAI_BASE_URL: () => `${base}/v1`, OPENAI_API_KEY: () => "none" }, "/v1/chat/completions"]
  ] as const)(
    "%s: the run fails saying too many redirects and the URL, not that nobody answers",
    async (provider, env, path) => {
      const r = await smurfs(["run", "What is 2 + 3?", "--model", `${provider}:m`, "--tools", "demo"], {
        env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v()]))
      })
      expect(r.code).not.toBe(0)
      expect(r.stderr).toMatch(/too many redirects/i)
      expect(r.stderr).toContain(`${base}${path}`)
      expect(r.stderr).not.toMatch(/cannot reach|ollama serve/i)
    },
    60_000
  )
})
