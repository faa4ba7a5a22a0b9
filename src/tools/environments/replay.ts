// The replay environment: recorded responses from `responses.jsonl` files and StableToolBench cache folders.
import { createReadStream, existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import * as Effect from "effect/Effect"
import { openRegularFile, readFileBounded } from "../../trace/guarded-fs.ts"
import { parseAppendedLines } from "../../trace/jsonl.ts"
import { redactText } from "../../trace/redact.ts"
import { visibleText } from "../../trace/visible-text.ts"
import { parseCacheFile } from "./cache-store.ts"
import { canonicalArgs, jsonText, parseJsonAsPython } from "./canonical.ts"
import { ToolEnvError, type ToolEnvironment } from "./environment.ts"
import { parsePythonLiteral } from "./python-repr.ts"
import { lookupServed, makeReplayIndex, type Recording, type ReplayIndex } from "./recorded.ts"

/** Where a environment's warnings go by default: stderr, redacted, control characters shown visibly. */
export const warnOnStderr = (line: string): void => console.error(visibleText(redactText(`smurfs: ${line}`)))

const isRecording = (row: Partial<Recording> | null): row is Recording =>
  typeof row?.tool === "string" &&
  typeof row.api === "string" &&
  typeof row.args === "string" &&
  typeof row.response === "string"

/**
 * Read a store this project appended recordings to (the simulated environment's): a line that does not parse
 * is the torn write of an interrupted run and is skipped, so a run killed mid-write still resumes.
 */
export const loadAppendedRecordings = (index: ReplayIndex, file: string): Effect.Effect<number, ToolEnvError> =>
  Effect.try({
    try: () => {
      let read = 0
      for (const row of parseAppendedLines(readFileBounded(file)).entries as ReadonlyArray<Partial<Recording> | null>) {
        if (!isRecording(row)) continue
        index.add({ tool: row.tool, api: row.api, args: row.args, response: row.response, cls: row.cls, n: row.n })
        read++
      }
      return read
    },
    catch: (e) => new ToolEnvError({ environment: "replay", reason: `cannot read ${file}: ${(e as Error).message}` })
  })

/** Read a `responses.jsonl` file line by line into the index; returns the number of recordings read. */
export const loadResponsesJsonl = (index: ReplayIndex, file: string): Effect.Effect<number, ToolEnvError> =>
  Effect.tryPromise({
    try: async () => {
      if (!existsSync(file)) throw new Error(`the file ${file} does not exist`)
      // a regular file only: a FIFO or /dev/zero given as --responses is named, never read without end
      const fd = openRegularFile(file)
      const lines = createInterface({ input: createReadStream("", { fd, encoding: "utf8" }), crlfDelay: Infinity })
      let read = 0
      let lineNo = 0
      for await (const line of lines) {
        lineNo++
        if (line.trim() === "") continue
        let row: Partial<Recording>
        try {
          row = JSON.parse(line) as Partial<Recording>
        } catch {
          throw new Error(`${file}:${lineNo} is not a JSON line`)
        }
        if (!isRecording(row))
          throw new Error(`${file}:${lineNo} lacks one of the string fields tool, api, args, response`)
        index.add({ tool: row.tool, api: row.api, args: row.args, response: row.response, cls: row.cls, n: row.n })
        read++
      }
      return read
    },
    catch: (e) => new ToolEnvError({ environment: "replay", reason: (e as Error).message })
  })

/**
 * Read a StableToolBench cache folder, `<Category>/<std_tool>_for_<Category>/<std_api>.json`, each file a
 * dict keyed by the Python repr of the decoded arguments. Keys are indexed canonically when they parse,
 * and by their exact repr always.
 */
export const loadCacheDir = (
  index: ReplayIndex,
  dir: string,
  warn: (line: string) => void = warnOnStderr
): Effect.Effect<number, ToolEnvError> =>
  Effect.try({
    try: () => {
      if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`the folder ${dir} does not exist`)
      let read = 0
      for (const category of readdirSync(dir)) {
        const categoryDir = join(dir, category)
        if (!statSync(categoryDir).isDirectory()) continue
        const suffix = `_for_${category}`
        for (const toolDir of readdirSync(categoryDir)) {
          const toolPath = join(categoryDir, toolDir)
          if (!statSync(toolPath).isDirectory()) continue
          const tool = toolDir.endsWith(suffix) ? toolDir.slice(0, -suffix.length) : toolDir
          for (const file of readdirSync(toolPath)) {
            if (!file.endsWith(".json")) continue
            const api = file.slice(0, -".json".length)
            // a torn or corrupt file (a full disk, another tool) costs its API's recordings, never the run
            let entries: Record<string, unknown> | string
            try {
              // numbers kept as written: a response's 10.0 reaches a reference observation as 10.0
              entries = parseCacheFile(readFileBounded(join(toolPath, file)), parseJsonAsPython)
            } catch (e) {
              entries = `unreadable (${(e as Error).message})`
            }
            if (typeof entries === "string") {
              warn(
                `warning: skipped the cache file ${join(toolPath, file)}: it is ${entries}; its API's responses are simulated again (the simulator sets the file aside when it next writes there)`
              )
              continue
            }
            for (const [key, response] of Object.entries(entries)) {
              const decoded = parsePythonLiteral(key)
              const args =
                typeof decoded === "object" && decoded !== null && !Array.isArray(decoded)
                  ? canonicalArgs(decoded as Record<string, unknown>)
                  : `repr:${key}`
              index.add(
                {
                  tool,
                  api,
                  args,
                  response: typeof response === "string" ? response : jsonText(response),
                  cls: "cache",
                  key
                },
                key
              )
              read++
            }
          }
        }
      }
      return read
    },
    catch: (e) => new ToolEnvError({ environment: "replay", reason: (e as Error).message })
  })

export interface ReplayStats {
  readonly hits: number
  readonly misses: number
}

export interface ReplayEnvironment extends ToolEnvironment {
  readonly index: ReplayIndex
  /** Hits and misses so far. */
  readonly stats: () => ReplayStats
}

/** Serve calls from an index; a call that was never recorded is a miss. */
export const makeReplayEnvironment = (index: ReplayIndex, name = "replay"): ReplayEnvironment => {
  let hits = 0
  let misses = 0
  return {
    name,
    index,
    stats: () => ({ hits, misses }),
    serve: (call) =>
      Effect.sync(() => {
        const served = lookupServed(index, call.stdTool, call.stdApi, call.args)
        if (!served) {
          misses++
          return undefined
        }
        hits++
        return served
      })
  }
}

/** Where recordings come from; any mix. */
export interface ReplaySources {
  /** `responses.jsonl` files (tool, api, canonical args, raw response). */
  readonly responses?: ReadonlyArray<string> | undefined
  /** StableToolBench cache folders. */
  readonly cacheDirs?: ReadonlyArray<string> | undefined
  /** Stores this project appended recordings to (torn lines of an interrupted run are skipped). */
  readonly stores?: ReadonlyArray<string> | undefined
  /** Told what was skipped (a corrupt cache file); stderr by default. */
  readonly warn?: ((line: string) => void) | undefined
}

/** Build an index from files and folders. */
export const loadReplayIndex = (
  sources: ReplaySources,
  index: ReplayIndex = makeReplayIndex()
): Effect.Effect<ReplayIndex, ToolEnvError> =>
  Effect.gen(function* () {
    for (const file of sources.responses ?? []) yield* loadResponsesJsonl(index, file)
    for (const dir of sources.cacheDirs ?? []) yield* loadCacheDir(index, dir, sources.warn)
    for (const file of sources.stores ?? []) yield* loadAppendedRecordings(index, file)
    return index
  })
