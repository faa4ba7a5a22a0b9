// A fake Ollama whose every reply takes SLOW_MS (default 1500) ms, for watching `smurfs run` wait in a terminal: prints its URL, runs until killed.
import { defaultReply } from "../fake-servers/core.ts"
import { startFakeOllama } from "../fake-servers/ollama.ts"

const delayMs = Number(process.env["SLOW_MS"] ?? 1500)
const server = await startFakeOllama((body: { format?: unknown; tools?: [] }) => ({
  ...defaultReply(body.format, body.tools),
  delayMs
}))
console.log(server.url)
