// Reading a τ² domain from the user's checkout (`--tau2 <dir>`, τ²'s layout data/tau2/domains/<domain>/...): the
// policy, the tasks and the database, each validated, through the bounded regular-file reader.
import { existsSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { z } from "zod"
import { BadPathError } from "../../../src/bad-path.ts"
import { readFileBounded } from "../../../src/trace/guarded-fs.ts"
import { bindTau2Tools, callTau2Tool, dbHash, type Tau2DomainSpec, type Tau2Tool } from "./domain.ts"
import { tau2DomainNames, tau2DomainSpec } from "./domains.ts"
import { copyCollections, freezePy, type PyValue, parsePyJson } from "./python-json.ts"
import { Tau2TaskSplits as TaskSplitsSchema, type Tau2Task, Tau2TaskFile, type Tau2TaskSplits } from "./tasks.ts"

/** A file of the user's τ² checkout that cannot be used: which file, what is wrong, what to do. */
export class Tau2DataError extends BadPathError("Tau2DataError") {}

/**
 * One τ² domain ready to run: its policy and tasks as they ship, a fresh database per conversation (`freshDb` is a
 * deep copy each time, never shared), and its tools bound to a database.
 */
export interface Tau2Domain {
  readonly name: string
  /** The folder the domain was read from (data/tau2/domains/<name> of the checkout). */
  readonly dir: string
  /** policy.md as it ships: the agent's system prompt. */
  readonly policy: string
  readonly tasks: ReadonlyArray<Tau2Task>
  /** split_tasks.json (`train`, `test`, `base`), when the checkout has it. */
  readonly splits: Tau2TaskSplits | undefined
  /**
   * db.json as loaded, for one conversation: each call returns a new database. Its parts are shared with other copies
   * only while frozen (read-only); the tools copy an order or a user before they write it, so no conversation sees
   * another's writes. Change a database only through its tools.
   */
  readonly freshDb: () => unknown
  /** The database a task's conversation starts from: a fresh one with the task's initial state applied. */
  readonly initialDb: (task: Tau2Task) => unknown
  /** The domain's tools over `db`; their calls read and write `db` in place. */
  readonly tools: (db: unknown) => ReadonlyArray<Tau2Tool>
  /** τ²'s hash of a database (sha256 of its canonical JSON). */
  readonly hashDb: (db: unknown) => string
  readonly spec: Tau2DomainSpec<unknown>
}

const HINT =
  "Point --tau2 at a checkout of τ²-bench (its data/tau2/domains/<domain>/ files), e.g. `smurfs data pull tau2`"

const describeZod = (error: z.ZodError): string => {
  const issue = error.issues[0]
  if (issue === undefined) return "does not fit τ²'s schema"
  const where = issue.path.length > 0 ? ` at ${issue.path.map(String).join(".")}` : ""
  return `does not fit τ²'s schema${where}: ${issue.message}${error.issues.length > 1 ? ` (and ${error.issues.length - 1} more problems)` : ""}`
}

const readText = (path: string, what: string): string => {
  try {
    return readFileBounded(path)
  } catch (e) {
    const code = (e as { code?: unknown }).code
    throw new Tau2DataError({
      path,
      problem: code === "ENOENT" ? `no ${what} here` : `cannot read the ${what}: ${(e as Error).message}`,
      hint: HINT
    })
  }
}

const parseWith = <T>(path: string, parse: () => T): T => {
  try {
    return parse()
  } catch (e) {
    if (e instanceof Tau2DataError) throw e
    const problem =
      e instanceof z.ZodError ? describeZod(e) : `is not valid JSON (${e instanceof Error ? e.message : String(e)})`
    throw new Tau2DataError({ path, problem, hint: HINT })
  }
}

/** The task's initial state applied to `db`: τ²'s `initialization_actions` (tool calls); other parts refused. */
const applyInitialState = (spec: Tau2DomainSpec<unknown>, dir: string, task: Tau2Task, db: unknown): void => {
  const state = task.initial_state
  if (state === null || state === undefined) return
  const unsupported =
    (state.initialization_data?.agent_data ?? state.initialization_data?.user_data) != null
      ? "initialization_data"
      : (state.message_history?.length ?? 0) > 0
        ? "message_history"
        : undefined
  if (unsupported !== undefined)
    throw new Tau2DataError({
      path: join(dir, "tasks.json"),
      problem: `task ${task.id} sets ${unsupported} in its initial state, which this port does not replay`,
      hint: "Run the tasks without it, or report it as an issue"
    })
  const tools = bindTau2Tools(spec, db)
  for (const call of state.initialization_actions ?? []) {
    const message = callTau2Tool(tools, call.func_name, call.arguments)
    if (message.error)
      throw new Tau2DataError({
        path: join(dir, "tasks.json"),
        problem: `task ${task.id}'s initialization action ${call.func_name} failed: ${message.content}`,
        hint: "Check the task file against the database"
      })
  }
}

/** Read a domain synchronously; throws Tau2DataError. `loadTau2Domain` is the Effect of it. */
export const loadTau2DomainSync = (checkout: string, domain: string): Tau2Domain => {
  const spec = tau2DomainSpec(domain)
  if (spec === undefined)
    throw new Tau2DataError({
      path: checkout,
      problem: `no τ² domain "${domain}" in this port`,
      hint: `Choose one of: ${tau2DomainNames().join(", ")}`
    })
  const dir = join(checkout, "data", "tau2", "domains", domain)
  // a τ² checkout without this domain (a wrong --tau2 path is named by its first missing file below)
  if (existsSync(join(checkout, "data", "tau2", "domains")) && !existsSync(dir))
    throw new Tau2DataError({
      path: dir,
      problem: `no folder of τ²'s ${domain} domain here (the checkout has no data/tau2/domains/${domain}/)`,
      hint: `Use a τ²-bench checkout that ships the ${domain} domain, or choose another domain (${tau2DomainNames().join(", ")})`
    })
  const policy = readText(join(dir, "policy.md"), "policy (policy.md)")
  const tasksPath = join(dir, "tasks.json")
  const tasks = parseWith(tasksPath, () => Tau2TaskFile.parse(JSON.parse(readText(tasksPath, "task file"))))
  const ids = new Set<string>()
  for (const task of tasks) {
    if (ids.has(task.id))
      throw new Tau2DataError({ path: tasksPath, problem: `task id ${task.id} appears twice`, hint: HINT })
    ids.add(task.id)
  }
  const splitsPath = join(dir, "split_tasks.json")
  // optional: a checkout without splits runs all its tasks
  const splitsText = existsSync(splitsPath) ? readText(splitsPath, "task splits (split_tasks.json)") : undefined
  const splits: Tau2TaskSplits | undefined =
    splitsText === undefined ? undefined : parseWith(splitsPath, () => TaskSplitsSchema.parse(JSON.parse(splitsText)))
  const dbPath = join(dir, "db.json")
  const pristine = parseWith(dbPath, () => spec.parseDb(parsePyJson(readText(dbPath, "database (db.json)"))))
  const frozen = freezePy(pristine)
  const freshDb = () => copyCollections(frozen)
  return {
    name: domain,
    dir,
    policy,
    tasks,
    splits,
    freshDb,
    initialDb: (task) => {
      const db = freshDb()
      applyInitialState(spec, dir, task, db)
      return db
    },
    tools: (db) => bindTau2Tools(spec, db),
    hashDb: (db) => dbHash(db as PyValue),
    spec
  }
}

/**
 * Load τ²'s `domain` ("retail", "airline") from the user's checkout `checkout` (the folder holding data/tau2/domains/...):
 * policy.md, tasks.json (zod-typed τ² tasks), split_tasks.json when present, and db.json validated against the
 * domain's schema. Fails with Tau2DataError (bad input) naming the file.
 */
export const loadTau2Domain = (checkout: string, domain: string): Effect.Effect<Tau2Domain, Tau2DataError> =>
  Effect.try({
    try: () => loadTau2DomainSync(checkout, domain),
    catch: (e) =>
      e instanceof Tau2DataError
        ? e
        : new Tau2DataError({ path: checkout, problem: e instanceof Error ? e.message : String(e), hint: HINT })
  })
