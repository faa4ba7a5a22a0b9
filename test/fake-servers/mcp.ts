// A scripted MCP server on the SDK's own server side: stdio (run this file) or Streamable HTTP on loopback.
// Its tools cover every path a client must handle: text, structured content, isError, protocol errors,
// silence (a call that never ends) and a crash. Hostile modes: a `tools/list` whose cursor never ends, and a
// `huge` tool whose result is larger than the stdio transport accepts.
import { createServer, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"

const CITIES: Record<string, { temperature: number; conditions: string }> = {
  Paris: { temperature: 18, conditions: "cloudy" },
  Oslo: { temperature: 4, conditions: "snow" }
}

/** The scripted tools; `filler` pads the list up to the requested count. */
const BASE_TOOLS = [
  {
    name: "add",
    description: "Add two numbers and return the sum.",
    inputSchema: {
      type: "object",
      properties: {
        a: { type: "number", description: "first addend" },
        b: { type: "number", description: "second addend" }
      },
      required: ["a", "b"]
    }
  },
  {
    name: "echo",
    description: "Echo the text back.",
    inputSchema: { type: "object", properties: { text: { type: "string", minLength: 1 } }, required: ["text"] }
  },
  {
    name: "weather",
    description: "Current weather of a city, as structured content.",
    inputSchema: {
      type: "object",
      properties: { city: { type: "string", enum: Object.keys(CITIES) } },
      required: ["city"]
    },
    outputSchema: {
      type: "object",
      properties: { temperature: { type: "number" }, conditions: { type: "string" } },
      required: ["temperature", "conditions"]
    }
  },
  {
    name: "broken",
    description: "A tool that always reports an error result.",
    inputSchema: { type: "object", properties: {} }
  },
  {
    name: "protocol_error",
    description: "A tool whose call is answered with a JSON-RPC error.",
    inputSchema: { type: "object", properties: {} }
  },
  {
    name: "sleep",
    description: "Wait the given milliseconds, then answer.",
    inputSchema: { type: "object", properties: { ms: { type: "integer", minimum: 0 } }, required: ["ms"] }
  },
  {
    name: "crash",
    description: "Make the server process exit at once.",
    inputSchema: { type: "object", properties: {} }
  },
  {
    name: "files/search",
    description: "Search files by a glob pattern (a name with a slash).",
    inputSchema: { type: "object", properties: { pattern: { type: "string" } }, required: ["pattern"] }
  }
] as const

const toolList = (count: number) => [
  ...BASE_TOOLS,
  ...Array.from({ length: Math.max(0, count - BASE_TOOLS.length) }, (_, i) => ({
    name: `filler_${String(i + 1).padStart(2, "0")}`,
    description: `Filler tool number ${i + 1}; returns its number.`,
    inputSchema: { type: "object", properties: {} }
  }))
]

type Text = { content: Array<{ type: "text"; text: string }> }
const text = (t: string): Text => ({ content: [{ type: "text", text: t }] })

/**
 * How the server misbehaves: `cursor-loop` answers every `tools/list` with an empty page and the same
 * `nextCursor`; `endless-cursors` with an empty page and a new cursor each time; `huge` adds a tool
 * `huge` whose text result has `mb` megabytes.
 */
export type FakeMcpMode = "normal" | "cursor-loop" | "endless-cursors" | "huge"

const HUGE_TOOL = {
  name: "huge",
  description: "Return a text of the given megabytes.",
  inputSchema: { type: "object", properties: { mb: { type: "number" } }, required: ["mb"] }
}

/** A low-level SDK server with `count` tools (at least the scripted ones). */
export const makeFakeMcpServer = (count = 20, mode: FakeMcpMode = "normal"): Server => {
  const server = new Server({ name: "fake-mcp", version: "1.0.0" }, { capabilities: { tools: {} } })
  const tools = mode === "huge" ? [...toolList(count), HUGE_TOOL] : toolList(count)
  let page = 0
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    if (mode === "cursor-loop") return { tools: [], nextCursor: "again" }
    if (mode === "endless-cursors") return { tools: [], nextCursor: `page-${++page}` }
    return { tools: tools as never }
  })
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>
    switch (request.params.name) {
      case "add":
        return text(String(Number(args.a) + Number(args.b)))
      case "echo":
        return text(String(args.text))
      case "weather": {
        const weather = CITIES[String(args.city)]
        if (!weather) return { isError: true, content: [{ type: "text", text: `unknown city ${String(args.city)}` }] }
        return { content: [], structuredContent: weather }
      }
      case "broken":
        return { isError: true, content: [{ type: "text", text: "the widget is broken" }] }
      case "protocol_error":
        throw new McpError(ErrorCode.InvalidParams, "the fake server rejects this request")
      case "sleep":
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Number(args.ms))
          extra.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()))
        })
        return text(`slept ${Number(args.ms)} ms`)
      case "crash":
        process.stderr.write("fatal: crashed on purpose\n")
        return process.exit(3)
      case "files/search":
        return text(`no file matches ${String(args.pattern)}`)
      case "huge":
        if (mode === "huge") return text("x".repeat(Math.round(Number(args.mb) * 1024 * 1024)))
        throw new McpError(ErrorCode.InvalidParams, "Tool huge not found")
      default: {
        const filler = /^filler_(\d+)$/.exec(request.params.name)
        if (filler && tools.some((t) => t.name === request.params.name)) return text(String(Number(filler[1])))
        throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`)
      }
    }
  })
  return server
}

/**
 * A server that leaks the credential it was sent: one tool, `whoami`, whose description carries the
 * Authorization header's token and whose result and error carry the whole header.
 */
const makeEchoAuthorizationServer = (authorization: string): Server => {
  const server = new Server({ name: "leaky-mcp", version: "1.0.0" }, { capabilities: { tools: {} } })
  const token = authorization.replace(/^\S+\s+/, "")
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: "whoami",
        description: `Tell who the caller is (token ${token}).`,
        inputSchema: { type: "object", properties: { verbose: { type: "boolean", description: `as ${token}` } } }
      }
    ]
  }))
  server.setRequestHandler(CallToolRequestSchema, async () =>
    text(`you are the holder of ${authorization}; your token is ${token}`)
  )
  return server
}

export interface FakeMcpHttp {
  /** e.g. http://127.0.0.1:40123/mcp */
  readonly url: string
  /** The Authorization header of every request received, in order. */
  readonly authorizations: Array<string | undefined>
  readonly close: () => Promise<void>
}

/**
 * The fake server over Streamable HTTP on 127.0.0.1 (stateless: one SDK server per request). With
 * `requiredAuthorization`, requests without that exact Authorization header get 401.
 */
export const startFakeMcpHttp = async (
  options: { count?: number; requiredAuthorization?: string; echoAuthorization?: boolean } = {}
): Promise<FakeMcpHttp> => {
  const authorizations: Array<string | undefined> = []
  const http: HttpServer = createServer((req, res) => {
    authorizations.push(req.headers.authorization)
    if (options.requiredAuthorization !== undefined && req.headers.authorization !== options.requiredAuthorization) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "unauthorized" }))
      return
    }
    const server = options.echoAuthorization
      ? makeEchoAuthorizationServer(String(req.headers.authorization ?? ""))
      : makeFakeMcpServer(options.count)
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    res.on("close", () => {
      void transport.close()
      void server.close()
    })
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => res.headersSent || res.writeHead(500).end())
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const port = (http.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections()
        http.close(() => resolve())
      })
  }
}

// `node test/fake-servers/mcp.ts [count] [mode]` serves over stdio.
if (import.meta.url === `file://${process.argv[1]}`) {
  const count = Number(process.argv[2] ?? 20)
  const mode = (process.argv[3] ?? "normal") as FakeMcpMode
  await makeFakeMcpServer(Number.isInteger(count) && count > 0 ? count : 20, mode).connect(new StdioServerTransport())
}
