// Recorded tool responses (`responses.jsonl` lines) and an index of them by tool, API and canonical arguments.

import { stringifyOutput } from "../call.ts"
import type { ToolResult } from "../tool.ts"
import { canonicalArgs, parseJsonAsPython, recanonicalize } from "./canonical.ts"
import { pythonRepr } from "./python-repr.ts"
import { writtenKey } from "./written-args.ts"

/** One recorded call, in `responses.jsonl`'s format. */
export interface Recording {
  /** Standardized tool name. */
  readonly tool: string
  /** Standardized API name. */
  readonly api: string
  /** Canonical JSON of the arguments (see canonical.ts). */
  readonly args: string
  /** The raw `{"error": ..., "response": ...}` text the tool server returned. */
  readonly response: string
  /** A label of the response (content kind, error kind, `simulated`). */
  readonly cls?: string | undefined
  /** Times this response was seen. */
  readonly n?: number | undefined
  /** The key of a StableToolBench cache file it came from (`str(tool_input)`), shown as such to a simulator. */
  readonly key?: string | undefined
}

const apiKey = (tool: string, api: string) => `${tool}\u0000${api}`

/** Recordings indexed for replay; the same index feeds the simulated environment its examples. */
export interface ReplayIndex {
  /** Add a recording; for equal keys the one seen more often (then the first) wins. */
  readonly add: (recording: Recording, reprKey?: string) => void
  /** The recording for a call, by canonical arguments, else by the Python repr of the arguments. */
  readonly lookup: (tool: string, api: string, args: Readonly<Record<string, unknown>>) => Recording | undefined
  /** As `lookup`, saying whether the arguments matched exactly or only leniently (empty arguments dropped). */
  readonly lookupMatch?: (
    tool: string,
    api: string,
    args: Readonly<Record<string, unknown>>
  ) => { readonly recording: Recording; readonly match: "exact" | "lenient" } | undefined
  /** Up to `limit` recordings of an API (examples for simulation), in the order they were added. */
  readonly examples: (tool: string, api: string, limit: number) => ReadonlyArray<Recording>
  /** Whether any response of this API is recorded. */
  readonly hasApi: (tool: string, api: string) => boolean
  readonly size: () => number
}

export interface ReplayIndexOptions {
  /**
   * When no recording has exactly these arguments, accept one that differs only by empty arguments
   * (`""` or None: a web API treats them as not given). On by default; exact matches always win.
   */
  readonly looseMatch?: boolean | undefined
  /**
   * `exact`: as StableToolBench's server, a call matches a recording keyed by `str(tool_input)` (a cache folder's)
   * only by that key, the arguments as the model wrote them (`writtenKey`): another key order, `5` against `"5"` or
   * `10` against `10.0` is a miss. A recording with no such key (a `responses.jsonl` line keeps canonical arguments
   * only) matches by its canonical arguments, counted `lenient`. `lenient` (the default): canonical arguments, the
   * repr, whole numbers also as floats, then `looseMatch`.
   */
  readonly match?: ReplayMatch | undefined
}

/** How replay matches a call's arguments with a recording's; run.json records it (`options.replayMatch`). */
export type ReplayMatch = "lenient" | "exact"

/** Canonical arguments without empty values, for loose matching; undefined when nothing was dropped. */
const looseKey = (canonical: string): string | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(canonical)
  } catch {
    return undefined
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined
  const entries = Object.entries(parsed as Record<string, unknown>)
  const kept = entries.filter(([, v]) => v !== "" && v !== "None")
  return `loose:${canonicalArgs(Object.fromEntries(kept))}`
}

/** How an index matches arguments unless told otherwise (`looseMatch` on); runs record it (run.json `options.replayMatch`). */
export const DEFAULT_REPLAY_MATCH: ReplayMatch = "lenient"

export const makeReplayIndex = (options: ReplayIndexOptions = {}): ReplayIndex => {
  const exactOnly = options.match === "exact"
  const looseMatch = !exactOnly && (options.looseMatch ?? true)
  const byApi = new Map<string, Map<string, Recording>>()
  let count = 0
  const add = (recording: Recording, reprKey?: string) => {
    const key = apiKey(recording.tool, recording.api)
    let calls = byApi.get(key)
    if (!calls) byApi.set(key, (calls = new Map()))
    const canonical = recanonicalize(recording.args)
    const loose = looseMatch ? looseKey(canonical) : undefined
    const keys = [
      canonical,
      ...(reprKey === undefined ? [] : [`repr:${reprKey}`]),
      ...(loose === undefined ? [] : [loose])
    ]
    for (const k of keys) {
      const previous = calls.get(k)
      if (!previous) {
        if (k === canonical) count++
        calls.set(k, recording)
      } else if ((recording.n ?? 1) > (previous.n ?? 1)) calls.set(k, recording)
    }
  }
  const lookupMatch = (tool: string, api: string, args: Readonly<Record<string, unknown>>) => {
    const calls = byApi.get(apiKey(tool, api))
    if (!calls) return undefined
    const canonical = canonicalArgs(args)
    if (exactOnly) {
      const keyed = calls.get(`repr:${writtenKey(args) ?? pythonRepr(args)}`)
      if (keyed) return { recording: keyed, match: "exact" as const }
      // a recording without str(tool_input) (responses.jsonl) is found by its canonical arguments: not exact
      const unkeyed = calls.get(canonical)
      return unkeyed !== undefined && unkeyed.key === undefined
        ? { recording: unkeyed, match: "lenient" as const }
        : undefined
    }
    // A whole number may have been recorded as a float (the model wrote 5.0): its key is tried second.
    const exact =
      calls.get(canonical) ??
      calls.get(`repr:${pythonRepr(args)}`) ??
      calls.get(canonicalArgs(args, true)) ??
      calls.get(`repr:${pythonRepr(args, true)}`)
    if (exact) return { recording: exact, match: "exact" as const }
    if (!looseMatch) return undefined
    const loose = looseKey(canonical)
    const recording = loose === undefined ? undefined : calls.get(loose)
    return recording === undefined ? undefined : { recording, match: "lenient" as const }
  }
  return {
    add,
    lookup: (tool, api, args) => lookupMatch(tool, api, args)?.recording,
    lookupMatch,
    examples: (tool, api, limit) => {
      const calls = byApi.get(apiKey(tool, api))
      if (!calls) return []
      return [...new Set(calls.values())].slice(0, limit)
    },
    hasApi: (tool, api) => byApi.has(apiKey(tool, api)),
    size: () => count
  }
}

/**
 * A recorded `{"error": ..., "response": ...}` text as a ToolResult: ok when the error is empty. A
 * recording cut mid-way (not valid JSON) is read by its prefix.
 */
export const parseRecordedResponse = (raw: string): ToolResult => {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    const m = /^\{\s*"error"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"response"\s*:\s*([\s\S]*)$/.exec(raw)
    if (!m) return { ok: true, content: raw }
    const error = JSON.parse(`"${m[1]}"`) as string
    let body = m[2]!.replace(/\}\s*$/, "")
    if (body.startsWith('"')) body = body.slice(1).replace(/"$/, "")
    return error === "" ? { ok: true, content: body } : { ok: false, content: body, error }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return { ok: true, content: stringifyOutput(parsed) }
  const record = parsed as { error?: unknown; response?: unknown }
  const error = record.error === undefined || record.error === null ? "" : stringifyOutput(record.error)
  const content = record.response === undefined || record.response === null ? "" : stringifyOutput(record.response)
  // an object, list, number or null stays one (numbers as recorded: 10.0 is no 10), for the reference profile's json.dumps
  const structured =
    record.response === undefined || typeof record.response === "string"
      ? {}
      : { structured: (parseJsonAsPython(raw) as { response?: unknown }).response }
  return error === "" ? { ok: true, content, ...structured } : { ok: false, content, error, ...structured }
}

/** The `{"error": ..., "response": ...}` text of a ToolResult, as a recording stores it. */
export const formatRecordedResponse = (error: string, response: unknown): string => JSON.stringify({ error, response })

/**
 * A recording's response as a ToolResult with its ledger entry: `replayed`, or `simulated` when a simulator wrote it
 * (stored by an earlier call or run), with how the arguments matched.
 */
export const servedRecording = (found: {
  readonly recording: Recording
  readonly match: "exact" | "lenient"
}): ToolResult => ({
  ...parseRecordedResponse(found.recording.response),
  served: { by: found.recording.cls === "simulated" ? "simulated" : "replayed", match: found.match }
})

/** Look a call up in an index (with its match when the index tells it), as a served ToolResult. */
export const lookupServed = (
  index: ReplayIndex,
  tool: string,
  api: string,
  args: Readonly<Record<string, unknown>>
): ToolResult | undefined => {
  if (index.lookupMatch) {
    const found = index.lookupMatch(tool, api, args)
    return found === undefined ? undefined : servedRecording(found)
  }
  const recording = index.lookup(tool, api, args)
  return recording === undefined ? undefined : servedRecording({ recording, match: "exact" })
}
