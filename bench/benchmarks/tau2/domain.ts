// A τ² domain as this port holds it (a database schema, tools over it, a policy read from the user's checkout), and
// the tools turned into smurfs `Tool`s that answer as τ²'s environment answers the agent (`Environment.get_response`).
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import { z } from "zod"
import type { Tool } from "../../../src/tools/tool.ts"
import { type PyValue, pyJsonDumps, pyJsonDumpsTo } from "./python-json.ts"

/** τ²'s `ToolType`: what a tool does; only `write` tools change the database (`mutates_state`). */
export type Tau2ToolType = "read" | "write" | "think" | "generic"

/** A `ValueError` of a τ² tool: the message is the text the agent sees after `Error: `. */
export class Tau2ToolError extends Error {}

/** One parameter of a τ² tool, in the order of the Python signature. */
export interface Tau2ParamSpec {
  readonly name: string
  readonly schema: z.ZodType
  /** The parameter's description from the tool's docstring, as docstring_parser reads it. */
  readonly description: string
}

/** One tool of a domain: its Python name, type, description (short and long, as τ² sends it) and implementation. */
export interface Tau2ToolSpec<Db> {
  readonly name: string
  readonly type: Tau2ToolType
  /** `short_desc + "\n\n" + long_desc` of the docstring, as τ²'s `Tool._get_description`. */
  readonly description: string
  readonly params: ReadonlyArray<Tau2ParamSpec>
  /** The Python method: reads and writes `db` in place, returns the value τ² serialises, throws Tau2ToolError. */
  readonly run: (db: Db, args: Record<string, unknown>) => PyValue
}

/** A domain: its name, the Python toolkit class (named in argument errors), its database and tools. */
export interface Tau2DomainSpec<Db> {
  readonly name: string
  /** The toolkit class name, as Python names a method in a TypeError (`RetailTools.get_order_details()`). */
  readonly toolkitClass: string
  /** The database from `db.json` as parsed by `parsePyJson`; throws a ZodError when it does not fit the schema. */
  readonly parseDb: (value: PyValue) => Db
  readonly tools: ReadonlyArray<Tau2ToolSpec<Db>>
}

/** What τ²'s environment hands the agent for a call (`ToolMessage`): the content and whether it is an error. */
export interface Tau2ToolMessage {
  readonly content: string
  readonly error: boolean
}

/** A τ² tool bound to one conversation's database: a smurfs Tool, plus its τ² type and a synchronous `run`. */
export interface Tau2Tool extends Tool {
  readonly type: Tau2ToolType
  /** True for `write` tools, the only ones that change the database. */
  readonly mutatesState: boolean
  /** The call as τ² answers it, synchronously: content serialised as theirs, `Error: ...` on failure. */
  readonly run: (args: Record<string, unknown>) => Tau2ToolMessage
  /** The OpenAI function schema τ² sends for this tool (pydantic's JSON Schema of the parameters). */
  readonly openAiSchema: Readonly<Record<string, unknown>>
}

/** τ²'s `Environment.to_json_str`: strings as they are, anything else as `json.dumps` of its model dump. */
export const toJsonStr = (value: PyValue): string => (typeof value === "string" ? value : pyJsonDumps(value))

/** The canonical text of a database: `json.dumps(db.model_dump(), sort_keys=True)`, as τ²'s `get_dict_hash`. */
export const canonicalDbJson = (db: PyValue): string => pyJsonDumps(db, { sortKeys: true })

/** τ²'s database hash (`get_db_hash`): sha256 hex of the canonical JSON, the same on every run and platform. */
export const dbHash = (db: PyValue): string => {
  const hash = createHash("sha256")
  pyJsonDumpsTo(db, (piece) => hash.update(piece, "utf8"), { sortKeys: true })
  return hash.digest("hex")
}

const quoted = (names: ReadonlyArray<string>): string => {
  const q = names.map((n) => `'${n}'`)
  if (q.length <= 1) return q.join("")
  if (q.length === 2) return `${q[0]} and ${q[1]}`
  return `${q.slice(0, -1).join(", ")}, and ${q[q.length - 1]}`
}

/** Python's TypeError for keyword arguments that do not fit the signature, or undefined when they fit. */
const signatureProblem = (
  owner: string,
  spec: Tau2ToolSpec<unknown>,
  args: Record<string, unknown>
): string | undefined => {
  const names = new Set(spec.params.map((p) => p.name))
  const unexpected = Object.keys(args).find((k) => !names.has(k))
  if (unexpected !== undefined) return `${owner}.${spec.name}() got an unexpected keyword argument '${unexpected}'`
  const missing = spec.params.map((p) => p.name).filter((n) => !(n in args))
  if (missing.length > 0)
    return `${owner}.${spec.name}() missing ${missing.length} required positional argument${missing.length > 1 ? "s" : ""}: ${quoted(missing)}`
  return undefined
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Run one tool as τ²'s environment does: the call, then `Error: <exception>` for any failure, never a throw. */
export const runTau2Tool = <Db>(
  domain: Tau2DomainSpec<Db>,
  spec: Tau2ToolSpec<Db>,
  db: Db,
  args: Record<string, unknown>
): Tau2ToolMessage => {
  // τ² reads a call's arguments into a dict before any tool runs; anything else never reaches a tool
  if (typeof args !== "object" || args === null || Array.isArray(args))
    return { content: `Error: the arguments of ${spec.name} must be a JSON object`, error: true }
  const problem = signatureProblem(domain.toolkitClass, spec as Tau2ToolSpec<unknown>, args)
  if (problem !== undefined) return { content: `Error: ${problem}`, error: true }
  for (const p of spec.params) {
    const parsed = p.schema.safeParse(args[p.name])
    if (!parsed.success)
      return {
        content: `Error: argument '${p.name}' of ${spec.name}: ${parsed.error.issues[0]?.message ?? "invalid value"}`,
        error: true
      }
  }
  try {
    return { content: toJsonStr(spec.run(db, args)), error: false }
  } catch (e) {
    return { content: `Error: ${messageOf(e)}`, error: true }
  }
}

const title = (name: string): string =>
  name
    .split("_")
    .map((w) => (w.length === 0 ? w : w[0]?.toUpperCase() + w.slice(1)))
    .join(" ")

/** The JSON Schema type pydantic writes for a parameter: a string or a list of strings in the domains ported. */
const jsonTypeOf = (schema: z.ZodType): Record<string, unknown> => {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>
  const { $schema: _, ...rest } = json
  // zod bounds an int to the safe integers; pydantic writes a Python int as a bare `"type": "integer"`
  if (rest["type"] === "integer" && rest["maximum"] === Number.MAX_SAFE_INTEGER) {
    delete rest["maximum"]
    delete rest["minimum"]
  }
  return rest
}

/** τ²'s `Tool.openai_schema` of a tool: its description and pydantic's JSON Schema of its parameters. */
const openAiSchemaOf = (spec: Tau2ToolSpec<unknown>): Record<string, unknown> => {
  const properties: Record<string, unknown> = {}
  for (const p of spec.params) {
    const { type, items, ...more } = jsonTypeOf(p.schema)
    properties[p.name] = {
      description: p.description,
      ...(items === undefined ? {} : { items }),
      ...more,
      title: title(p.name),
      ...(type === undefined ? {} : { type })
    }
  }
  const required = spec.params.map((p) => p.name)
  return {
    type: "function",
    function: {
      name: spec.name,
      description: spec.description,
      parameters: {
        properties,
        ...(required.length > 0 ? { required } : {}),
        title: "parameters",
        type: "object"
      }
    }
  }
}

/** The tools of `domain` bound to `db` (one conversation's database: calls read and write it in place). */
/** What a tool spec shows the model, built once per spec (binding tools to a database is per conversation). */
interface Shown {
  readonly parameters: z.ZodObject<z.ZodRawShape>
  readonly openAiSchema: Readonly<Record<string, unknown>>
}
const shownCache = new WeakMap<object, Shown>()
const shownOf = (spec: Tau2ToolSpec<unknown>): Shown => {
  const cached = shownCache.get(spec)
  if (cached !== undefined) return cached
  const shown: Shown = {
    parameters: z.object(
      Object.fromEntries(spec.params.map((p) => [p.name, p.schema.describe(p.description)]))
    ) as unknown as z.ZodObject<z.ZodRawShape>,
    openAiSchema: openAiSchemaOf(spec)
  }
  shownCache.set(spec, shown)
  return shown
}

export const bindTau2Tools = <Db>(domain: Tau2DomainSpec<Db>, db: Db): ReadonlyArray<Tau2Tool> =>
  domain.tools.map((spec): Tau2Tool => {
    const run = (args: Record<string, unknown>) => runTau2Tool(domain, spec, db, args)
    const shown = shownOf(spec as Tau2ToolSpec<unknown>)
    return {
      name: spec.name,
      description: spec.description,
      parameters: shown.parameters,
      type: spec.type,
      mutatesState: spec.type === "write",
      run,
      openAiSchema: shown.openAiSchema,
      meta: { tau2: { domain: domain.name, type: spec.type } },
      call: (args) =>
        Effect.sync(() => {
          const message = run(args)
          return message.error
            ? { ok: false, content: message.content, error: message.content.replace(/^Error: /, "") }
            : { ok: true, content: message.content }
        })
    }
  })

/** Call a tool by name as τ²'s toolkit does (`use_tool`): an unknown name is `Error: Tool '<name>' not found.`. */
export const callTau2Tool = (
  tools: ReadonlyArray<Tau2Tool>,
  name: string,
  args: Record<string, unknown>
): Tau2ToolMessage => {
  const tool = tools.find((t) => t.name === name)
  if (tool === undefined) return { content: `Error: Tool '${name}' not found.`, error: true }
  return tool.run(args)
}
