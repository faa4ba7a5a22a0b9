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
import { canonicalArgs } from "./environments/canonical.ts"
import type { ToolEnvironment } from "./environments/environment.ts"
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
            if (hit !== undefined) return Effect.succeed({ ...hit, cached: true })
            return Effect.tap(tool.call(args), (result) =>
              Effect.sync(() => {
                if (result.ok || options.cacheErrors === true) store.set(key, result)
              })
            )
          })
      })
      const wrapEnvironment = (env: ToolEnvironment): ToolEnvironment => ({
        name: `cached(${env.name})`,
        serve: (call) =>
          Effect.suspend(() => {
            // Canonical arguments, as recordings are keyed: "5" and 5 are the same call to a web API.
            const key = toolCallKey(`${call.stdTool}.${call.stdApi}`, { args: canonicalArgs(call.args) }, "toolbench")
            const hit = store.get(key)
            if (hit !== undefined) return Effect.succeed({ ...hit, cached: true })
            return Effect.tap(env.serve(call), (result) =>
              Effect.sync(() => {
                if (result !== undefined && (result.ok || options.cacheErrors === true)) store.set(key, result)
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
