// The peer benchmark's stand-in model server, run as a child process so its CPU is not the client's: Ollama's
// /api/chat and the OpenAI-compatible /v1/chat/completions, each task `STEPS` tool calls then an answer.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

import { STEPS } from "./stand-in-replies.ts"

export { STEPS }

let requests = 0

interface ChatBody {
  readonly model?: string
  readonly messages?: ReadonlyArray<{ readonly role: string }>
  readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string } }>
}

/** The next action of a task from its conversation so far: the next tool, then Finish (ReAct) or a text answer (a tool loop). */
const nextAction = (body: ChatBody): { tool: string; args: Record<string, unknown> } | { text: string } => {
  const done = (body.messages ?? []).filter((m) => m.role === "tool").length
  const tools = (body.tools ?? []).map((t) => t.function.name).filter((n) => n !== "Finish")
  if (done < STEPS && tools.length > 0) return { tool: tools[done % tools.length]!, args: { query: `step ${done}` } }
  return body.tools?.some((t) => t.function.name === "Finish")
    ? { tool: "Finish", args: { return_type: "give_answer", final_answer: "done" } }
    : { text: "done" }
}

const ollamaReply = (body: ChatBody) => {
  const action = nextAction(body)
  return {
    model: body.model,
    created_at: new Date().toISOString(),
    message:
      "text" in action
        ? { role: "assistant", content: action.text }
        : { role: "assistant", content: "", tool_calls: [{ function: { name: action.tool, arguments: action.args } }] },
    done: true,
    done_reason: "stop",
    prompt_eval_count: 120,
    eval_count: 20
  }
}

const openaiReply = (body: ChatBody) => {
  const action = nextAction(body)
  return {
    id: `chatcmpl-${requests}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [
      {
        index: 0,
        message:
          "text" in action
            ? { role: "assistant", content: action.text }
            : {
                role: "assistant",
                content: null,
                tool_calls: [
                  {
                    id: `call_${requests}`,
                    type: "function",
                    function: { name: action.tool, arguments: JSON.stringify(action.args) }
                  }
                ]
              },
        finish_reason: "text" in action ? "stop" : "tool_calls"
      }
    ],
    usage: { prompt_tokens: 120, completion_tokens: 20, total_tokens: 140 }
  }
}

const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const send = (value: unknown) => {
      const text = JSON.stringify(value)
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
      res.end(text)
    }
    const body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatBody) : {}
    if (req.url === "/stats") return send({ requests })
    if (req.url === "/api/show") return send({ capabilities: ["completion", "tools"] })
    if (req.url === "/api/version") return send({ version: "0.12.0" })
    if (req.url === "/api/tags") return send({ models: [{ name: "stand-in" }] })
    requests++
    if (req.url === "/api/chat") return send(ollamaReply(body))
    if (req.url === "/v1/chat/completions") return send(openaiReply(body))
    res.writeHead(404).end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`)
})
process.on("disconnect", () => process.exit(0))
