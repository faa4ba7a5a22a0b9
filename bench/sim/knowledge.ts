// What the simulated model knows about a ToolBench task: its relevant APIs, their parameters and recorded arguments.
import { join } from "node:path"
import { ApiDoc } from "../../src/tools/toolbench/api-doc.ts"
import {
  functionName,
  standardizeName,
  standardizeParameterName,
  stdApiName,
  stdToolName
} from "../../src/tools/toolbench/names.ts"
import { readFileBounded } from "../../src/trace/guarded-fs.ts"

/** A ToolBench query as the simulated model needs it (the runner's `BenchQuery` fits). */
export interface SimQuery {
  readonly id: string
  readonly query: string
  /** The query's tool docs (`api_list`). */
  readonly apiList: ReadonlyArray<{ readonly tool_name: string; readonly api_name: string }>
  /** `[tool_name, api_name]` pairs of the APIs that solve the query. */
  readonly relevant: ReadonlyArray<readonly [string, string]>
}

/** A relevant API as the model sees it, with the arguments that get a recorded response. */
export interface KnownApi {
  /** The function name shown to models (`<api>_for_<tool>`, last 64 characters). */
  readonly name: string
  readonly toolName: string
  readonly apiName: string
  readonly description: string
  /** Arguments to call it with: a recorded call's (preferring one that returned content), else the doc's defaults. */
  readonly args: Readonly<Record<string, unknown>>
  /** Whether `args` come from a recorded call. */
  readonly recorded: boolean
}

export interface SimTask {
  readonly id: string
  readonly query: string
  /** The relevant APIs, in the query's order. */
  readonly apis: ReadonlyArray<KnownApi>
  /**
   * Every API of the task's tools by function name. Replies about a named tool come from here, not
   * from the relevant list, so that they depend only on the prompt (tasks sharing tools get the same).
   */
  readonly byName: ReadonlyMap<string, KnownApi>
}

interface Recorded {
  readonly args: string
  readonly cls: string
  readonly n: number
}

/** Recorded calls by `<std tool>/<std api>`, read from `responses.jsonl`; a missing file means no recordings. */
export interface Recordings {
  readonly byApi: ReadonlyMap<string, ReadonlyArray<Recorded>>
  readonly file: string
}

export const readRecordings = (dataDir: string): Recordings => {
  const file = join(dataDir, "responses.jsonl")
  const byApi = new Map<string, Array<Recorded>>()
  let text = ""
  try {
    text = readFileBounded(file)
  } catch {
    return { byApi, file }
  }
  for (const line of text.split("\n")) {
    if (line.length === 0) continue
    try {
      const r = JSON.parse(line) as { tool: string; api: string; args: string; cls?: string; n?: number }
      const key = `${r.tool}/${r.api}`
      const list = byApi.get(key) ?? []
      list.push({ args: r.args, cls: r.cls ?? "", n: r.n ?? 1 })
      byApi.set(key, list)
    } catch {
      // a damaged line only loses that recording
    }
  }
  return { byApi, file }
}

const rank = (r: Recorded): number => (r.cls.startsWith("content") ? 2 : r.cls === "empty" ? 1 : 0)

/** The recording to replay: one that returned content, then the most seen. */
const bestRecording = (list: ReadonlyArray<Recorded> | undefined): Recorded | undefined =>
  list?.reduce<Recorded | undefined>(
    (best, r) => (!best || rank(r) > rank(best) || (rank(r) === rank(best) && r.n > best.n) ? r : best),
    undefined
  )

const typed = (value: unknown, type: string | undefined): unknown => {
  const t = (type ?? "").toUpperCase()
  if (typeof value === "string" && t === "NUMBER" && /^-?\d+$/.test(value.trim())) return Number(value)
  if (typeof value === "string" && t === "BOOLEAN" && /^(true|false)$/i.test(value.trim()))
    return value.trim().toLowerCase() === "true"
  return value
}

/** The doc's parameters keyed by the name the tool declares (reserved names get their `is_` prefix). */
const paramsOf = (
  doc: ApiDoc | undefined
): ReadonlyMap<string, ApiDoc["required_parameters"][number] & { required: boolean }> => {
  const out = new Map<string, ApiDoc["required_parameters"][number] & { required: boolean }>()
  for (const p of doc?.required_parameters ?? []) out.set(standardizeParameterName(p.name), { ...p, required: true })
  for (const p of doc?.optional_parameters ?? []) out.set(standardizeParameterName(p.name), { ...p, required: false })
  return out
}

/** Arguments for an API: a recording's, renamed to the declared names and typed by the doc; else the required defaults. */
const argsFor = (doc: ApiDoc | undefined, recording: Recorded | undefined): Record<string, unknown> => {
  const params = paramsOf(doc)
  const out: Record<string, unknown> = {}
  if (recording) {
    let raw: Record<string, unknown> = {}
    try {
      raw = JSON.parse(recording.args) as Record<string, unknown>
    } catch {
      raw = {}
    }
    for (const [key, value] of Object.entries(raw)) {
      const name = params.has(key)
        ? key
        : params.has(standardizeParameterName(key))
          ? standardizeParameterName(key)
          : key
      out[name] = typed(value, params.get(name)?.type)
    }
    return out
  }
  for (const [name, p] of params)
    if (p.required) out[name] = typed(p.default === undefined || p.default === null ? "" : String(p.default), p.type)
  return out
}

/** The task as the simulated model knows it. */
export const simTaskOf = (item: SimQuery, recordings: Recordings): SimTask => {
  const known = (toolName: string, apiName: string): KnownApi => {
    const raw = item.apiList.find((d) => d.tool_name === toolName && d.api_name === apiName)
    const parsed = raw === undefined ? undefined : ApiDoc.safeParse(raw)
    const doc = parsed?.success ? parsed.data : undefined
    const names = { tool_name: toolName, api_name: apiName }
    const recording =
      bestRecording(recordings.byApi.get(`${stdToolName(names)}/${stdApiName(names)}`)) ??
      bestRecording(recordings.byApi.get(`${stdToolName(names)}/${standardizeName(apiName)}`))
    return {
      name: functionName(names),
      toolName,
      apiName,
      description: (doc?.api_description ?? "").replace(/\s+/g, " ").trim(),
      args: argsFor(doc, recording),
      recorded: recording !== undefined
    }
  }
  const byName = new Map<string, KnownApi>()
  for (const doc of item.apiList) {
    const api = known(doc.tool_name, doc.api_name)
    if (!byName.has(api.name)) byName.set(api.name, api)
  }
  const apis = item.relevant.map(
    ([toolName, apiName]) =>
      byName.get(functionName({ tool_name: toolName, api_name: apiName })) ?? known(toolName, apiName)
  )
  return { id: item.id, query: item.query, apis, byName }
}
