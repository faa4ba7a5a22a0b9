// The environment ledger of a run: how every tool call was served (replayed, simulated, missed, failed), summed per
// method for run.json, and the environment a run's calls were served by, so that compare never mixes two unawares.
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { z } from "zod"
import { DEFAULT_REPLAY_MATCH } from "../src/tools/environments/recorded.ts"
import { dataOf, isKind } from "../src/trace/events.ts"
import { readFileBounded } from "../src/trace/guarded-fs.ts"
import type { RunEvent } from "../src/trace/record.ts"
import { readRecord } from "./run-dir.ts"
import { RunConfig, runConfigPath } from "./run-format.ts"

/** Tool calls by how they were served: one method's sum over its records (run.json `ledger.<method>`). */
export const ToolLedger = z.object({
  toolCalls: z.number(),
  /** Answered by a recording whose arguments matched exactly. */
  replayed: z.number(),
  /**
   * Answered by a recording that matched only leniently: once empty arguments were dropped, or (exact replay, the
   * reference profile) by canonical arguments where the recording keeps no `str(tool_input)` (responses.jsonl).
   */
  replayedLenient: z.number(),
  /** Answered by a simulator model (in this run, or stored by an earlier one). */
  simulated: z.number(),
  /** Nothing recorded or simulated them: they failed (the offline environment's answer). */
  missed: z.number(),
  /** The simulator could not produce a response. */
  failed: z.number(),
  /** Tools no environment serves (modules, MCP) and calls of records older than the ledger. */
  direct: z.number(),
  /** Simulators that answered calls in this run (`<spec> · <texts>`), with their calls. */
  simulators: z.record(z.string(), z.number())
})
export type ToolLedger = z.infer<typeof ToolLedger>

export const emptyLedger = (): ToolLedger => ({
  toolCalls: 0,
  replayed: 0,
  replayedLenient: 0,
  simulated: 0,
  missed: 0,
  failed: 0,
  direct: 0,
  simulators: {}
})

/** Add the tool calls of `events` (a record's, sub-agents' calls included) to `ledger`. */
export const addToLedger = (ledger: ToolLedger, events: ReadonlyArray<RunEvent>): ToolLedger => {
  for (const event of events) {
    if (!isKind(event, "tool_call")) continue
    const d = dataOf(event, "tool_call")
    ledger.toolCalls++
    const served = d.served ?? (d.missed ? "missed" : undefined)
    if (served === "replayed") {
      if (d.match === "lenient") ledger.replayedLenient++
      else ledger.replayed++
    } else if (served === "simulated") {
      ledger.simulated++
      if (d.simulator !== undefined) ledger.simulators[d.simulator] = (ledger.simulators[d.simulator] ?? 0) + 1
    } else if (served === "missed") ledger.missed++
    else if (served === "failed") ledger.failed++
    else ledger.direct++
  }
  return ledger
}

const dirs = (dir: string) =>
  existsSync(dir) ? readdirSync(dir).filter((d) => statSync(join(dir, d)).isDirectory()) : []

/** Add one ledger to another (`from`'s simulators in their order, as adding its events one by one would). */
export const mergeLedger = (into: ToolLedger, from: ToolLedger): ToolLedger => {
  into.toolCalls += from.toolCalls
  into.replayed += from.replayed
  into.replayedLenient += from.replayedLenient
  into.simulated += from.simulated
  into.missed += from.missed
  into.failed += from.failed
  into.direct += from.direct
  for (const [name, calls] of Object.entries(from.simulators))
    into.simulators[name] = (into.simulators[name] ?? 0) + calls
  return into
}

/** A record's share of the ledger as the run wrote it (see bench/record-summary.ts), when the run knows it. */
export type KnownLedger = (
  path: string
) => { readonly method: string; readonly result: boolean; readonly ledger: ToolLedger } | undefined

/**
 * The ledger of a run directory per method, over its records of finished tasks (an `error` record is no result),
 * every agent run included. Records are read one at a time; those `known` (written by this process) are not read.
 */
export const runLedger = (run: string, known?: KnownLedger): Record<string, ToolLedger> => {
  const ledgers: Record<string, ToolLedger> = {}
  const tasks = join(run, "tasks")
  for (const methodDir of dirs(tasks))
    for (const group of dirs(join(tasks, methodDir)))
      for (const file of readdirSync(join(tasks, methodDir, group)).filter((f) => f.endsWith(".json"))) {
        const path = join(tasks, methodDir, group, file)
        const summary = known?.(path)
        if (summary !== undefined) {
          if (summary.result) mergeLedger((ledgers[summary.method] ??= emptyLedger()), summary.ledger)
          continue
        }
        const record = readRecord(path)
        if (record === undefined || record.finishType === "error") continue
        addToLedger((ledgers[record.method] ??= emptyLedger()), record.events)
      }
  return ledgers
}

/** The tool environment a run's calls were served by: what decides which calls replay, and who answers the rest. */
export interface RunEnvironment {
  /** The environment chain, in order (`replay,simulated`). */
  readonly chain: string
  /** The recorded responses replayed (`responses.jsonl`), or none. */
  readonly responses: string | null
  /** StableToolBench's tool_response_cache replayed, or none. */
  readonly cacheDir: string | null
  /** The simulator (model and texts), or none. */
  readonly simulator: string | null
  /** How replay matches arguments: `lenient` (empty arguments may be dropped) or `exact`. */
  readonly replayMatch: string
}

const text = (value: unknown): string | null => (typeof value === "string" ? value : null)

/** A run's environment from its run.json. */
export const environmentOf = (config: RunConfig): RunEnvironment => {
  const simulator = config.options["simulator"] as { model?: unknown; prompts?: unknown } | undefined
  return {
    chain: config.envs.join(","),
    responses: text(config.options["responses"]),
    cacheDir: text(config.options["cacheDir"]),
    simulator:
      config.envs.includes("simulated") && simulator !== undefined
        ? `${String(simulator.model)} · ${String(simulator.prompts)}`
        : null,
    replayMatch: text(config.options["replayMatch"]) ?? DEFAULT_REPLAY_MATCH
  }
}

/** A run directory's environment, or undefined when it has no readable run.json (not our run). */
export const runEnvironment = (run: string): RunEnvironment | undefined => {
  try {
    const parsed = RunConfig.safeParse(JSON.parse(readFileBounded(runConfigPath(run))))
    return parsed.success ? environmentOf(parsed.data) : undefined
  } catch {
    return undefined
  }
}

const FIELDS: ReadonlyArray<readonly [keyof RunEnvironment, string]> = [
  ["chain", "environment chain (--env)"],
  ["responses", "recorded responses (--responses)"],
  ["cacheDir", "tool response cache (--cache-dir)"],
  ["simulator", "simulator (--simulator, its texts)"],
  ["replayMatch", "replay leniency"]
]

/** How two environments differ, one phrase per field ("simulator (...): none vs ollama:x · smurfs"); empty when alike. */
export const environmentDifferences = (a: RunEnvironment, b: RunEnvironment): Array<string> =>
  FIELDS.filter(([key]) => a[key] !== b[key]).map(
    ([key, name]) => `${name}: ${a[key] ?? "none"} vs ${b[key] ?? "none"}`
  )
