// MCP servers as tool sources: stdio or Streamable HTTP through the official SDK; each server tool becomes a Tool.

import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { tooDeepMessage, valueNestsDeeper } from "../../llm/nesting.ts"
import { addSecret, redactText, redactValue } from "../../trace/redact.ts"
import { visibleText } from "../../trace/visible-text.ts"
import { version } from "../../version.ts"
import { MCP_ANNOTATIONS } from "../approval.ts"
import { guardToolCall } from "../call.ts"
import { ToolLoadError } from "../load-error.ts"
import type { Tool, ToolResult } from "../tool.ts"
import { parametersFromJsonSchema } from "./json-schema-params.ts"
import { mcpResultToToolResult } from "./mcp-result.ts"
import { sourceLabel, type ToolSourceSpec } from "./source-spec.ts"
import { modelSafeNames } from "./tool-names.ts"

/** Limits of an MCP source, with their defaults in MCP_DEFAULTS. */
export interface McpOptions {
  /** Milliseconds for the server to start and answer `initialize` and `tools/list` (npx may download it first). */
  readonly connectTimeoutMs?: number | undefined
  /** Milliseconds before a tool call is abandoned (the server is told to cancel it) and reported as a timeout. */
  readonly callTimeoutMs?: number | undefined
  /** Where the Authorization variable of HTTP sources (and the variables of `mcpEnv`) are read; the process environment by default. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /**
   * Variables a stdio server gets beside the SDK's safe default set (PATH, HOME, USER, SHELL, TERM, LOGNAME):
   * `NAME` passes this process's value (e.g. NODE_EXTRA_CA_CERTS, HTTPS_PROXY, a token), `NAME=value` sets one.
   */
  readonly mcpEnv?: ReadonlyArray<string> | undefined
}

export const MCP_DEFAULTS = { connectTimeoutMs: 60_000, callTimeoutMs: 60_000 } as const

/** A `--mcp-env` entry that names no variable. */
export class McpEnvSyntaxError extends Error {
  override readonly name = "McpEnvSyntaxError"
}

/**
 * The variables a stdio server gets beside the SDK's default set, from `mcpEnv` entries (`NAME` or
 * `NAME=value`); a named variable this process does not have is left out. Values that look like
 * credentials are registered as secrets, so that a server echoing one never shows it.
 */
export const mcpEnvironment = (
  entries: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>> = process.env
): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const entry of entries) {
    const eq = entry.indexOf("=")
    const name = eq < 0 ? entry.trim() : entry.slice(0, eq).trim()
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new McpEnvSyntaxError(`--mcp-env "${entry}": give a variable name (NODE_EXTRA_CA_CERTS) or NAME=value`)
    const value = eq < 0 ? env[name] : entry.slice(eq + 1)
    if (value === undefined) continue
    if (/TOKEN|KEY|SECRET|PASSWORD|PASSWD|AUTH|CREDENTIAL/i.test(name) || /\/\/[^/\s]*@/.test(value)) addSecret(value)
    out[name] = value
  }
  return out
}

/** Variables that let npm (and a Node server) through a proxy or a TLS-intercepting gateway, which the SDK's default set drops. */
export const NETWORK_ENV = [
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "HTTPS_PROXY",
  "HTTP_PROXY",
  "NO_PROXY",
  "https_proxy",
  "http_proxy",
  "no_proxy",
  "npm_config_registry",
  "npm_config_cafile",
  "npm_config_proxy",
  "npm_config_https_proxy"
] as const

/** Whether a stdio command is a package runner that may download the server first (npx, pnpm dlx, bunx...). */
const isPackageRunner = (command: string) => /^(npx|bunx|pnpx)(\.cmd)?$/i.test(command.replace(/^.*[\\/]/, ""))

type McpSpec = Extract<ToolSourceSpec, { kind: "mcp-stdio" | "mcp-http" }>

/** A connected MCP server and its tools; the connection lives as long as the Scope it was opened in. */
export interface McpServer {
  readonly label: string
  /** The server's own name and version, from its `initialize` answer. */
  readonly serverName: string
  readonly serverVersion: string
  readonly tools: ReadonlyArray<Tool>
  /** Round trip of an MCP ping in ms; fails with the reason when the server no longer answers. */
  readonly ping: Effect.Effect<number, ToolLoadError>
}

/**
 * Stdio servers still running when the process exits (a `process.exit` that skips finalizers) get a
 * SIGTERM here. A hard kill of this process closes their stdin, on which MCP servers exit by the spec.
 */
const liveChildren = new Set<number>()
let exitHookInstalled = false
const trackChild = (pid: number | null) => {
  if (pid === null) return
  liveChildren.add(pid)
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on("exit", () => {
    for (const child of liveChildren)
      try {
        process.kill(child, "SIGTERM")
      } catch {
        // already gone
      }
  })
}

const STDERR_TAIL = 2000

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** The transport for a spec; stdio keeps the tail of the server's stderr to explain a crash. */
const makeTransport = (
  spec: McpSpec,
  env: McpOptions["env"],
  mcpEnv: ReadonlyArray<string>
): { transport: Transport; stderrTail: () => string; pid: () => number | null } => {
  if (spec.kind === "mcp-http") {
    const authorization = (env ?? process.env)[spec.authEnv]
    // whatever the variable is called, its value is never shown, stored, exported or sent to a model
    addSecret(authorization)
    const headers: Record<string, string> = authorization ? { Authorization: authorization } : {}
    return {
      transport: new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers } }),
      stderrTail: () => "",
      pid: () => null
    }
  }
  // the SDK adds its safe default set (PATH, HOME, ...) to what is passed here
  const transport = new StdioClientTransport({
    command: spec.command,
    args: [...spec.args],
    env: mcpEnvironment(mcpEnv, env ?? process.env),
    stderr: "pipe"
  })
  let tail = ""
  transport.stderr?.on("data", (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-STDERR_TAIL)
  })
  // The SDK forgets the process when a failed connect closes it; remember the pid to make sure it is gone.
  let pid: number | null = null
  const start = transport.start.bind(transport)
  transport.start = async () => {
    await start()
    pid = transport.pid
    trackChild(pid)
  }
  return { transport, stderrTail: () => tail.trim(), pid: () => pid }
}

/** Stop a server process that failed to connect: it owes us no graceful shutdown. */
const killChild = (pid: number | null) => {
  if (pid === null) return
  liveChildren.delete(pid)
  try {
    process.kill(pid, "SIGKILL")
  } catch {
    // already gone
  }
}

/** Why a connection failed, with what to do about it. */
const connectFailure = (spec: McpSpec, e: unknown, stderr: string, timeoutMs: number, options: McpOptions): string => {
  const text = errorText(e)
  const said = stderr ? ` The server's stderr ends with: ${stderr.slice(-500)}` : ""
  if (spec.kind === "mcp-stdio" && isPackageRunner(spec.command) && /timed out|timeout/i.test(text)) {
    // behind a proxy or a TLS-intercepting gateway npx waits on the registry until it gives up (60-90 s)
    const env = options.env ?? process.env
    const passed = new Set((options.mcpEnv ?? []).map((v) => v.split("=")[0]!.trim()))
    const dropped = NETWORK_ENV.filter((n) => env[n] !== undefined && !passed.has(n))
    return (
      `${spec.command} did not start the server within ${Math.round(timeoutMs / 1000)} s: it may still be installing the package, or be stuck reaching the npm registry. ` +
      (dropped.length > 0
        ? `Your environment sets ${dropped.join(", ")}, which the server does not get (it gets only PATH, HOME and a few more): pass them with ${dropped.map((n) => `--mcp-env ${n}`).join(" ")} (or "mcp-env" in smurfs.config.json). `
        : "Behind a proxy, pass its variables with --mcp-env HTTPS_PROXY --mcp-env NODE_EXTRA_CA_CERTS. ") +
      `Or install the package once (npm install -g <package>) and name its command instead of ${spec.command}.${said}`
    )
  }
  if (spec.kind === "mcp-stdio" && /ENOENT/.test(text))
    return `the command "${spec.command}" was not found. Check the command line, or install the server (for an npm package: mcp:npx -y <package>).`
  if (/timed out|timeout/i.test(text))
    return `the server did not answer within ${timeoutMs} ms. Check that the command starts an MCP server speaking on ${spec.kind === "mcp-stdio" ? "stdio" : "this URL"}.${said}`
  if (spec.kind === "mcp-http" && /\b401\b|unauthori[sz]ed/i.test(text))
    return `the server refused the credentials (401). Set ${spec.authEnv} to the Authorization header value (e.g. "Bearer <token>").`
  if (spec.kind === "mcp-http" && /fetch failed|ECONNREFUSED|ENOTFOUND/i.test(text))
    return `cannot reach ${spec.url} (${text}). Start the server or check the URL.`
  return `${text}${spec.kind === "mcp-stdio" ? `. The server exited or broke the protocol.${said}` : ""}`
}

/**
 * Bounds of `tools/list`: a server that answers every page with yet another cursor would otherwise be
 * asked forever (one looping on an empty page took a million requests in 90 s).
 */
export const MCP_LIST_LIMITS = { pages: 100, tools: 10_000 } as const

/** A `tools/list` that would not end; its message is the whole reason (no "the server exited"). */
class EndlessListing extends Error {}

/** A cursor for messages: short, and as JSON so that control characters show. */
const showCursor = (cursor: string) => JSON.stringify(cursor.length > 60 ? `${cursor.slice(0, 60)}...` : cursor)

/** The tools of a connected client, every page of `tools/list`, within MCP_LIST_LIMITS and without a repeated cursor. */
const listAllTools = async (client: Client, timeout: number) => {
  const tools: Array<Awaited<ReturnType<Client["listTools"]>>["tools"][number]> = []
  const cursors = new Set<string>()
  let cursor: string | undefined
  for (let pages = 1; ; pages++) {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout })
    tools.push(...page.tools)
    if (tools.length > MCP_LIST_LIMITS.tools)
      throw new EndlessListing(
        `its tools/list gave more than ${MCP_LIST_LIMITS.tools} tools (${pages} pages); a library that large is not usable in a prompt: serve a smaller set`
      )
    cursor = page.nextCursor
    if (cursor === undefined) return tools
    if (cursors.has(cursor))
      throw new EndlessListing(
        `its tools/list repeated the cursor ${showCursor(cursor)} on page ${pages + 1} (${tools.length} tools so far), so the listing would never end: a server bug, fix or update the server`
      )
    cursors.add(cursor)
    if (pages >= MCP_LIST_LIMITS.pages)
      throw new EndlessListing(
        `its tools/list went on for more than ${MCP_LIST_LIMITS.pages} pages (${tools.length} tools so far) and was stopped: a server bug, fix or update the server`
      )
  }
}

/** The SDK's error when one message from a stdio server passes its read buffer; the transport closes after it. */
const OVERSIZED = /ReadBuffer exceeded maximum size of (\d+) bytes/

/** How a connection ended: the server stopped (with the tail of its stderr), or it sent a message too large for the transport. */
interface ConnectionState {
  closed:
    | undefined
    | { readonly kind: "stopped"; readonly stderr: string }
    | { readonly kind: "oversized"; readonly limitBytes: number }
}

interface Connection {
  readonly client: Client
  readonly listed: Awaited<ReturnType<typeof listAllTools>>
  readonly state: ConnectionState
  readonly pid: () => number | null
}

/** Start (or restart) a server, connect and list its tools; a failure stops the process and says why. */
const openConnection = async (
  spec: McpSpec,
  label: string,
  options: McpOptions,
  connectTimeoutMs: number
): Promise<Connection> => {
  const { transport, stderrTail, pid } = makeTransport(spec, options.env, options.mcpEnv ?? [])
  const client = new Client({ name: "smurfs", version })
  const state: ConnectionState = { closed: undefined }
  try {
    await client.connect(transport, { timeout: connectTimeoutMs })
    const listed = await listAllTools(client, connectTimeoutMs)
    // set after connecting: the SDK's own handlers are in place by then and keep running
    let oversizedBytes: number | undefined
    const previousError = client.onerror
    client.onerror = (e) => {
      previousError?.(e)
      const oversized = OVERSIZED.exec(errorText(e))
      if (oversized) oversizedBytes = Number(oversized[1])
    }
    const previous = client.onclose
    client.onclose = () => {
      previous?.()
      state.closed =
        oversizedBytes !== undefined
          ? { kind: "oversized", limitBytes: oversizedBytes }
          : { kind: "stopped", stderr: stderrTail() }
    }
    return { client, listed, state, pid }
  } catch (e) {
    killChild(pid())
    await client.close().catch(() => undefined)
    throw new ToolLoadError({
      source: label,
      reason: e instanceof EndlessListing ? e.message : connectFailure(spec, e, stderrTail(), connectTimeoutMs, options)
    })
  }
}

/** Close a connection: the SDK closes stdin, then sends SIGTERM and SIGKILL to a server that does not exit. */
const closeConnection = async (connection: Connection) => {
  await connection.client.close().catch(() => undefined)
  const child = connection.pid()
  if (child !== null) liveChildren.delete(child)
}

/**
 * Connect to an MCP server and adapt its tools. The connection (and a stdio server's process) is closed
 * when the Scope closes: at the end of a run, on interruption (Ctrl-C) and on failure. A server that
 * crashes later makes its tools return failed results naming the cause; one that stops answering makes
 * them time out. A result larger than the stdio transport accepts closes the connection (the SDK's
 * doing): that call fails saying so and the server is started again, once per run. Nothing the server
 * does fails the run.
 */
export const connectMcp = (
  spec: McpSpec,
  options: McpOptions = {}
): Effect.Effect<McpServer, ToolLoadError, Scope.Scope> => {
  const label = sourceLabel(spec)
  const connectTimeoutMs = options.connectTimeoutMs ?? MCP_DEFAULTS.connectTimeoutMs
  const callTimeoutMs = options.callTimeoutMs ?? MCP_DEFAULTS.callTimeoutMs
  return Effect.gen(function* () {
    const holder = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => ({
          current: await openConnection(spec, label, options, connectTimeoutMs),
          restarts: 0,
          restarting: undefined as Promise<void> | undefined,
          ended: false
        }),
        catch: (e) => (e instanceof ToolLoadError ? e : new ToolLoadError({ source: label, reason: errorText(e) }))
      }),
      (holder) =>
        Effect.promise(async () => {
          holder.ended = true
          await holder.restarting?.catch(() => undefined)
          await closeConnection(holder.current)
        })
    )
    /** Why the server's tools cannot be called, or undefined while they can. */
    const closedReason = (state: ConnectionState): string | undefined => {
      const closed = state.closed
      if (closed === undefined) return undefined
      if (closed.kind === "stopped")
        return `the MCP server ${label} has stopped${closed.stderr ? ` (its stderr ends with: ${closed.stderr.slice(-300)})` : ""}; its tools cannot be called until it is restarted`
      const what = `the MCP server ${label} sent a message larger than the ${Math.round(closed.limitBytes / (1024 * 1024))} MiB its connection accepts (a tool result too large), which closed the connection`
      return holder.restarts === 0
        ? `${what}; the server is restarted for the next calls`
        : `${what}, and it was restarted once already: its tools cannot be called for the rest of the run. Ask its tools for less (a narrower query, a page size), or raise the server's own limits`
    }
    /** The connection to call on: after an oversized message, a restarted server (once per run). */
    const usable = async (): Promise<Connection> => {
      const current = holder.current
      if (current.state.closed?.kind !== "oversized" || holder.restarts > 0 || holder.ended) return current
      holder.restarting ??= (async () => {
        await closeConnection(current)
        try {
          holder.current = await openConnection(spec, label, options, connectTimeoutMs)
        } catch (e) {
          // the old connection stays, closed, with a reason that now says the restart failed too
          current.state.closed = { kind: "stopped", stderr: `restarting it failed: ${errorText(e)}` }
        } finally {
          holder.restarts++
          holder.restarting = undefined
        }
      })()
      await holder.restarting
      return holder.current
    }
    const { listed, client } = holder.current
    // a schema nested deeper than any parameter list needs would overflow every walk of it (redaction, zod)
    const deep = listed.find((t) => valueNestsDeeper(t.inputSchema))
    if (deep)
      return yield* new ToolLoadError({
        source: label,
        reason: `the input schema of its tool "${visibleText(deep.name.slice(0, 80))}" cannot be used: ${tooDeepMessage()}`
      })
    const names = modelSafeNames(listed.map((t) => t.name))
    const server = client.getServerVersion()
    const tools = listed.map((definition, i): Tool => {
      const name = names[i]!
      const call = (args: Record<string, unknown>): Effect.Effect<ToolResult> =>
        guardToolCall(
          name,
          Effect.tryPromise({
            try: async (signal): Promise<ToolResult> => {
              const connection = await usable()
              const closed = closedReason(connection.state)
              if (closed !== undefined) return { ok: false, content: "", error: closed }
              try {
                // the SDK's own timeout is a backstop; the guard fires first and aborts the request
                const result = await connection.client.callTool({ name: definition.name, arguments: args }, undefined, {
                  signal,
                  timeout: callTimeoutMs + 1000
                })
                return mcpResultToToolResult(name, result)
              } catch (e) {
                return {
                  ok: false,
                  content: "",
                  error: `tool "${name}" failed: ${closedReason(connection.state) ?? errorText(e)}`
                }
              }
            },
            catch: (e) => e
          }),
          { timeoutMs: callTimeoutMs }
        )
      return {
        name,
        // a server's own texts reach prompts and terminals: a credential it echoes there is removed first
        description: redactText(
          (definition.description ?? definition.title ?? definition.name).trim() || definition.name
        ),
        parameters: parametersFromJsonSchema(redactValue(definition.inputSchema)),
        call,
        meta: {
          source: label,
          server: server?.name ?? label,
          mcpTool: definition.name,
          ...(definition.annotations ? { [MCP_ANNOTATIONS]: definition.annotations } : {})
        }
      }
    })
    const ping = Effect.tryPromise({
      try: async () => {
        const connection = await usable()
        const closed = closedReason(connection.state)
        if (closed !== undefined) throw new Error(closed)
        const started = performance.now()
        await connection.client.ping({ timeout: Math.min(connectTimeoutMs, 10_000) })
        return performance.now() - started
      },
      catch: (e) => new ToolLoadError({ source: label, reason: `the server does not answer a ping: ${errorText(e)}` })
    })
    return {
      label,
      serverName: server?.name ?? label,
      serverVersion: server?.version ?? "",
      tools,
      ping
    } satisfies McpServer
  })
}
