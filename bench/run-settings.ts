// Which settings a resumed run must share with the run it continues: those that change its tasks or their results.
import { profileRecord } from "../src/agents/profile.ts"
import { MODEL_DEFAULTS } from "../src/llm/spec.ts"
import { DEFAULT_REPLAY_MATCH } from "../src/tools/environments/recorded.ts"
import type { RunConfig } from "./run-format.ts"

/** Options that change how fast a run goes, never what it produces: a resume may change them. */
const OPERATIONAL_OPTIONS: ReadonlySet<string> = new Set([
  "modelConcurrency",
  "slotAffinity",
  "lanes",
  "laneGraceMs",
  "timeoutMs",
  "callCache",
  "stopAfter",
  "fullTrace",
  "forcedResumes"
])

/** Options recorded since a later version: a run that does not record one ran with this value (so resuming it at the defaults is no difference). */
const IMPLICIT_OPTIONS: Readonly<Record<string, unknown>> = {
  profile: profileRecord("improved", undefined, {}),
  temperature: MODEL_DEFAULTS.temperature,
  seed: MODEL_DEFAULTS.seed,
  seeds: "fixed",
  numCtx: MODEL_DEFAULTS.numCtx,
  // runs from before --executor ran the paper's three requests per step
  executor: "three-call",
  replayMatch: DEFAULT_REPLAY_MATCH,
  // before --stb-tools each tool was described by its first API's description
  toolDescriptions: "api-list"
}

const show = (value: unknown): string => (value === undefined ? "(not set)" : JSON.stringify(value))

/** Lists whose order does not matter (methods, groups, ids); environments are tried in order, so their order counts. */
const asSet = (values: ReadonlyArray<string> | undefined) =>
  values === undefined ? undefined : [...new Set(values)].sort()

/** Each method's toolset, methods sorted; a run before per-method toolsets gave every method the run's. */
const toolsetsOf = (config: RunConfig) =>
  Object.fromEntries([...config.methods].sort().map((m) => [m, config.toolsets?.[m] ?? config.toolset]))

/**
 * The differences between the settings a run was started with and those a resume asks for, one
 * line each ("model: the run has ..., this command asks for ..."); empty when the resume matches.
 */
export const settingsDiff = (recorded: RunConfig, requested: RunConfig): Array<string> => {
  const top: Array<[string, unknown, unknown]> = [
    ["model", recorded.model, requested.model],
    ["data", recorded.data, requested.data],
    ["methods (--method)", asSet(recorded.methods), asSet(requested.methods)],
    ["groups (--group)", asSet(recorded.groups), asSet(requested.groups)],
    ["environments (--env)", recorded.envs, requested.envs],
    ["toolset (--toolset)", recorded.toolset, requested.toolset],
    // a run before per-method toolsets gave every method the run's
    ["each method's toolset (--method-toolset, --profile)", toolsetsOf(recorded), toolsetsOf(requested)],
    ["--limit", recorded.limit, requested.limit],
    ["--ids", asSet(recorded.ids), asSet(requested.ids)]
  ]
  // Smurfs' executor matters only to a run with smurfs (a react run recorded one before it was left out)
  const smurfs = recorded.methods.includes("smurfs") || requested.methods.includes("smurfs")
  const keys = [...new Set([...Object.keys(recorded.options), ...Object.keys(requested.options)])]
    .filter((k) => !OPERATIONAL_OPTIONS.has(k) && k !== "runs" && (smurfs || k !== "executor"))
    .sort()
  const options: Array<[string, unknown, unknown]> = keys.map((k) => [
    k,
    k in recorded.options ? recorded.options[k] : IMPLICIT_OPTIONS[k],
    requested.options[k]
  ])
  // more agent runs (or fewer) continue a run when the runs both have keep their seeds
  const runs: Array<[string, unknown, unknown]> = runSeedsAgree(recorded, requested)
    ? []
    : [["agent runs (--runs / --seeds)", runSeedsOf(recorded), runSeedsOf(requested)]]
  return [...top, ...options, ...runs]
    .filter(([, a, b]) => JSON.stringify(a) !== JSON.stringify(b))
    .map(([name, a, b]) => `${name}: the run has ${show(a)}, this command asks for ${show(b)}`)
}

/** The seeds of a run's agent runs (run.json `options.runs`; absent: one run with `options.seed`). */
export const runSeedsOf = (config: RunConfig): Array<number> => {
  const runs = config.options["runs"]
  if (Array.isArray(runs) && runs.every((s) => typeof s === "number")) return runs as Array<number>
  const seed = config.options["seed"]
  return [typeof seed === "number" ? seed : MODEL_DEFAULTS.seed]
}

/** Whether the agent runs both configs name have the same seeds (one may have more runs than the other). */
const runSeedsAgree = (a: RunConfig, b: RunConfig): boolean => {
  const x = runSeedsOf(a)
  const y = runSeedsOf(b)
  return x.slice(0, y.length).every((seed, i) => seed === y[i])
}
