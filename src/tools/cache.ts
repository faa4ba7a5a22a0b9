// Tool-call cache: the same tool with the same canonical arguments returns the stored result, optionally kept on disk.
import { join } from "node:path"
import * as Effect from "effect/Effect"
import {
  CACHE_DEFAULTS,
  type CacheOptions,
  type CacheUnavailable,
  hashOf,
  type KeyedStore,
  openStore
} from "../llm/cache.ts"
import { canonicalArgs, jsonText, parseJsonAsPython } from "./environments/canonical.ts"
import type { ToolEnvironment } from "./environments/environment.ts"
import { writtenKey } from "./environments/written-args.ts"
import type { Tool, ToolLibrary, ToolResult } from "./tool.ts"

export interface ToolCacheOptions extends CacheOptions {
  /**
   * Also keep failed results. Off by default because a failure may be passing (a timeout, a busy
   * server); turn it on for environments whose failures are final (replay/offline: "no recorded response").
   */
  readonly cacheErrors?: boolean | undefined
}

export interface ToolCache {
  readonly store: KeyedStore<ToolResult>
  /** The tool with calls answered from the store when the same arguments were seen before. */
  readonly wrapTool: (tool: Tool, scope?: string) => Tool
  /** Every tool of the library wrapped; the library's name scopes the keys, so equal tool names in two libraries do not mix. */
  readonly wrapLibrary: (library: ToolLibrary) => ToolLibrary
  /** A ToolBench environment (chain) whose answers are stored, keyed by tool, API and canonical arguments; misses are not stored. */
  readonly wrapEnvironment: (env: ToolEnvironment) => ToolEnvironment
}

/**
 * A result as the store keeps it: a structured response (numbers as `PythonNumber`s, which JSON lines would not
 * bring back) as its JSON text, numbers as written.
 */
const storable = (result: ToolResult): ToolResult => {
  if (result.structured === undefined) return result
  const { structured, ...rest } = result
  const kept: ToolResult & { structuredJson: string } = { ...rest, structuredJson: jsonText(structured) }
  return kept
}

/** A stored result as a hit, its structured response read back. */
const restored = (stored: ToolResult): ToolResult => {
  const { structuredJson, ...rest } = stored as ToolResult & { structuredJson?: unknown }
  return typeof structuredJson === "string"
    ? { ...rest, structured: parseJsonAsPython(structuredJson), cached: true }
    : { ...rest, cached: true }
}

/** The cache key of a call: scope, tool name and the arguments' canonical JSON. */
export const toolCallKey = (tool: string, args: Record<string, unknown>, scope = ""): string =>
  hashOf({ scope, tool, args })

/** A tool cache over a store opened from `options` (`<dir>/tool-cache.jsonl` when a dir is given). */
export const makeToolCache = (options: ToolCacheOptions = {}): Effect.Effect<ToolCache, CacheUnavailable> =>
  Effect.map(
    openStore<ToolResult>(
      options.dir === undefined ? undefined : join(options.dir, CACHE_DEFAULTS.toolFile),
      options.maxEntries
    ),
    (store) => {
      const wrapTool = (tool: Tool, scope = ""): Tool => ({
        ...tool,
        call: (args) =>
          Effect.suspend(() => {
            const key = toolCallKey(tool.name, args, scope)
            const hit = store.get(key)
            if (hit !== undefined) return Effect.succeed(restored(hit))
            return Effect.tap(tool.call(args), (result) =>
              Effect.sync(() => {
                if (result.ok || options.cacheErrors === true) store.set(key, storable(result))
              })
            )
          })
      })
      const wrapEnvironment = (env: ToolEnvironment): ToolEnvironment => ({
        name: `cached(${env.name})`,
        serve: (call) =>
          Effect.suspend(() => {
            // Canonical arguments, as recordings are keyed: "5" and 5 are the same call to a web API; arguments kept as
            // written (the reference profile's exact replay, str(tool_input)) are a call of their own
            const written = writtenKey(call.args)
            const key = toolCallKey(
              `${call.stdTool}.${call.stdApi}`,
              { args: canonicalArgs(call.args), ...(written === undefined ? {} : { written }) },
              "toolbench"
            )
            const hit = store.get(key)
            if (hit !== undefined) return Effect.succeed(restored(hit))
            return Effect.tap(env.serve(call), (result) =>
              Effect.sync(() => {
                if (result !== undefined && (result.ok || options.cacheErrors === true))
                  store.set(key, storable(result))
              })
            )
          })
      })
      return {
        store,
        wrapTool,
        wrapLibrary: (library) => ({ ...library, tools: library.tools.map((tool) => wrapTool(tool, library.name)) }),
        wrapEnvironment
      }
    }
  )
