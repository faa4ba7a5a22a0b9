// Load a tool library from sources: `demo`, a JS/TS module, a StableToolBench api_list JSON file, MCP servers.
import { existsSync } from "node:fs"
import { extname, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { loadWithPeers, MCP_PEERS } from "../peer-packages.ts"
import { readFileBounded } from "../trace/guarded-fs.ts"

import { type Approval, withApproval } from "./approval.ts"
import { demoLibrary } from "./demo/index.ts"
import { chainEnvironments } from "./environments/chain.ts"
import type { ToolEnvironment } from "./environments/environment.ts"
import { makeOfflineEnvironment, type OfflineMode } from "./environments/offline.ts"
import { loadReplayIndex, makeReplayEnvironment } from "./environments/replay.ts"
import { makeToolLibrary } from "./library.ts"
import { ToolLoadError } from "./load-error.ts"
import { combineLibraries } from "./sources/combine.ts"
import type { McpOptions, McpServer } from "./sources/mcp.ts"
import { parseToolSource } from "./sources/source-spec.ts"
import { describeSyntaxError } from "./syntax-location.ts"
import type { Tool, ToolLibrary } from "./tool.ts"
import { type ToolbenchToolOptions, toolbenchLibrary } from "./toolbench/adapter.ts"

export { ToolLoadError }

export interface LoadToolsOptions extends ToolbenchToolOptions {
  /** For an api_list file: a `responses.jsonl` to replay calls from (else calls are answered offline). */
  readonly responses?: string | undefined
  /** For an api_list file: a StableToolBench cache folder to replay calls from. */
  readonly cacheDir?: string | undefined
  /** For an api_list file holding several queries: which query's APIs to take (default: the first). */
  readonly queryId?: string | number | undefined
  /** For an api_list file: what the offline fallback answers on a miss. */
  readonly offlineMode?: OfflineMode | undefined
  /** For an api_list file: serve calls with this environment instead of replay/offline. */
  readonly environment?: ToolEnvironment | undefined
}

const MODULE_EXTENSIONS = [".ts", ".mts", ".js", ".mjs", ".cts", ".cjs"]

const isTool = (x: unknown): x is Tool =>
  typeof x === "object" &&
  x !== null &&
  typeof (x as Tool).name === "string" &&
  typeof (x as Tool).call === "function" &&
  typeof (x as Tool).parameters === "object"

const isLibrary = (x: unknown): x is ToolLibrary =>
  typeof x === "object" &&
  x !== null &&
  typeof (x as ToolLibrary).name === "string" &&
  Array.isArray((x as ToolLibrary).tools)

/** A module's tools: its default export or its `tools` export, a ToolLibrary or an array of Tools. */
const libraryFromModule = (
  source: string,
  name: string,
  module: Record<string, unknown>
): Effect.Effect<ToolLibrary, ToolLoadError> =>
  Effect.try({
    try: () => {
      for (const candidate of [module.default, module.tools]) {
        if (isLibrary(candidate)) return makeToolLibrary(candidate.name, candidate.tools)
        if (Array.isArray(candidate) && candidate.length > 0) {
          const bad = candidate.findIndex((t) => !isTool(t))
          if (bad >= 0) throw new Error(`element ${bad} of its tools is not a Tool (build tools with defineTool)`)
          return makeToolLibrary(name, candidate as Tool[])
        }
      }
      throw new Error(
        "the module exports no tools: export default a ToolLibrary or an array of Tools (or export const tools = [...])"
      )
    },
    catch: (e) => new ToolLoadError({ source, reason: (e as Error).message })
  })

const loadModule = (source: string, path: string): Effect.Effect<ToolLibrary, ToolLoadError> =>
  Effect.tryPromise({
    try: () => import(pathToFileURL(path).href) as Promise<Record<string, unknown>>,
    catch: (e) => {
      const syntax = describeSyntaxError(path, e)
      return new ToolLoadError({
        source,
        reason: syntax
          ? `${syntax}. Fix the module and run again.`
          : `the module threw while loading: ${(e as Error)?.message ?? String(e)}`
      })
    }
  }).pipe(
    Effect.flatMap((module) => libraryFromModule(source, path.replace(/^.*[\\/]/, "").replace(/\.[^.]+$/, ""), module))
  )

/** The api_list inside an api_list file: an array of docs, a query with `api_list`, or a list of queries. */
const apiListOf = (
  source: string,
  data: unknown,
  queryId: string | number | undefined
): { apiList: unknown[]; name: string } => {
  const fail = (reason: string): never => {
    throw new ToolLoadError({ source, reason })
  }
  const isQuery = (x: unknown): x is { api_list: unknown[]; query_id?: unknown } =>
    typeof x === "object" && x !== null && Array.isArray((x as { api_list?: unknown }).api_list)
  if (isQuery(data)) return { apiList: data.api_list, name: `toolbench:${String(data.query_id ?? "query")}` }
  if (!Array.isArray(data))
    return fail("the JSON is neither an api_list (array of API docs), a query with api_list, nor a list of queries")
  if (data.length === 0) return fail("the JSON array is empty: it holds no API docs")
  if (isQuery(data[0])) {
    const query =
      queryId === undefined ? data[0] : data.find((q) => isQuery(q) && String(q.query_id) === String(queryId))
    if (!isQuery(query)) return fail(`no query with query_id ${String(queryId)} in the file`)
    return { apiList: query.api_list, name: `toolbench:${String(query.query_id ?? "query")}` }
  }
  return { apiList: data, name: "toolbench" }
}

const loadApiList = (
  source: string,
  path: string,
  options: LoadToolsOptions
): Effect.Effect<ToolLibrary, ToolLoadError> =>
  Effect.gen(function* () {
    const data = yield* Effect.try({
      try: () => JSON.parse(readFileBounded(path)) as unknown,
      catch: (e) =>
        new ToolLoadError({
          source,
          reason: e instanceof SyntaxError ? `the JSON is malformed (${e.message})` : (e as Error).message
        })
    })
    const { apiList, name } = yield* Effect.try({
      try: () => apiListOf(source, data, options.queryId),
      catch: (e) => (e instanceof ToolLoadError ? e : new ToolLoadError({ source, reason: String(e) }))
    })
    const env =
      options.environment ??
      (yield* Effect.gen(function* () {
        const offline = makeOfflineEnvironment(options.offlineMode ?? "error")
        if (!options.responses && !options.cacheDir) return chainEnvironments([offline])
        const index = yield* loadReplayIndex({
          responses: options.responses ? [options.responses] : [],
          cacheDirs: options.cacheDir ? [options.cacheDir] : []
        }).pipe(Effect.mapError((e) => new ToolLoadError({ source, reason: e.message })))
        return chainEnvironments([makeReplayEnvironment(index), offline])
      }))
    return yield* Effect.try({
      try: () => toolbenchLibrary(name, apiList as never, env, options),
      catch: (e) => new ToolLoadError({ source, reason: `an API doc is invalid: ${(e as Error).message}` })
    })
  })

/**
 * Load a tool library. `demo` is the built-in demo library; a path ending in .ts/.js/.mjs... is a module
 * (default export or `tools` export: a ToolLibrary or an array of Tools); a .json path is a StableToolBench
 * api_list, served by a replay environment when `options.responses`/`cacheDir` are given, else offline.
 */
export const loadToolLibrary = (
  source: string,
  options: LoadToolsOptions = {}
): Effect.Effect<ToolLibrary, ToolLoadError> =>
  Effect.suspend(() => {
    if (source === "demo") return Effect.succeed(demoLibrary())
    if (/^mcp(:|\+https?:)/i.test(source.trim()))
      return Effect.fail(
        new ToolLoadError({
          source,
          reason: "an MCP server stays connected while its tools are used: load it with loadTools (inside a Scope)"
        })
      )
    const path = resolve(source)
    if (!existsSync(path))
      return Effect.fail(
        new ToolLoadError({
          source,
          reason: `the path ${path} does not exist (use "demo", a .ts/.js module, or an api_list .json file)`
        })
      )
    const ext = extname(path).toLowerCase()
    if (MODULE_EXTENSIONS.includes(ext)) return loadModule(source, path)
    if (ext === ".json") return loadApiList(source, path, options)
    return Effect.fail(
      new ToolLoadError({
        source,
        reason: `unknown kind of file "${ext}": use a .ts/.js module or an api_list .json file`
      })
    )
  })

export interface LoadSourcesOptions extends LoadToolsOptions, McpOptions {
  /** Which calls of MCP tools that may change things are made (`--approve`); every call when not given. */
  readonly approval?: Approval | undefined
}

/** The prefix of a source's tools when names clash: the MCP server's own name, else the library's. */
const prefixOf = (library: ToolLibrary, server?: McpServer): string =>
  (server?.serverName ?? library.name).replace(/^.*[\\/]/, "")

/**
 * Load and combine tool sources (each a `--tools` value): `demo`, a module, an api_list file,
 * `mcp:<command>` (stdio) or `mcp+http(s)://...` (Streamable HTTP). MCP connections live until the
 * Scope closes, which stops their server processes. Tool names shared by two sources are prefixed
 * with their source's name.
 */
export const loadTools = (
  sources: ReadonlyArray<string>,
  options: LoadSourcesOptions = {}
): Effect.Effect<ToolLibrary, ToolLoadError, Scope.Scope> =>
  Effect.gen(function* () {
    if (sources.length === 0)
      return yield* new ToolLoadError({
        source: "--tools",
        reason: "no source was given; use demo, a module, an api_list .json, mcp:<command> or mcp+http(s)://..."
      })
    const named = yield* Effect.forEach(sources, (source) =>
      Effect.gen(function* () {
        const spec = yield* Effect.try({
          try: () => parseToolSource(source),
          catch: (e) => new ToolLoadError({ source, reason: (e as Error).message })
        })
        if (spec.kind === "mcp-stdio" || spec.kind === "mcp-http") {
          // The MCP SDK (an optional peer package) is loaded only when an MCP source is given: `import "smurfs"` stays light.
          const { connectMcp } = yield* loadWithPeers(MCP_PEERS, () => import("./sources/mcp.ts")).pipe(
            Effect.mapError((e) => new ToolLoadError({ source, reason: e.message }))
          )
          const server = yield* connectMcp(spec, options)
          const library = yield* Effect.try({
            try: () =>
              makeToolLibrary(
                server.serverName,
                options.approval ? server.tools.map((t) => withApproval(t, options.approval!)) : server.tools
              ),
            catch: (e) => new ToolLoadError({ source, reason: (e as Error).message })
          })
          return { prefix: prefixOf(library, server), library }
        }
        const library = yield* loadToolLibrary(spec.kind === "demo" ? "demo" : spec.path, options)
        return { prefix: prefixOf(library), library }
      })
    )
    return combineLibraries(named)
  })
