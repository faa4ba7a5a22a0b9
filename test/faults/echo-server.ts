// A loopback OpenAI-compatible server whose replies echo the Authorization header it received: a model that leaks its key.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { schemaValueOf } from "../../bench/sim/schema-value.ts"

export interface EchoServer {
  /** The /v1 base URL. */
  readonly baseURL: string
  /** Authorization headers received. */
  readonly authorizations: Array<string>
  /** The body of every request received, as sent. */
  readonly bodies: Array<string>
  readonly close: () => Promise<void>
}

type Schema = Record<string, any>

/** A reply valid for the requested schema, with every free-text field carrying what the server was sent. */
const replyFor = (schema: Schema | undefined, leak: string): unknown => {
  const props: Schema = schema?.["properties"] ?? {}
  if (props["tool"]?.enum && props["arguments"]) {
    // the fused executor's reply (the default loop): the first tool, with the arguments its branch asks for (an empty
    // object without branches), and the thought unless this is the retry after a failed call
    const tool = props["tool"].enum[0]
    const branch = (schema?.["anyOf"] ?? []).find((b: Schema) => b["properties"]?.["tool"]?.enum?.[0] === tool)
    const args: Schema | undefined = branch?.["properties"]?.["arguments"]
    return {
      ...(props["thought"] ? { thought: `Use a tool. ${leak}` } : {}),
      tool,
      arguments: args ? argumentsFor(args, leak) : {}
    }
  }
  if (props["tool"]?.enum) return { tool: props["tool"].enum[0] }
  if (props["subtasks"]) return { subtasks: [`Answer the query (${leak})`] }
  // the fused Answer and Verifier reply (`answerer.verify`) asks for the answer with the verdict
  if (props["status"])
    return { ...(props["answer"] ? { answer: `The answer. ${leak}` } : {}), status: "solved", reason: `fine, ${leak}` }
  if (props["thought"]) return { thought: `Use a tool. ${leak}` }
  if (props["answer"]) return { answer: `The answer. ${leak}` }
  return argumentsFor(schema ?? {}, leak)
}

/** Tool arguments: a valid value, each string argument leaking too. */
const argumentsFor = (schema: Schema, leak: string): unknown =>
  schemaValueOf(schema, (_path, node) => (node["type"] === "string" && !node["enum"] ? `value ${leak}` : undefined))

export interface EchoOptions {
  /** Reply with text that is no JSON at all, holding the header: the structured-output errors then carry it. */
  readonly malformed?: boolean
}

export const startEchoServer = async (options: EchoOptions = {}): Promise<EchoServer> => {
  const authorizations: Array<string> = []
  const bodies: Array<string> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const auth = String(req.headers.authorization ?? "")
      authorizations.push(auth)
      bodies.push(Buffer.concat(chunks).toString("utf8"))
      const leak = `Authorization: ${auth} key=${auth.replace(/^Bearer /, "")}`
      if (req.method === "GET" && req.url?.endsWith("/models")) {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ object: "list", data: [{ id: "test-model", object: "model" }] }))
        return
      }
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res
          .writeHead(404, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { message: `no route ${req.url}` } }))
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}")
      const content = options.malformed
        ? `I cannot answer that. You sent ${leak}`
        : JSON.stringify(replyFor(body.response_format?.json_schema?.schema, leak))
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: "chatcmpl-echo",
          object: "chat.completion",
          created: 0,
          model: body.model ?? "test-model",
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 }
        })
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    authorizations,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
