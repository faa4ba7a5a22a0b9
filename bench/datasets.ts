// StableToolBench query files from any directory: this repository's layout (`queries/`, `query_ids/`) or StableToolBench's own (`solvable_queries/test_instruction/`, `test_query_ids/`).
import { existsSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import * as Effect from "effect/Effect"
import { z } from "zod"
import { BadPathError } from "../src/bad-path.ts"
import { safeName } from "../src/trace/file-names.ts"
import { readFileBounded } from "../src/trace/guarded-fs.ts"

/** The six test groups of StableToolBench's solvable queries, in their usual order. */
export const GROUPS = [
  "G1_instruction",
  "G1_category",
  "G1_tool",
  "G2_instruction",
  "G2_category",
  "G3_instruction"
] as const

/** Where the data lives when no --data is given: the shared copy next to the repo. */
export const DEFAULT_DATA_DIR = "../shared/toolbench"

/** A query file or directory is missing or malformed. */
export class DatasetError extends BadPathError("DatasetError") {}

/** One API doc of a query's `api_list`; the ToolBench adapter reads the rest of its fields. */
export const ApiListItem = z.looseObject({ tool_name: z.string(), api_name: z.string() })
export type ApiListItem = z.infer<typeof ApiListItem>

const QueryItem = z.looseObject({
  query: z.string(),
  query_id: z.union([z.number(), z.string()]),
  api_list: z.array(ApiListItem),
  "relevant APIs": z.array(z.array(z.string())).optional()
})

/** A benchmark query with its group and tool docs. */
export interface BenchQuery {
  readonly group: string
  readonly id: string
  readonly query: string
  readonly apiList: ReadonlyArray<ApiListItem>
  /** `[tool_name, api_name]` pairs of the APIs that solve the query. */
  readonly relevant: ReadonlyArray<readonly [string, string]>
}

export interface DatasetOptions {
  /** The directory holding `queries/` and `query_ids/`. */
  readonly dir: string
  /** Groups to load; all six by default. */
  readonly groups?: ReadonlyArray<string> | undefined
  /** Only these query ids. */
  readonly ids?: ReadonlyArray<string> | undefined
  /** At most this many queries of each group (after the id filters), in file order. */
  readonly limit?: number | undefined
}

const readJson = (path: string, what: string): Effect.Effect<unknown, DatasetError> =>
  Effect.try({
    // through the bounded regular-file reader: a FIFO or /dev/zero in --data is named, never read without end
    try: () => JSON.parse(readFileBounded(path)) as unknown,
    catch: (e) =>
      new DatasetError({
        path,
        problem: `cannot read ${what} (${(e as Error).message.split("\n")[0]})`,
        hint: existsSync(path)
          ? "Fix or replace the file: it must be valid JSON."
          : "Check --data: it must point at a StableToolBench data directory."
      })
  })

/** Where a data directory keeps its files: the folder names differ between our copy and StableToolBench's release. */
export interface DataLayout {
  /** The folder of `<group>.json` query files. */
  readonly queries: string
  /** The folder of `<group>.json` query id files. */
  readonly queryIds: string
  /** Recorded responses (`responses.jsonl`), when the directory has them. */
  readonly responses?: string | undefined
  /** StableToolBench's `tool_response_cache` folder, inside the directory or beside it, when there is one. */
  readonly toolResponseCache?: string | undefined
}

const isDir = (path: string) => existsSync(path) && statSync(path).isDirectory()

/**
 * The layout of a data directory. Accepted: a folder with `queries/` and `query_ids/` (this
 * repository's copy), StableToolBench's `solvable_queries` folder (`test_instruction/`,
 * `test_query_ids/`), or a folder holding `solvable_queries/` (StableToolBench's `data/`). A
 * `tool_response_cache/` in the folder or beside `solvable_queries/`, or in `server/` there (where
 * StableToolBench's README unzips it), is found too.
 */
export const dataLayout = (dir: string): DataLayout => {
  const root = resolve(dir)
  const base = isDir(join(root, "solvable_queries")) ? join(root, "solvable_queries") : root
  const stb = isDir(join(base, "test_instruction"))
  // the release unzips the cache into server/ of a StableToolBench checkout, whose root holds solvable_queries/
  const cache = [
    join(root, "tool_response_cache"),
    join(root, "server", "tool_response_cache"),
    join(base, "..", "tool_response_cache"),
    join(base, "..", "server", "tool_response_cache")
  ].find(isDir)
  const responses = join(root, "responses.jsonl")
  return {
    queries: join(base, stb ? "test_instruction" : "queries"),
    queryIds: join(base, stb ? "test_query_ids" : "query_ids"),
    ...(existsSync(responses) ? { responses } : {}),
    ...(cache ? { toolResponseCache: resolve(cache) } : {})
  }
}

/**
 * The groups whose query file is in a data directory (a folder may hold only some); all six when it holds
 * none, so that loading them says what is missing.
 */
export const groupsIn = (dir: string): Array<(typeof GROUPS)[number]> => {
  const { queries } = dataLayout(dir)
  const present = GROUPS.filter((g) => existsSync(join(queries, `${g}.json`)))
  return present.length > 0 ? present : [...GROUPS]
}

/** The query ids of a group's `query_ids/<group>.json` (its keys), or undefined when the file is absent. */
const loadIds = (dir: string, group: string): Effect.Effect<ReadonlySet<string> | undefined, DatasetError> => {
  const path = join(dataLayout(dir).queryIds, `${group}.json`)
  if (!existsSync(path)) return Effect.succeed(undefined)
  return Effect.flatMap(readJson(path, "the query ids"), (value) =>
    typeof value === "object" && value !== null
      ? Effect.succeed(new Set(Array.isArray(value) ? value.map(String) : Object.keys(value)))
      : Effect.fail(
          new DatasetError({
            path,
            problem: "the query ids must be a JSON object (or list) of ids",
            hint: "Use the file from StableToolBench's solvable_queries/test_query_ids."
          })
        )
  )
}

/**
 * The first id that occurs twice, with both positions (0-based); each id names one task record, so a second one
 * would overwrite it. Ids that differ only in letter case count as the same: on a case-insensitive file system
 * (macOS, Windows) their records would share one file. `other` is the earlier spelling when it differs.
 */
export const firstDuplicateId = (
  ids: ReadonlyArray<string>
): { id: string; other?: string; first: number; second: number } | undefined => {
  const seen = new Map<string, number>()
  for (const [i, id] of ids.entries()) {
    const key = safeName(id).toLowerCase()
    const first = seen.get(key)
    if (first !== undefined)
      return ids[first] === id ? { id, first, second: i } : { id, other: ids[first]!, first, second: i }
    seen.set(key, i)
  }
  return undefined
}

/** How a duplicate reads in an error message. */
export const describeDuplicate = (d: { id: string; other?: string }, noun: string): string =>
  d.other === undefined
    ? `the ${noun} "${d.id}" is used twice`
    : `the ${noun}s "${d.other}" and "${d.id}" differ only in letter case (on macOS and Windows their records would share one file)`

/** Load one group's queries, validated; two queries with one id are refused, never merged. */
export const loadGroup = (dir: string, group: string): Effect.Effect<ReadonlyArray<BenchQuery>, DatasetError> =>
  Effect.gen(function* () {
    const path = join(dataLayout(dir).queries, `${group}.json`)
    if (!existsSync(path))
      return yield* new DatasetError({
        path,
        problem: `there is no query file for the group "${group}"`,
        hint: `Use one of ${GROUPS.join(", ")} with --group, or point --data at a directory with queries/<group>.json or StableToolBench's solvable_queries (test_instruction/<group>.json).`
      })
    const parsed = z.array(QueryItem).safeParse(yield* readJson(path, "the queries"))
    if (!parsed.success)
      return yield* new DatasetError({
        path,
        problem: `not a StableToolBench query file: ${z.prettifyError(parsed.error).split("\n").slice(0, 4).join("; ")}`,
        hint: "Each item needs query, query_id and api_list (StableToolBench's solvable_queries format)."
      })
    const duplicate = firstDuplicateId(parsed.data.map((q) => String(q.query_id)))
    if (duplicate)
      return yield* new DatasetError({
        path,
        problem: `${describeDuplicate(duplicate, "query_id")}, by queries #${duplicate.first + 1} and #${duplicate.second + 1} of the file`,
        hint: "Give each query of a group its own query_id (each id names one task record), then run again."
      })
    const ids = yield* loadIds(dir, group)
    return parsed.data
      .filter((q) => ids === undefined || ids.has(String(q.query_id)))
      .map((q) => ({
        group,
        id: String(q.query_id),
        query: q.query,
        apiList: q.api_list,
        relevant: (q["relevant APIs"] ?? []).filter((p) => p.length >= 2).map((p) => [p[0]!, p[1]!] as const)
      }))
  })

/** Load the queries of the chosen groups, filtered by ids and limited per group. */
export const loadQueries = (options: DatasetOptions): Effect.Effect<ReadonlyArray<BenchQuery>, DatasetError> =>
  Effect.gen(function* () {
    const dir = resolve(options.dir)
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      return yield* new DatasetError({
        path: dir,
        problem: "the data directory does not exist",
        hint: `Pass --data <dir> with queries/<group>.json (StableToolBench's solvable_queries); the default is ${DEFAULT_DATA_DIR} relative to the current directory.`
      })
    const wanted = options.ids ? new Set(options.ids) : undefined
    const groups = yield* Effect.forEach(options.groups ?? GROUPS, (group) => loadGroup(dir, group))
    if (wanted) {
      // a mistyped id would otherwise shrink the run silently
      const known = new Set(groups.flatMap((queries) => queries.map((q) => q.id)))
      const unknown = [...wanted].filter((id) => !known.has(id))
      if (unknown.length > 0)
        return yield* new DatasetError({
          path: dir,
          problem: `no query has the id${unknown.length === 1 ? "" : "s"} ${unknown.slice(0, 10).join(", ")}${unknown.length > 10 ? ", ..." : ""} in ${(options.groups ?? GROUPS).join(", ")}`,
          hint: "Check --ids against the query_id fields of the query files, or add the group that holds them with --group."
        })
    }
    return groups.flatMap((queries) => {
      const chosen = wanted ? queries.filter((q) => wanted.has(q.id)) : queries
      return options.limit === undefined ? chosen : chosen.slice(0, options.limit)
    })
  })

/** A query's tool docs: its whole `api_list`, or only its relevant APIs (`--toolset relevant`). */
export const toolDocsOf = (query: BenchQuery, toolset: "all" | "relevant"): ReadonlyArray<ApiListItem> => {
  if (toolset === "all") return query.apiList
  const relevant = new Set(query.relevant.map(([tool, api]) => `${tool}\u0000${api}`))
  return query.apiList.filter((doc) => relevant.has(`${doc.tool_name}\u0000${doc.api_name}`))
}

/**
 * Longest expected task first (by its number of relevant APIs; stable otherwise): with bounded
 * concurrency, long tasks started last leave slots idle at the end of a run.
 */
export const longestFirst = <Q extends Pick<BenchQuery, "relevant">>(queries: ReadonlyArray<Q>): Array<Q> =>
  queries
    .map((q, i) => [q, i] as const)
    .sort((a, b) => b[0].relevant.length - a[0].relevant.length || a[1] - b[1])
    .map(([q]) => q)
