// Check one tool source as `smurfs doctor --tools` does: it loads, lists its tools, and (MCP) answers a ping.
import * as Effect from "effect/Effect"
import { loadWithPeers, MCP_PEERS } from "../../peer-packages.ts"
import { type LoadSourcesOptions, loadTools } from "../load.ts"
import { ToolLoadError } from "../load-error.ts"
import { parseToolSource } from "./source-spec.ts"

export interface SourceCheck {
  readonly source: string
  readonly ok: boolean
  /** What was found (tools, server, timing) or what went wrong and what to do. */
  readonly detail: string
  readonly tools: number
}

const ms = (n: number) => `${Math.round(n)} ms`

/** Load a source on its own (MCP connections are closed again at once) and report what happened; never fails. */
export const checkToolSource = (source: string, options: LoadSourcesOptions = {}): Effect.Effect<SourceCheck> =>
  Effect.gen(function* () {
    const started = performance.now()
    const spec = (() => {
      try {
        return parseToolSource(source)
      } catch {
        return undefined
      }
    })()
    if (spec && (spec.kind === "mcp-stdio" || spec.kind === "mcp-http")) {
      // the MCP SDK is an optional peer package: loaded here, named with its install command when missing
      const { connectMcp } = yield* loadWithPeers(MCP_PEERS, () => import("./mcp.ts")).pipe(
        Effect.mapError((e) => new ToolLoadError({ source, reason: e.message }))
      )
      const server = yield* connectMcp(spec, options)
      const listed = performance.now() - started
      const ping = yield* server.ping
      return {
        source,
        ok: true,
        tools: server.tools.length,
        detail: `${server.serverName} ${server.serverVersion}: ${server.tools.length} tools listed in ${ms(listed)}, ping ${ms(ping)}`
      } satisfies SourceCheck
    }
    const library = yield* loadTools([source], options)
    return {
      source,
      ok: true,
      tools: library.tools.length,
      detail: `${library.name}: ${library.tools.length} tools loaded in ${ms(performance.now() - started)}`
    } satisfies SourceCheck
  }).pipe(
    Effect.scoped,
    Effect.catch((e) => Effect.succeed<SourceCheck>({ source, ok: false, tools: 0, detail: e.reason }))
  )
